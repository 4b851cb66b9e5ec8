package lifecycle

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// RawResource is res as the wire resource its answer shows, its stored
// status spliced in (the rendered wire.Status).
func RawResource(res *store.Resource) *wire.RawResource {
	return &wire.RawResource{
		APIVersion: res.APIVersion, Kind: res.Kind,
		Form: wire.FormReference{FormRef: res.FormRef, PackageDigest: res.PackageDigest},
		Metadata: wire.Metadata{Name: res.Name, Space: res.Space, UID: res.UID,
			Generation: formatCounter(res.Generation), Revision: formatCounter(res.Revision)},
		Spec: res.Spec, Status: res.Status,
	}
}

// EncodeAnswer is the body of res's answer, wire.EncodeResource of it; a
// resource that does not encode (a damaged row) panics, which the host's
// handler recovers as internal_error.
func EncodeAnswer(res *store.Resource) []byte {
	b, err := wire.EncodeResource(RawResource(res))
	if err != nil {
		panic(fmt.Sprintf("encode answer: %v", err))
	}
	return b
}

// AnswerBytes is the body of res's answer: the bytes the engine handed
// the store with res (res.Answer, set by withAnswer after res's last
// change), else encoded now (EncodeAnswer). A reply, its replay and the
// exact read of the row are then byte-identical (repo decision 0065).
func AnswerBytes(res *store.Resource) []byte {
	if res.Answer != nil {
		return res.Answer
	}
	return EncodeAnswer(res)
}

// withAnswer sets res.Answer to the body of res's answer, the bytes the
// store keeps with the row for the exact read (repo decision 0065); it
// is called just before every CreateResource and UpdateResource, after
// the last change to res. A resource that does not encode gets none: the
// exact read then answers from the row's columns and refuses it as
// before.
func withAnswer(res *store.Resource) *store.Resource {
	res.Answer = nil
	if b, err := wire.EncodeResource(RawResource(res)); err == nil {
		res.Answer = b
	}
	return res
}
