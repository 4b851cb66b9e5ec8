package edge

import (
	"fmt"
	"strconv"
	"strings"
)

// Handler rule IDs (spec/host-api-v1alpha3.md §6.4, §7.1). Pointers are into WorkerVersion's desired spec.
const (
	RuleHandlerEmpty      = "edge.handler.empty"
	RuleHandlerUndeclared = "edge.handler.undeclared"
	RuleHandlerDuplicate  = "edge.handler.duplicate"
)

// Handler names of the worker.runtime@1.0.0 vocabulary (spec/host-api-v1alpha3.md §7.1).
const (
	HandlerFetch     = "fetch"
	HandlerScheduled = "scheduled"
	HandlerQueue     = "queue"
)

var handlerVocabulary = [...]string{HandlerFetch, HandlerScheduled, HandlerQueue}

// HandlerVocabulary is the closed handler vocabulary of worker.runtime@1.0.0,
// in the contract's order (spec/host-api-v1alpha3.md §6.4, §7.1). It is a copy: the rules here never
// read it back.
var HandlerVocabulary = []string{HandlerFetch, HandlerScheduled, HandlerQueue}

func handlerKnown(h string) bool {
	switch h {
	case HandlerFetch, HandlerScheduled, HandlerQueue:
		return true
	}
	return false
}

// CheckHandlers checks WorkerVersion "handlers" (spec/host-api-v1alpha3.md §6.4): at least one, each in
// the worker.runtime@1.0.0 vocabulary (exact, case-sensitive), none twice.
// Errors: RuleHandlerEmpty at "/handlers"; RuleHandlerUndeclared and
// RuleHandlerDuplicate at "/handlers/<index>" of the offending entry.
// Whether the bundle actually exports them is checked elsewhere.
func CheckHandlers(handlers []string) error {
	if len(handlers) == 0 {
		return newRuleError(RuleHandlerEmpty, "/handlers", fmt.Sprintf(
			"handlers is empty; declare at least one of %s", handlerVocabularyText()))
	}
	first := map[string]int{}
	for i, h := range handlers {
		ptr := "/handlers/" + strconv.Itoa(i)
		if !handlerKnown(h) {
			return newRuleError(RuleHandlerUndeclared, ptr, fmt.Sprintf(
				"handler %q is not defined by worker.runtime@1.0.0; use only %s (exact spelling)", h, handlerVocabularyText()))
		}
		if j, dup := first[h]; dup {
			return newRuleError(RuleHandlerDuplicate, ptr, fmt.Sprintf(
				"handler %q is declared twice (/handlers/%d and %s); list each handler once", h, j, ptr))
		}
		first[h] = i
	}
	return nil
}

func handlerVocabularyText() string {
	return `"` + strings.Join(handlerVocabulary[:], `", "`) + `"`
}

// AttachmentHandler returns the handler an attachment kind needs every
// weighted version of the worker's active deployment to export (spec/host-api-v1alpha3.md §6.5):
// WorkerCustomDomain and WorkerEndpoint → "fetch", WorkerCronTrigger →
// "scheduled", QueueConsumer → "queue". ok is false for any other kind.
func AttachmentHandler(kind string) (handler string, ok bool) {
	switch kind {
	case "WorkerCustomDomain", "WorkerEndpoint":
		return HandlerFetch, true
	case "WorkerCronTrigger":
		return HandlerScheduled, true
	case "QueueConsumer":
		return HandlerQueue, true
	}
	return "", false
}
