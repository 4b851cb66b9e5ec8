package host

import (
	"github.com/takoform/takoform/host/lifecycle"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// answerBody is the body of an exact read's answer: the stored bytes, or
// the answer encoded from the row when it holds none (lifecycle.EncodeAnswer).
func answerBody(a *store.Answer) []byte {
	if a.Body != nil {
		return a.Body
	}
	return lifecycle.EncodeAnswer(a.Resource)
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
