package edge

// AggregateRule reports whether rule judges the spec as a whole rather than
// one field: a deployment's weights summing to 10000, a deployment naming
// each version once, and the one environment namespace a version's vars
// keys, sensitive var names and binding names share. A host refuses these at apply (and import), not at
// validate or prepare; the provider still refuses every rule at plan time
// (spec/conformance-probe.md §3).
func AggregateRule(rule string) bool {
	return rule == RuleDeploymentWeightSum || rule == RuleDeploymentDuplicate || rule == RuleEnvCollision
}
