package edge

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckSensitiveVarName(t *testing.T) {
	for _, ok := range []string{"A", "API_TOKEN", "X9", "A" + strings.Repeat("_", 63)} {
		if err := CheckSensitiveVarName(ok); err != nil {
			t.Errorf("CheckSensitiveVarName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "api_token", "_A", "9A", "A-B", "A B", "A" + strings.Repeat("B", 64), "Ä", "A\n"} {
		var re *RuleError
		if err := CheckSensitiveVarName(bad); !errors.As(err, &re) || re.Rule != RuleSensitiveVarName {
			t.Errorf("CheckSensitiveVarName(%q) = %v, want %s", bad, err, RuleSensitiveVarName)
		}
	}
}
