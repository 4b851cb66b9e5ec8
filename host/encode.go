package host

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// encodeResource is store.EncodeResource of res; a resource that does
// not encode (a damaged row) panics, which the handler's recover answers
// as internal_error.
func encodeResource(res *store.Resource) []byte {
	b, err := store.EncodeResource(res)
	if err != nil {
		panic(fmt.Sprintf("encode answer: %v", err))
	}
	return b
}

// encodePrepare is the body of a prepare answer (spec/host-api-v1alpha3.md
// §3.4 (4)): byte for byte json.Marshal of the wire.PrepareResponse, on
// store.EncodeResource's fast path and fallback.
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
