package edge

import (
	"fmt"
	"regexp"

	"github.com/takoform/takoform/forms/edge/source"
)

// RuleSensitiveVarName: a sensitive variable's name is outside the
// grammar of WorkerVersion's requiredSensitiveVars entries.
const RuleSensitiveVarName = "edge.env.sensitive-name"

// SensitiveVarNamePattern is the grammar of a requiredSensitiveVars entry
// (spec/host-api-v1alpha3.md §6.4): an upper-case letter, then up to 63
// upper-case letters, digits or underscores. The WorkerVersion schema
// carries it (forms/edge/source) and CheckSensitiveVarName applies it to
// a name given out of band (spec/runtime-v1.md §3.2).
const SensitiveVarNamePattern = source.SensitiveVarNamePattern

var sensitiveVarName = regexp.MustCompile(SensitiveVarNamePattern)

// CheckSensitiveVarName refuses a name no WorkerVersion could declare in
// requiredSensitiveVars, with RuleSensitiveVarName at pointer "/name".
func CheckSensitiveVarName(name string) error {
	if sensitiveVarName.MatchString(name) {
		return nil
	}
	return newRuleError(RuleSensitiveVarName, "/name", fmt.Sprintf(
		"%q is not a sensitive variable name: a requiredSensitiveVars name is an upper-case letter, then up to 63 upper-case letters, digits or underscores (%s), e.g. API_TOKEN",
		name, SensitiveVarNamePattern))
}
