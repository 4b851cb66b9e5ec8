package form_test

import (
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

// TestClassifyNamesWhatMoved: against our v1alpha1 edition, an edited
// v1beta1 QueueConsumer (referenced by no other document, so the family
// stays consistent) is additive with a new optional member, changed with a
// new required one or a tightened bound, and new under another kind.
func TestClassifyNamesWhatMoved(t *testing.T) {
	prev := load(t, edge.Family())
	groups := map[string]string{edge.GroupV1beta1: edge.GroupV1alpha1}
	const file = "forms/queue-consumer/definition.json"
	const anchor = `"properties": {
      "deadLetterQueue": {`
	optional := `"properties": {
      "extra": {"type": "boolean"},
      "deadLetterQueue": {`
	cases := []struct {
		name string
		edit func(string) string
		want form.FormClass
	}{
		{"unchanged", nil, form.ClassSameFields},
		{"new optional member", func(s string) string { return strings.Replace(s, anchor, optional, 1) }, form.ClassAdditive},
		{"new required member", func(s string) string {
			s = strings.Replace(s, anchor, optional, 1)
			return strings.Replace(s, `"required": [
      "maxBatchSize",`, `"required": [
      "extra",
      "maxBatchSize",`, 1)
		}, form.ClassChanged},
		{"tightened bound", func(s string) string {
			return strings.Replace(s, `"maximum": 100,
        "minimum": 0`, `"maximum": 99,
        "minimum": 0`, 1)
		}, form.ClassChanged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := load(t, copyFS(t, edge.FamilyV1beta1(), file, c.edit))
			got := form.Classify(prev, next, groups)
			if got["QueueConsumer 0.1.0"] != c.want {
				t.Errorf("QueueConsumer: %s, want %s", got["QueueConsumer 0.1.0"], c.want)
			}
			if got["WorkerBundle 0.1.0"] != form.ClassEquivalent || got["StaticAssetBundle 0.1.0"] != form.ClassNew {
				t.Errorf("the other Forms moved: %v", got)
			}
		})
	}
}
