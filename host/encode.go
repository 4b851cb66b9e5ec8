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
	md := wire.Metadata{Name: res.Name, Space: res.Space, UID: res.UID, Generation: formatCounter(res.Generation), Revision: formatCounter(res.Revision)}
	b := make([]byte, 0, len(res.Spec)+len(res.Status)+512)
	b, ok := appendCore(b, res.APIVersion, res.Kind, wire.FormReference{FormRef: res.FormRef, PackageDigest: res.PackageDigest}, md, res.Spec)
	if !ok || !verbatimDoc(res.Status) {
		return mustJSON(wireResourceOf(res))
	}
	b = append(b, `,"status":`...)
	b = append(b, res.Status...)
	return append(b, '}')
}

// encodePrepare is the body of a prepare answer (spec/host-api-v1alpha3.md
// §3.4 (4)): byte for byte json.Marshal of the wire.PrepareResponse, on
// encodeResource's fast path and fallback.
func encodePrepare(p *wire.PrepareResponse) []byte {
	e := &p.Resource
	b := make([]byte, 0, len(e.Spec)+640)
	b = append(b, `{"resource":`...)
	b, ok := appendCore(b, e.APIVersion, e.Kind, e.Form, e.Metadata, e.Spec)
	if !ok || !verbatimString(p.Review.PrepareDigest) || !verbatimString(p.Review.SpecDigest) {
		return mustJSON(p)
	}
	b = append(b, `},"review":{"prepareDigest":"`...)
	b = append(b, p.Review.PrepareDigest...)
	b = append(b, `","specDigest":"`...)
	b = append(b, p.Review.SpecDigest...)
	return append(b, `"}}`...)
}

// appendCore appends the resource core every resource body starts with —
// apiVersion, kind, form, metadata and spec, the object left open — as
// json.Marshal writes it; false when a member is not verbatim
// (verbatimString, verbatimDoc), for the caller to take json.Marshal.
func appendCore(b []byte, apiVersion, kind string, fr wire.FormReference, md wire.Metadata, spec []byte) ([]byte, bool) {
	if !verbatimDoc(spec) {
		return nil, false
	}
	for _, s := range [...]string{apiVersion, kind, fr.FormRef.APIVersion, fr.FormRef.Kind, fr.FormRef.DefinitionVersion,
		fr.FormRef.SchemaDigest, fr.PackageDigest, md.Name, md.Space, md.UID, md.Generation, md.Revision} {
		if !verbatimString(s) {
			return nil, false
		}
	}
	b = append(b, `{"apiVersion":"`...)
	b = append(b, apiVersion...)
	b = append(b, `","kind":"`...)
	b = append(b, kind...)
	b = append(b, `","form":{"formRef":{"apiVersion":"`...)
	b = append(b, fr.FormRef.APIVersion...)
	b = append(b, `","kind":"`...)
	b = append(b, fr.FormRef.Kind...)
	b = append(b, `","definitionVersion":"`...)
	b = append(b, fr.FormRef.DefinitionVersion...)
	b = append(b, `","schemaDigest":"`...)
	b = append(b, fr.FormRef.SchemaDigest...)
	b = append(b, `"}`...)
	b = appendOmitEmpty(b, "packageDigest", fr.PackageDigest)
	b = append(b, `},"metadata":{"name":"`...)
	b = append(b, md.Name...)
	b = append(b, `","space":"`...)
	b = append(b, md.Space...)
	b = append(b, '"')
	b = appendOmitEmpty(b, "uid", md.UID)
	b = appendOmitEmpty(b, "generation", md.Generation)
	b = appendOmitEmpty(b, "revision", md.Revision)
	b = append(b, `},"spec":`...)
	return append(b, spec...), true
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
