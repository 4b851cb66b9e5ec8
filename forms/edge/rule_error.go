package edge

// RuleError is the refusal every Edge semantic rule returns. The same value
// serves the host (invalid_argument / unsupported_capability detail) and the
// Terraform provider (plan-time diagnostic).
//
//   - Rule is a stable identifier such as "edge.cron.range"; callers switch on
//     it, never on Message.
//   - Pointer is an RFC 6901 JSON pointer into the desired spec the refusal
//     concerns, such as "/cron" or "/kvBindings/2/name".
//   - Message says what was wrong and how to fix it, for humans.
type RuleError struct {
	Rule    string
	Pointer string
	Message string
}

// Error renders "<rule> at <pointer>: <message>".
func (e *RuleError) Error() string {
	return e.Rule + " at " + e.Pointer + ": " + e.Message
}

func newRuleError(rule, pointer, message string) *RuleError {
	return &RuleError{Rule: rule, Pointer: pointer, Message: message}
}
