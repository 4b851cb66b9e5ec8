package edge

import (
	"errors"
	"testing"
)

// wantRule asserts err is a *RuleError with the given rule and pointer and a
// non-empty message.
func wantRuleError(t *testing.T, err error, rule, pointer string) *RuleError {
	t.Helper()
	if err == nil {
		t.Fatalf("got nil error, want %s at %s", rule, pointer)
	}
	var re *RuleError
	if !errors.As(err, &re) {
		t.Fatalf("got %T %v, want *RuleError", err, err)
	}
	if re.Rule != rule || re.Pointer != pointer {
		t.Fatalf("got %s at %s (%s), want %s at %s", re.Rule, re.Pointer, re.Message, rule, pointer)
	}
	if re.Message == "" {
		t.Fatalf("%s: empty message", rule)
	}
	return re
}

func TestRuleErrorString(t *testing.T) {
	err := error(&RuleError{Rule: "edge.x", Pointer: "/a", Message: "bad; fix it"})
	if got, want := err.Error(), "edge.x at /a: bad; fix it"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
