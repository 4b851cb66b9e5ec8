package edge

import (
	"errors"

	"github.com/takoform/takoform/forms/edge/source"
)

// The two Edge groups (Form apiVersions). The rules of this package apply
// to every definition version of either group, each family on its own: a
// relation never crosses from one group to the other, so a rule that looks
// at related resources looks them up in the group of the resource it
// judges (spec/lane-v1beta1.md §6.3, §6.5; repo decision 0054).
const (
	// GroupV1alpha1 is the family served on lane v1alpha3
	// (spec/host-api-v1alpha3.md §6.3).
	GroupV1alpha1 = source.GroupV1alpha1
	// GroupV1beta1 is the family served on lane v1beta1
	// (spec/lane-v1beta1.md §6.3).
	GroupV1beta1 = source.GroupV1beta1
)

// Group is GroupV1alpha1, the Edge group of lane v1alpha3. Code that
// recognises an Edge resource asks IsGroup, and names a resource's
// relations in that resource's own group; Group remains for the callers
// that still speak lane v1alpha3 only (the provider's default create
// family, the CLI's --group default, the conformance runtime checks).
const Group = GroupV1alpha1

// Groups lists the Edge groups, oldest first.
func Groups() []string { return []string{GroupV1alpha1, GroupV1beta1} }

// IsGroup reports whether apiVersion is one of the Edge groups.
func IsGroup(apiVersion string) bool {
	return apiVersion == GroupV1alpha1 || apiVersion == GroupV1beta1
}

// SpecRules applies every rule of an Edge kind that is decidable from the
// desired spec alone (spec/host-api-v1alpha3.md §3.4 (3)): cron grammar (WorkerCronTrigger),
// hostname canonical form and U-label refusal (WorkerCustomDomain),
// handler vocabulary and the single environment namespace
// (WorkerVersion), deployment weights (WorkerDeployment). The host calls
// it to enforce and the provider to refuse at plan time; spec is a decoded
// desired spec (numbers json.Number or float64). It returns nil when the
// spec breaks none.
func SpecRules(kind string, spec map[string]any) []*RuleError {
	var errs []error
	switch kind {
	case "WorkerCronTrigger":
		if c, ok := spec["cron"].(string); ok {
			_, err := ParseCron(c)
			errs = append(errs, err)
		}
	case "WorkerCustomDomain":
		if h, ok := spec["hostname"].(string); ok {
			_, err := CanonicalHostname(h)
			errs = append(errs, err)
		}
	case "WorkerVersion":
		var hs []string
		for _, h := range specList(spec["handlers"]) {
			s, _ := h.(string)
			hs = append(hs, s)
		}
		errs = append(errs, CheckHandlers(hs), CheckEnvironmentNamespace(spec))
	case "WorkerDeployment":
		var ws []int64
		var names []string
		for _, v := range specList(spec["versions"]) {
			m, _ := v.(map[string]any)
			ws = append(ws, specInt(m["weight"]))
			wv, _ := m["workerVersion"].(map[string]any)
			n, _ := wv["name"].(string)
			names = append(names, n)
		}
		errs = append(errs, CheckDeploymentWeights(ws), CheckDeploymentVersionNames(names))
	}
	var out []*RuleError
	for _, err := range errs {
		var re *RuleError
		if errors.As(err, &re) {
			out = append(out, re)
		}
	}
	return out
}

func specList(v any) []any {
	l, _ := v.([]any)
	return l
}

func specInt(v any) int64 {
	switch n := v.(type) {
	case interface{ Int64() (int64, error) }:
		i, _ := n.Int64()
		return i
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}
