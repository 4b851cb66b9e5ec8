package store

import (
	"context"
	"fmt"

	"github.com/takoform/takoform/form"
)

// Answer is what an exact read answers (spec/host-api-v1alpha3.md §3.4
// (6)): the resource's UID and counters (the etag is the revision, a
// prepare binds the UID and generation) and either the answer body the
// host stored with the row (Resource.Answer) or, for a row that holds
// none, the resource the host encodes it from (repo decision 0065). The
// store never encodes an answer.
type Answer struct {
	UID        string
	Generation int64
	Revision   int64
	// Body is the stored answer, verbatim; nil when the row holds none.
	Body []byte
	// Resource is nil when Body is set; else the resource at the read's
	// key with the members an answer shows: the key, FormRef, UID,
	// package digest, counters, spec and status, each as Tx.Resource
	// reads it (the other members are zero).
	Resource *Resource
}

// ExactAnswerByView is the exact read through View, for a store without
// ExactReader or a read its fast path does not take: the Answer of the
// resource Tx.Resource(k) reads (its Resource, since Tx.Resource does not
// read the stored answer), if it was created under exactly ref, else an
// error wrapping ErrNotFound that names the FormRef it is held under.
// Its Resource holds only the members an answer shows, as the fast
// path's does.
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
	shown := &Resource{Key: r.Key, FormRef: r.FormRef, UID: r.UID, PackageDigest: r.PackageDigest,
		Generation: r.Generation, Revision: r.Revision, Spec: r.Spec, Status: r.Status}
	return &Answer{UID: r.UID, Generation: r.Generation, Revision: r.Revision, Resource: shown}, nil
}
