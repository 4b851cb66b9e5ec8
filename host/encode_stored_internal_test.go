package host

import (
	"encoding/json"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// A stored spec or status that is not JSON (a damaged row) is never
// answered as a body: encodeResource refuses it as json.Marshal of the
// wire resource does (the handler's recover answers internal_error),
// and a good row encodes to what json.Marshal writes.
func TestEncodeResourceRefusesStoredNonJSON(t *testing.T) {
	for _, c := range []struct{ spec, status string }{
		{`{"a":}`, `{}`}, {`{}`, `{"x":1`}, {"{\"a\":\"\x01\"}", `{}`}, {`{`, `{}`}, {`{"a":1}}`, `{}`},
		{`{"a":[1,2],"b":"c"}`, `{}`},
	} {
		res := &store.Resource{Key: store.Key{Tenant: "t", Space: "s", APIVersion: "a/v1", Kind: "K", Name: "n"},
			FormRef: form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:0"}, UID: "u", Generation: 1, Revision: 1,
			Spec: []byte(c.spec), Status: []byte(c.status)}
		want, merr := json.Marshal(wireResourceOf(res))
		var body []byte
		panicked := func() (p any) {
			defer func() { p = recover() }()
			body = encodeResource(res)
			return nil
		}()
		switch {
		case merr != nil && panicked == nil:
			t.Errorf("spec %q status %q: encodeResource answered %s; json.Marshal refuses it: %v", c.spec, c.status, body, merr)
		case merr == nil && panicked != nil:
			t.Errorf("spec %q status %q: encodeResource panicked (%v); json.Marshal writes %s", c.spec, c.status, panicked, want)
		case merr == nil && string(body) != string(want):
			t.Errorf("spec %q status %q: encodeResource wrote %s, json.Marshal %s", c.spec, c.status, body, want)
		}
	}
}
