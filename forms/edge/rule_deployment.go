package edge

import (
	"fmt"
	"strconv"
)

// Deployment rule IDs (spec/host-api-v1alpha3.md §6.3, §6.5). Pointers are into WorkerDeployment's
// desired spec.
const (
	RuleDeploymentVersionCount = "edge.deployment.version-count"
	RuleDeploymentWeightRange  = "edge.deployment.weight-range"
	RuleDeploymentWeightSum    = "edge.deployment.weight-sum"
	RuleDeploymentDuplicate    = "edge.deployment.version-duplicate"
)

// Deployment limits (spec/host-api-v1alpha3.md §6.3): weights are basis points.
const (
	DeploymentMaxVersions = 8
	DeploymentMinWeight   = 1
	DeploymentTotalWeight = 10000
)

// CheckDeploymentWeights checks the weights of WorkerDeployment "versions",
// in entry order, as basis points (spec/host-api-v1alpha3.md §6.3, §6.5): 1..8 entries, each 1..10000,
// summing to exactly 10000.
// Errors: RuleDeploymentVersionCount at "/versions"; RuleDeploymentWeightRange
// at "/versions/<index>/weight"; RuleDeploymentWeightSum at "/versions" with
// the actual sum. Version identity (same worker, Ready) is decided on
// resolved UIDs elsewhere; duplicates by CheckDeploymentVersionNames.
func CheckDeploymentWeights(weights []int64) error {
	if n := len(weights); n < 1 || n > DeploymentMaxVersions {
		return newRuleError(RuleDeploymentVersionCount, "/versions", fmt.Sprintf(
			"versions has %d entries; list 1 to %d weighted versions", n, DeploymentMaxVersions))
	}
	var sum int64
	for i, w := range weights {
		if w < DeploymentMinWeight || w > DeploymentTotalWeight {
			return newRuleError(RuleDeploymentWeightRange, "/versions/"+strconv.Itoa(i)+"/weight", fmt.Sprintf(
				"weight %d is outside %d..%d basis points; give every listed version a share from %d to %d, or remove it",
				w, DeploymentMinWeight, DeploymentTotalWeight, DeploymentMinWeight, DeploymentTotalWeight))
		}
		sum += w
	}
	if sum != DeploymentTotalWeight {
		return newRuleError(RuleDeploymentWeightSum, "/versions", fmt.Sprintf(
			"weights sum to %d basis points; they must sum to exactly %d (100%%), adjust them by %+d",
			sum, DeploymentTotalWeight, DeploymentTotalWeight-sum))
	}
	return nil
}

// CheckDeploymentVersionNames refuses a deployment that names one
// WorkerVersion twice (spec/host-api-v1alpha3.md §6.5: each version appears once); names are the
// versions' workerVersion relation names, in order (names resolve in the
// deployment's own space, so one name is one UID). An aggregate rule
// (AggregateRule): the host refuses it at apply and import, not at prepare
// (spec/conformance-probe.md §3); the provider at plan time.
func CheckDeploymentVersionNames(names []string) error {
	seen := map[string]int{}
	for i, n := range names {
		if j, dup := seen[n]; dup {
			return newRuleError(RuleDeploymentDuplicate, fmt.Sprintf("/versions/%d/workerVersion", i),
				fmt.Sprintf("versions/%d and versions/%d both name WorkerVersion %q; list each version once and give it the summed weight", j, i, n))
		}
		seen[n] = i
	}
	return nil
}
