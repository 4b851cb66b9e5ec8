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
	b, ok := wire.AppendCore(b, res.APIVersion, res.Kind, wire.FormReference{FormRef: res.FormRef, PackageDigest: res.PackageDigest}, md, res.Spec)
	if !ok || !wire.VerbatimDoc(res.Status) {
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
	b, ok := wire.AppendCore(b, e.APIVersion, e.Kind, e.Form, e.Metadata, e.Spec)
	if !ok || !wire.VerbatimString(p.Review.PrepareDigest) || !wire.VerbatimString(p.Review.SpecDigest) {
		return mustJSON(p)
	}
	b = append(b, `},"review":{"prepareDigest":"`...)
	b = append(b, p.Review.PrepareDigest...)
	b = append(b, `","specDigest":"`...)
	b = append(b, p.Review.SpecDigest...)
	return append(b, `"}}`...)
}

func wireResourceOf(res *store.Resource) wireResource {
	return wireResource{
		APIVersion: res.APIVersion, Kind: res.Kind,
		Form:     wire.FormReference{FormRef: res.FormRef, PackageDigest: res.PackageDigest},
		Metadata: wire.Metadata{Name: res.Name, Space: res.Space, UID: res.UID, Generation: formatCounter(res.Generation), Revision: formatCounter(res.Revision)},
		Spec:     json.RawMessage(res.Spec), Status: json.RawMessage(res.Status),
	}
}
