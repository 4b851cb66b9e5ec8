package host

import (
	"encoding/json"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// encodeResource is the body of a resource answer (spec/host-api-v1alpha3.md
// §3.4 (6)): byte for byte what json.Marshal makes of the wireResource,
// assembled without reflection and without re-compacting the stored spec
// and status, which the stores keep as the compact JSON the host wrote
// (issue 14). A value the fast path cannot copy verbatim (a string needing
// an escape, a document with a character encoding/json escapes as HTML,
// an empty document) takes json.Marshal, so the bytes never differ.
func encodeResource(res *store.Resource) []byte {
	if !verbatimDoc(res.Spec) || !verbatimDoc(res.Status) {
		return mustJSON(wireResourceOf(res))
	}
	gen, rev := formatCounter(res.Generation), formatCounter(res.Revision)
	strs := [...]string{res.APIVersion, res.Kind, res.FormRef.APIVersion, res.FormRef.Kind, res.FormRef.DefinitionVersion,
		res.FormRef.SchemaDigest, res.PackageDigest, res.Name, res.Space, res.UID, gen, rev}
	n := len(res.Spec) + len(res.Status) + 256
	for _, s := range strs {
		if !verbatimString(s) {
			return mustJSON(wireResourceOf(res))
		}
		n += len(s)
	}
	b := make([]byte, 0, n)
	b = append(b, `{"apiVersion":"`...)
	b = append(b, res.APIVersion...)
	b = append(b, `","kind":"`...)
	b = append(b, res.Kind...)
	b = append(b, `","form":{"formRef":{"apiVersion":"`...)
	b = append(b, res.FormRef.APIVersion...)
	b = append(b, `","kind":"`...)
	b = append(b, res.FormRef.Kind...)
	b = append(b, `","definitionVersion":"`...)
	b = append(b, res.FormRef.DefinitionVersion...)
	b = append(b, `","schemaDigest":"`...)
	b = append(b, res.FormRef.SchemaDigest...)
	b = append(b, `"}`...)
	b = appendOmitEmpty(b, "packageDigest", res.PackageDigest)
	b = append(b, `},"metadata":{"name":"`...)
	b = append(b, res.Name...)
	b = append(b, `","space":"`...)
	b = append(b, res.Space...)
	b = append(b, '"')
	b = appendOmitEmpty(b, "uid", res.UID)
	b = appendOmitEmpty(b, "generation", gen)
	b = appendOmitEmpty(b, "revision", rev)
	b = append(b, `},"spec":`...)
	b = append(b, res.Spec...)
	b = append(b, `,"status":`...)
	b = append(b, res.Status...)
	return append(b, '}')
}

func wireResourceOf(res *store.Resource) wireResource {
	return wireResource{
		APIVersion: res.APIVersion, Kind: res.Kind,
		Form:     wire.FormReference{FormRef: res.FormRef, PackageDigest: res.PackageDigest},
		Metadata: wire.Metadata{Name: res.Name, Space: res.Space, UID: res.UID, Generation: formatCounter(res.Generation), Revision: formatCounter(res.Revision)},
		Spec:     json.RawMessage(res.Spec), Status: json.RawMessage(res.Status),
	}
}

func appendOmitEmpty(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":"`...)
	b = append(b, v...)
	return append(b, '"')
}

// verbatimString reports whether encoding/json writes s between quotes
// unchanged: printable ASCII other than `"`, `\`, `<`, `>` and `&`.
func verbatimString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// verbatimDoc reports whether a stored document (compact JSON the host
// wrote) passes through json.Marshal of a json.RawMessage unchanged: not
// empty, no whitespace outside strings, and none of the characters it
// escapes as HTML (`<`, `>`, `&`, U+2028, U+2029, all of which would
// appear literally). Checking for whitespace keeps a document some other
// writer indented on the json.Marshal path.
func verbatimDoc(d []byte) bool {
	if len(d) == 0 {
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
