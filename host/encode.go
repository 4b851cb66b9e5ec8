package host

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// rawResourceOf is res as the wire resource its answer shows, its stored
// status spliced in (the rendered wire.Status).
func rawResourceOf(res *store.Resource) *wire.RawResource {
	return &wire.RawResource{
		APIVersion: res.APIVersion, Kind: res.Kind,
		Form: wire.FormReference{FormRef: res.FormRef, PackageDigest: res.PackageDigest},
		Metadata: wire.Metadata{Name: res.Name, Space: res.Space, UID: res.UID,
			Generation: formatCounter(res.Generation), Revision: formatCounter(res.Revision)},
		Spec: res.Spec, Status: res.Status,
	}
}

// encodeResource is the body of res's answer, wire.EncodeResource of it;
// a resource that does not encode (a damaged row) panics, which the
// handler's recover answers as internal_error.
func encodeResource(res *store.Resource) []byte {
	b, err := wire.EncodeResource(rawResourceOf(res))
	if err != nil {
		panic(fmt.Sprintf("encode answer: %v", err))
	}
	return b
}

// withAnswer sets res.Answer to the body of res's answer, the bytes the
// store keeps with the row for the exact read (repo decision 0065); it
// is called just before every CreateResource and UpdateResource, after
// the last change to res. A resource that does not encode gets none: the
// exact read then answers from the row's columns and refuses it as
// before.
func withAnswer(res *store.Resource) *store.Resource {
	res.Answer = nil
	if b, err := wire.EncodeResource(rawResourceOf(res)); err == nil {
		res.Answer = b
	}
	return res
}

// answerBody is the body of an exact read's answer: the stored bytes, or
// the answer encoded from the row when it holds none (encodeResource).
func answerBody(a *store.Answer) []byte {
	if a.Body != nil {
		return a.Body
	}
	return encodeResource(a.Resource)
}

// encodePrepare is the body of a prepare answer (spec/host-api-v1alpha3.md
// §3.4 (4)): byte for byte json.Marshal of the wire.PrepareResponse, on
// wire.EncodeResource's fast path and fallback.
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
