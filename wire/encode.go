package wire

import (
	"encoding/json"

	"github.com/takoform/takoform/ijson"
)

// The hand-written encoders of the bodies every create carries: byte for
// byte what json.Marshal writes — and, since they only take strings and
// documents neither escapes, what a json.Encoder with SetEscapeHTML(false)
// writes — or false for the caller to take the library (encode_test.go
// compares them; spec/decisions/0040-create-path-fast-paths.md).

// AppendWire appends v's JSON to b, false when a member is not verbatim.
func (v ResourceRequest) AppendWire(b []byte) ([]byte, bool) {
	b, ok := AppendCore(b, v.APIVersion, v.Kind, v.Form, v.Metadata, v.Spec)
	if !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// AppendWire appends v's JSON to b, false when a member is not verbatim.
func (v ApplyRequest) AppendWire(b []byte) ([]byte, bool) {
	b, ok := AppendCore(b, v.APIVersion, v.Kind, v.Form, v.Metadata, v.Spec)
	if !ok || !VerbatimString(v.Review.PrepareDigest) || !VerbatimString(v.ExpectedUID) || !VerbatimString(v.ExpectedGeneration) {
		return nil, false
	}
	b = append(b, `,"review":{"prepareDigest":"`...)
	b = append(b, v.Review.PrepareDigest...)
	b = append(b, `"}`...)
	b = appendOmitEmpty(b, "expectedUid", v.ExpectedUID)
	b = appendOmitEmpty(b, "expectedGeneration", v.ExpectedGeneration)
	return append(b, '}'), true
}

// AppendCore appends the resource core every resource body starts with —
// apiVersion, kind, form, metadata and spec, the object left open — as
// json.Marshal writes it; false when a member is not verbatim
// (VerbatimString, VerbatimDoc), for the caller to take json.Marshal.
func AppendCore(b []byte, apiVersion, kind string, fr FormReference, md Metadata, spec json.RawMessage) ([]byte, bool) {
	if !VerbatimDoc(spec) {
		return nil, false
	}
	for _, s := range [...]string{apiVersion, kind, fr.FormRef.APIVersion, fr.FormRef.Kind, fr.FormRef.DefinitionVersion,
		fr.FormRef.SchemaDigest, fr.PackageDigest, md.Name, md.Space, md.UID, md.Generation, md.Revision} {
		if !VerbatimString(s) {
			return nil, false
		}
	}
	b = appendPairs(append(b, '{'), "apiVersion", apiVersion, "kind", kind)
	b = appendPairs(append(b, `,"form":{"formRef":{`...), "apiVersion", fr.FormRef.APIVersion, "kind", fr.FormRef.Kind,
		"definitionVersion", fr.FormRef.DefinitionVersion, "schemaDigest", fr.FormRef.SchemaDigest)
	b = appendOmitEmpty(append(b, '}'), "packageDigest", fr.PackageDigest)
	b = appendPairs(append(b, `},"metadata":{`...), "name", md.Name, "space", md.Space)
	b = appendOmitEmpty(b, "uid", md.UID)
	b = appendOmitEmpty(b, "generation", md.Generation)
	b = appendOmitEmpty(b, "revision", md.Revision)
	b = append(b, `},"spec":`...)
	return append(b, spec...), true
}

// appendPairs appends the members `"name":"value"` of the name, value
// pairs in kv, comma-separated; every value is verbatim.
func appendPairs(b []byte, kv ...string) []byte {
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, kv[i]...)
		b = append(b, `":"`...)
		b = append(b, kv[i+1]...)
		b = append(b, '"')
	}
	return b
}

// appendOmitEmpty appends `,"name":"v"` unless v is empty (omitempty).
func appendOmitEmpty(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendPairs(append(b, ','), name, v)
}

// VerbatimString reports whether encoding/json writes s between quotes
// unchanged: printable ASCII other than `"`, `\`, `<`, `>` and `&`.
func VerbatimString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !verbatimByte[s[i]] {
			return false
		}
	}
	return true
}

// verbatimByte is VerbatimString's table of the bytes it passes.
var verbatimByte = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// VerbatimDoc reports whether a stored document (compact JSON the host
// wrote) passes through json.Marshal of a json.RawMessage unchanged: not
// empty, strict I-JSON (ijson.Check: a document that is not JSON, as a
// damaged row could hold, takes json.Marshal, which refuses it), no
// whitespace outside strings, and none of the characters it escapes as
// HTML (`<`, `>`, `&`, U+2028, U+2029, all of which would appear
// literally). Checking for whitespace keeps a document some other writer
// indented on the json.Marshal path.
func VerbatimDoc(d []byte) bool {
	if len(d) == 0 || ijson.Check(d) != nil {
		return false
	}
	in := false
	for i := 0; i < len(d); i++ {
		switch c := d[i]; {
		case c == '<' || c == '>' || c == '&' || c == 0xE2:
			return false // 0xE2 leads U+2028 and U+2029 (and other marks: the slow path is still exact)
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// AppendWire appends v's JSON to b, false when a member is not verbatim.
func (v Status) AppendWire(b []byte) ([]byte, bool) {
	if !VerbatimString(v.ObservedGeneration) || (len(v.Observed) > 0 && !VerbatimDoc(v.Observed)) || (len(v.Outputs) > 0 && !VerbatimDoc(v.Outputs)) {
		return nil, false
	}
	b = append(b, `{"observedGeneration":"`...)
	b = append(b, v.ObservedGeneration...)
	b = append(b, `","conditions":`...)
	if v.Conditions == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range v.Conditions {
			for _, s := range [...]string{c.Type, c.Status, c.Reason, c.LastTransitionTime, c.HostReason, c.Message} {
				if !VerbatimString(s) {
					return nil, false
				}
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPairs(append(b, '{'), "type", c.Type, "status", c.Status, "reason", c.Reason, "lastTransitionTime", c.LastTransitionTime)
			b = appendOmitEmpty(b, "hostReason", c.HostReason)
			b = appendOmitEmpty(b, "message", c.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(v.Observed) > 0 {
		b = append(b, `,"observed":`...)
		b = append(b, v.Observed...)
	}
	if len(v.Outputs) > 0 {
		b = append(b, `,"outputs":`...)
		b = append(b, v.Outputs...)
	}
	return append(b, '}'), true
}
