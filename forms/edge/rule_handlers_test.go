package edge

import (
	"reflect"
	"testing"
)

func TestHandlerVocabulary(t *testing.T) {
	if want := []string{"fetch", "scheduled", "queue"}; !reflect.DeepEqual(HandlerVocabulary, want) {
		t.Fatalf("HandlerVocabulary = %v, want %v", HandlerVocabulary, want)
	}
}

func TestCheckHandlers(t *testing.T) {
	for _, ok := range [][]string{{"fetch"}, {"scheduled"}, {"queue", "fetch"}, {"fetch", "scheduled", "queue"}} {
		if err := CheckHandlers(ok); err != nil {
			t.Errorf("CheckHandlers(%v): %v", ok, err)
		}
	}
	tests := []struct {
		in            []string
		rule, pointer string
	}{
		{nil, RuleHandlerEmpty, "/handlers"},
		{[]string{}, RuleHandlerEmpty, "/handlers"},
		{[]string{"fetch", "email"}, RuleHandlerUndeclared, "/handlers/1"},
		{[]string{"Fetch"}, RuleHandlerUndeclared, "/handlers/0"},
		{[]string{""}, RuleHandlerUndeclared, "/handlers/0"},
		{[]string{"fetch ", "queue"}, RuleHandlerUndeclared, "/handlers/0"},
		{[]string{"queue", "fetch", "queue"}, RuleHandlerDuplicate, "/handlers/2"},
	}
	for _, tc := range tests {
		wantRuleError(t, CheckHandlers(tc.in), tc.rule, tc.pointer)
	}
}

func TestAttachmentHandler(t *testing.T) {
	tests := []struct {
		kind, handler string
		ok            bool
	}{
		{"WorkerCustomDomain", "fetch", true},
		{"WorkerEndpoint", "fetch", true},
		{"WorkerCronTrigger", "scheduled", true},
		{"QueueConsumer", "queue", true},
		{"WorkerDeployment", "", false},
		{"workerendpoint", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		h, ok := AttachmentHandler(tc.kind)
		if h != tc.handler || ok != tc.ok {
			t.Errorf("AttachmentHandler(%q) = %q, %v; want %q, %v", tc.kind, h, ok, tc.handler, tc.ok)
		}
		if ok {
			if err := CheckHandlers([]string{h}); err != nil {
				t.Errorf("AttachmentHandler(%q) returned a handler outside the vocabulary: %v", tc.kind, err)
			}
		}
	}
}
