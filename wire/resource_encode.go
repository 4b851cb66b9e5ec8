package wire

import (
	"encoding/json"
	"fmt"
)

// RawResource is Resource with its status as the JSON the host rendered
// and stored (a Status's encoding, compact), so an answer built from a
// stored resource splices the status in instead of decoding and
// re-encoding it; json.Marshal writes both types alike.
type RawResource struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Form       FormReference   `json:"form"`
	Metadata   Metadata        `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	Status     json.RawMessage `json:"status"`
}

// EncodeResource is the body of a resource answer (spec/host-api-v1alpha3.md
// §3.4 (6)): byte for byte what json.Marshal makes of r, assembled
// without reflection and without re-compacting the spec and status, which
// the host keeps as compact JSON (repo decision 0019). A value the fast
// path cannot copy verbatim (a string needing an escape, a document with
// a character encoding/json escapes as HTML, an empty document) takes
// json.Marshal, so the bytes never differ; a spec or status that is not
// JSON (a damaged row) is json.Marshal's error, naming the resource's UID.
// The host stores these bytes with each resource it writes, and the exact
// read answers them (spec/decisions/0046-stored-answer.md,
// spec/decisions/0065-store-keeps-answer-bytes.md), so a change to them
// is a change of schema (TestStoredEncodingIsPinned in host/lifecycle).
func EncodeResource(r *RawResource) ([]byte, error) {
	b := make([]byte, 0, len(r.Spec)+len(r.Status)+512)
	b, ok := AppendCore(b, r.APIVersion, r.Kind, r.Form, r.Metadata, r.Spec)
	if !ok || !VerbatimDoc(r.Status) {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode resource %s: %w", r.Metadata.UID, err)
		}
		return b, nil
	}
	b = append(b, `,"status":`...)
	b = append(b, r.Status...)
	return append(b, '}'), nil
}
