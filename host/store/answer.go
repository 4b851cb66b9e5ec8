package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/takoform/takoform/form"

	"github.com/takoform/takoform/wire"
)

// Answer is what an exact read answers (spec/host-api-v1alpha3.md §3.4
// (6)): the resource's UID and counters (the etag is the revision, a
// prepare binds the UID and generation) and its body, EncodeResource of
// the resource as stored.
type Answer struct {
	UID        string
	Generation int64
	Revision   int64
	Body       []byte
}

// AnswerOf is r's Answer; the error is EncodeResource's.
func AnswerOf(r *Resource) (*Answer, error) {
	body, err := EncodeResource(r)
	if err != nil {
		return nil, err
	}
	return &Answer{UID: r.UID, Generation: r.Generation, Revision: r.Revision, Body: body}, nil
}

// ExactAnswerByView is the exact read through View, for a store without
// ExactReader or a read its fast path does not take: AnswerOf the
// resource Tx.Resource(k) reads, if it was created under exactly ref,
// else an error wrapping ErrNotFound that names the FormRef it is held
// under.
func ExactAnswerByView(ctx context.Context, s Store, k Key, ref form.FormRef) (*Answer, error) {
	var r *Resource
	err := s.View(ctx, func(tx Tx) error {
		var err error
		r, err = tx.Resource(k)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.FormRef != ref {
		return nil, fmt.Errorf("read resource %s under %s: it is held under %s: %w", k.Name, ref, r.FormRef, ErrNotFound)
	}
	return AnswerOf(r)
}

// EncodeResource is the body of a resource answer (spec/host-api-v1alpha3.md
// §3.4 (6)): byte for byte what json.Marshal makes of the wire resource,
// assembled without reflection and without re-compacting the stored spec
// and status, which the stores keep as the compact JSON the host wrote
// (repo decision 0019). A value the fast path cannot copy verbatim (a string needing
// an escape, a document with a character encoding/json escapes as HTML,
// an empty document) takes json.Marshal, so the bytes never differ; a
// spec or status that is not JSON (a damaged row) is json.Marshal's error.
// The SQL stores keep it beside each row (spec/decisions/0046-stored-answer.md).
func EncodeResource(r *Resource) ([]byte, error) {
	md := metadataOf(r)
	b := make([]byte, 0, len(r.Spec)+len(r.Status)+512)
	b, ok := wire.AppendCore(b, r.APIVersion, r.Kind, wire.FormReference{FormRef: r.FormRef, PackageDigest: r.PackageDigest}, md, r.Spec)
	if !ok || !wire.VerbatimDoc(r.Status) {
		b, err := json.Marshal(wireResourceOf(r))
		if err != nil {
			return nil, fmt.Errorf("encode resource %s: %w", r.UID, err)
		}
		return b, nil
	}
	b = append(b, `,"status":`...)
	b = append(b, r.Status...)
	return append(b, '}'), nil
}

// wireResource is wire.Resource with the stored status bytes spliced in
// (they are the rendered wire.Status), so a read does not decode and
// re-encode them; the encoding is identical.
type wireResource struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Form       wire.FormReference `json:"form"`
	Metadata   wire.Metadata      `json:"metadata"`
	Spec       json.RawMessage    `json:"spec"`
	Status     json.RawMessage    `json:"status"`
}

func wireResourceOf(r *Resource) wireResource {
	return wireResource{
		APIVersion: r.APIVersion, Kind: r.Kind,
		Form:     wire.FormReference{FormRef: r.FormRef, PackageDigest: r.PackageDigest},
		Metadata: metadataOf(r), Spec: json.RawMessage(r.Spec), Status: json.RawMessage(r.Status),
	}
}

func metadataOf(r *Resource) wire.Metadata {
	return wire.Metadata{Name: r.Name, Space: r.Space, UID: r.UID, Generation: strconv.FormatInt(r.Generation, 10), Revision: strconv.FormatInt(r.Revision, 10)}
}
