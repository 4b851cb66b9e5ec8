package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The two lanes records are kept under: laneA is the lane of records
// written before lanes (store.LaneBeforeLanes).
const (
	laneA = store.LaneBeforeLanes
	laneB = "forms.takoform.com/v1beta1"
)

func idem(principal, space, k string, created time.Time) *store.Idempotency {
	return &store.Idempotency{
		Lane:        laneA,
		Tenant:      "acme",
		Principal:   principal,
		Space:       space,
		Key:         k,
		Fingerprint: "sha256:9999999999999999999999999999999999999999999999999999999999999999",
		Status:      201,
		ETag:        `"1"`,
		Body:        []byte(`{"metadata":{"uid":"uid-1"}}`),
		BoundUID:    "uid-1",
		CreatedAt:   created,
	}
}

func testIdempotency(t *testing.T, s store.Store) {
	base := idem("alice", "prod", "takoform-abc", at(0))
	// Each differs from base in one member of the key.
	others := []*store.Idempotency{
		idem("bob", "prod", "takoform-abc", at(0)),
		idem("alice", "staging", "takoform-abc", at(0)),
		idem("alice", "prod", "takoform-abd", at(0)),
		func() *store.Idempotency {
			r := idem("alice", "prod", "takoform-abc", at(0))
			r.Tenant = "globex"
			return r
		}(),
		func() *store.Idempotency { // the same key on the other lane (spec/lane-v1beta1.md §2.5 rule 5)
			r := idem("alice", "prod", "takoform-abc", at(0))
			r.Lane = laneB
			return r
		}(),
	}
	for i, r := range others {
		r.Status, r.Body = 200+i, []byte{byte('a' + i)}
	}
	update(t, s, func(tx store.Tx) error {
		_, err := tx.Idempotency(laneA, "acme", "alice", "prod", "takoform-abc")
		wantErr(t, "Idempotency before any put", err, store.ErrNotFound)
		for _, r := range append([]*store.Idempotency{base}, others...) {
			wantNoErr(t, "PutIdempotency", tx.PutIdempotency(r))
		}
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		for _, want := range append([]*store.Idempotency{base}, others...) {
			got, err := tx.Idempotency(want.Lane, want.Tenant, want.Principal, want.Space, want.Key)
			wantNoErr(t, "Idempotency", err)
			equal(t, "record "+want.Lane+"/"+want.Tenant+"/"+want.Principal+"/"+want.Space+"/"+want.Key, got, want)
		}
		return nil
	})
	// Replace: a settled 202 becomes the final answer under the same key.
	repl := idem("alice", "prod", "takoform-abc", at(time.Hour))
	repl.Status, repl.ETag, repl.Body, repl.BoundUID, repl.BoundOperation = 202, "", []byte(`{"operation":{"id":"op_1"}}`), "", "op_1"
	update(t, s, func(tx store.Tx) error { return tx.PutIdempotency(repl) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Idempotency(laneA, "acme", "alice", "prod", "takoform-abc")
		wantNoErr(t, "Idempotency", err)
		equal(t, "replaced record", got, repl)
		got, err = tx.Idempotency(laneA, "acme", "bob", "prod", "takoform-abc")
		wantNoErr(t, "Idempotency", err)
		equal(t, "record of another principal", got, others[0])
		got, err = tx.Idempotency(laneB, "acme", "alice", "prod", "takoform-abc")
		wantNoErr(t, "Idempotency", err)
		equal(t, "record of the other lane, untouched by the replace", got, others[4])
		return nil
	})
}

// Records are retired with the incarnation they are bound to, never by
// name; records bound to nothing keep replaying; all expire by age
// (spec/host-api-v1alpha3.md §3.5).
func testIdempotencyLifetime(t *testing.T, s store.Store) {
	r1 := idem("alice", "prod", "k1", at(0))
	r2 := idem("alice", "prod", "k2", at(time.Minute))
	r3 := idem("alice", "prod", "k3", at(2*time.Minute))
	r3.BoundUID = "uid-2"
	r4 := idem("alice", "prod", "k4", at(3*time.Minute)) // a delete's 204: bound to nothing
	r4.Status, r4.Body, r4.BoundUID = 204, nil, ""
	r5 := idem("alice", "prod", "k5", at(4*time.Minute)) // a 202: bound to its operation
	r5.Status, r5.BoundUID, r5.BoundOperation = 202, "", "op_7"
	r6 := idem("alice", "prod", "k6", at(5*time.Minute))
	r6.Status, r6.BoundUID, r6.BoundOperation = 202, "", "op_8"
	all := []*store.Idempotency{r1, r2, r3, r4, r5, r6}
	update(t, s, func(tx store.Tx) error {
		for _, r := range all {
			wantNoErr(t, "PutIdempotency", tx.PutIdempotency(r))
		}
		return nil
	})
	present := func(what string, want ...*store.Idempotency) {
		t.Helper()
		kept := map[string]bool{}
		for _, r := range want {
			kept[r.Key] = true
		}
		view(t, s, func(tx store.Tx) error {
			for _, r := range all {
				got, err := tx.Idempotency(r.Lane, r.Tenant, r.Principal, r.Space, r.Key)
				if !kept[r.Key] {
					wantErr(t, what+": record "+r.Key, err, store.ErrNotFound)
					continue
				}
				wantNoErr(t, what+": record "+r.Key, err)
				equal(t, what+": record "+r.Key, got, r)
			}
			return nil
		})
	}
	retire := func(uid string, want int) {
		t.Helper()
		update(t, s, func(tx store.Tx) error {
			n, err := tx.RetireIdempotency(uid)
			wantNoErr(t, "RetireIdempotency", err)
			equal(t, "records retired with "+uid, n, want)
			return nil
		})
	}
	retire("uid-1", 2)
	present("after retiring uid-1", r3, r4, r5, r6)
	retire("", 0)
	retire("uid-404", 0)
	present("after retiring nothing", r3, r4, r5, r6)

	// Operations settle: op_7 committed uid-7, op_8 deleted (bound to nothing).
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "RebindIdempotency", tx.RebindIdempotency("op_7", "uid-7"))
		return tx.RebindIdempotency("op_8", "")
	})
	r5.BoundUID, r5.BoundOperation = "uid-7", ""
	r6.BoundOperation = ""
	present("after rebinding", r3, r4, r5, r6)
	retire("uid-7", 1)
	present("after retiring uid-7", r3, r4, r6)

	update(t, s, func(tx store.Tx) error {
		n, err := tx.ExpireIdempotency(at(3 * time.Minute))
		wantNoErr(t, "ExpireIdempotency", err)
		equal(t, "records created before t0+3m", n, 1)
		return nil
	})
	present("after expiring", r4, r6)
}

func op(id string, target store.Key, notBefore, created time.Time) *store.Operation {
	return &store.Operation{
		ID:        id,
		Tenant:    target.Tenant,
		Principal: "alice",
		Action:    store.ActionApply,
		Request:   []byte(`{"spec":{"title":"x"}}`),
		Document:  []byte(`{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"` + id + `","done":false}`),
		TargetUID: "uid-1",
		Target:    target,
		NotBefore: notBefore,
		CreatedAt: created,
		UpdatedAt: created,
	}
}

func testOperations(t *testing.T, s store.Store) {
	o := op("op_1", key("acme", "prod", "sessions"), at(time.Second), at(0))
	update(t, s, func(tx store.Tx) error {
		_, err := tx.Operation("op_1")
		wantErr(t, "Operation before any put", err, store.ErrNotFound)
		return tx.PutOperation(o)
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Operation("op_1")
		wantNoErr(t, "Operation", err)
		equal(t, "operation", got, o)
		return nil
	})
	done := *o
	done.Done = true
	done.Document = []byte(`{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_1","done":true,"result":{}}`)
	done.UpdatedAt = at(time.Minute)
	update(t, s, func(tx store.Tx) error { return tx.PutOperation(&done) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Operation("op_1")
		wantNoErr(t, "Operation", err)
		equal(t, "replaced operation", got, &done)
		_, err = tx.Operation("op_2")
		wantErr(t, "Operation of an unknown id", err, store.ErrNotFound)
		return nil
	})
}

// Due operations come longest due first: by NotBefore, then CreatedAt,
// then ID; a zero NotBefore is due at once, NotBefore == now is due.
func testDueOperations(t *testing.T, s store.Store) {
	k := key("acme", "prod", "sessions")
	now := at(10 * time.Minute)
	opZero := op("op_zero", k, time.Time{}, at(6*time.Minute))
	opB := op("op_b", k, at(2*time.Minute), at(3*time.Minute))
	opC := op("op_c", k, at(5*time.Minute), at(0))
	opA1 := op("op_a1", k, at(5*time.Minute), at(time.Minute))
	opA2 := op("op_a2", k, at(5*time.Minute), at(time.Minute))
	opNow := op("op_now", k, now, at(4*time.Minute))
	later := op("op_later", k, at(20*time.Minute), at(0))
	finished := op("op_finished", k, at(0), at(0))
	finished.Done = true
	update(t, s, func(tx store.Tx) error {
		for _, o := range []*store.Operation{later, opA2, opNow, finished, opA1, opC, opB, opZero} {
			wantNoErr(t, "PutOperation", tx.PutOperation(o))
		}
		return nil
	})
	due := func(limit int, want ...*store.Operation) {
		t.Helper()
		view(t, s, func(tx store.Tx) error {
			got, err := tx.DueOperations(now, limit)
			wantNoErr(t, "DueOperations", err)
			equal(t, "due operations", got, want)
			return nil
		})
	}
	due(3, opZero, opB, opC)
	due(100, opZero, opB, opC, opA1, opA2, opNow)
	opB.Done = true
	update(t, s, func(tx store.Tx) error { return tx.PutOperation(opB) })
	due(100, opZero, opC, opA1, opA2, opNow)
}

func testPendingOperationFor(t *testing.T, s store.Store) {
	k1, k2 := key("acme", "prod", "sessions"), key("acme", "prod", "cache")
	settled := op("op_1", k1, at(0), at(0))
	settled.Done = true
	pending := op("op_2", k1, at(0), at(time.Minute))
	other := op("op_3", k2, at(0), at(2*time.Minute))
	update(t, s, func(tx store.Tx) error {
		_, err := tx.PendingOperationFor(k1)
		wantErr(t, "PendingOperationFor with no operations", err, store.ErrNotFound)
		for _, o := range []*store.Operation{settled, pending, other} {
			wantNoErr(t, "PutOperation", tx.PutOperation(o))
		}
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.PendingOperationFor(k1)
		wantNoErr(t, "PendingOperationFor", err)
		equal(t, "pending operation for sessions", got, pending)
		got, err = tx.PendingOperationFor(k2)
		wantNoErr(t, "PendingOperationFor", err)
		equal(t, "pending operation for cache", got, other)
		for _, k := range []store.Key{key("globex", "prod", "sessions"), key("acme", "staging", "sessions")} {
			_, err = tx.PendingOperationFor(k)
			wantErr(t, "PendingOperationFor "+k.Tenant+"/"+k.Space, err, store.ErrNotFound)
		}
		return nil
	})
	pending.Done = true
	update(t, s, func(tx store.Tx) error { return tx.PutOperation(pending) })
	view(t, s, func(tx store.Tx) error {
		_, err := tx.PendingOperationFor(k1)
		wantErr(t, "PendingOperationFor after it finished", err, store.ErrNotFound)
		return nil
	})
}

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	digestM = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func testBlobs(t *testing.T, s store.Store) {
	big := bytes.Repeat([]byte("takoform\x00\xff"), 100_000) // 1,000,000 bytes
	update(t, s, func(tx store.Tx) error {
		_, err := tx.BlobSize(digestA)
		wantErr(t, "BlobSize of an unknown digest", err, store.ErrNotFound)
		_, err = tx.Blob(digestA)
		wantErr(t, "Blob of an unknown digest", err, store.ErrNotFound)
		wantNoErr(t, "PutBlob", tx.PutBlob(digestA, big))
		wantNoErr(t, "PutBlob of the same digest again", tx.PutBlob(digestA, big))
		wantNoErr(t, "PutBlob of an empty blob", tx.PutBlob(digestB, []byte{}))
		held, err := tx.Holds("acme", digestA)
		wantNoErr(t, "Holds", err)
		equal(t, "acme holds A before Hold", held, false)
		wantNoErr(t, "Hold", tx.Hold("acme", digestA))
		wantNoErr(t, "Hold again", tx.Hold("acme", digestA))
		return tx.Hold("acme", digestM) // a manifest digest: no blob of it
	})
	view(t, s, func(tx store.Tx) error {
		n, err := tx.BlobSize(digestA)
		wantNoErr(t, "BlobSize", err)
		equal(t, "size of A", n, int64(len(big)))
		b, err := tx.Blob(digestA)
		wantNoErr(t, "Blob", err)
		equal(t, "bytes of A", b, big)
		n, err = tx.BlobSize(digestB)
		wantNoErr(t, "BlobSize of the empty blob", err)
		equal(t, "size of B", n, int64(0))
		b, err = tx.Blob(digestB)
		wantNoErr(t, "Blob of the empty blob", err)
		equal(t, "bytes of B", len(b), 0)
		for _, c := range []struct {
			tenant, digest string
			want           bool
		}{{"acme", digestA, true}, {"acme", digestM, true}, {"acme", digestB, false}, {"globex", digestA, false}} {
			held, err := tx.Holds(c.tenant, c.digest)
			wantNoErr(t, "Holds", err)
			equal(t, c.tenant+" holds "+c.digest, held, c.want)
		}
		return nil
	})
}

func testManifestsUploads(t *testing.T, s store.Store) {
	doc := []byte(`{"apiVersion":"artifacts.takoform.com/v1alpha1","kind":"WorkerBundle","mainModule":"index.js"}`)
	up := &store.Upload{ID: "up_1", Tenant: "acme", Principal: "alice", Manifest: doc, ManifestDigest: digestM, CreatedAt: at(0)}
	update(t, s, func(tx store.Tx) error {
		_, err := tx.Manifest(digestM)
		wantErr(t, "Manifest of an unknown digest", err, store.ErrNotFound)
		_, err = tx.Upload("up_1")
		wantErr(t, "Upload of an unknown id", err, store.ErrNotFound)
		wantNoErr(t, "PutManifest", tx.PutManifest(digestM, doc))
		wantNoErr(t, "PutManifest again", tx.PutManifest(digestM, doc))
		return tx.PutUpload(up)
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Manifest(digestM)
		wantNoErr(t, "Manifest", err)
		equal(t, "manifest", got, doc)
		u, err := tx.Upload("up_1")
		wantNoErr(t, "Upload", err)
		equal(t, "upload", u, up)
		return nil
	})
	up2 := *up
	up2.Principal, up2.CreatedAt = "bob", at(time.Hour)
	update(t, s, func(tx store.Tx) error { return tx.PutUpload(&up2) })
	view(t, s, func(tx store.Tx) error {
		u, err := tx.Upload("up_1")
		wantNoErr(t, "Upload", err)
		equal(t, "replaced upload", u, &up2)
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "DeleteUpload", tx.DeleteUpload("up_1"))
		wantNoErr(t, "DeleteUpload of an unknown id", tx.DeleteUpload("up_1"))
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		_, err := tx.Upload("up_1")
		wantErr(t, "Upload after delete", err, store.ErrNotFound)
		got, err := tx.Manifest(digestM)
		wantNoErr(t, "Manifest after its upload was deleted", err)
		equal(t, "manifest", got, doc)
		return nil
	})
}

func testSettings(t *testing.T, s store.Store) {
	update(t, s, func(tx store.Tx) error {
		_, err := tx.Setting("prepare-key")
		wantErr(t, "Setting unset", err, store.ErrNotFound)
		v, err := tx.PutSetting("prepare-key", []byte("first"))
		wantNoErr(t, "PutSetting", err)
		equal(t, "value stored", v, []byte("first"))
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		v, err := tx.PutSetting("prepare-key", []byte("second"))
		wantNoErr(t, "PutSetting again", err)
		equal(t, "value kept", v, []byte("first"))
		v, err = tx.PutSetting("other", []byte("x"))
		wantNoErr(t, "PutSetting other", err)
		equal(t, "other value", v, []byte("x"))
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		v, err := tx.Setting("prepare-key")
		wantNoErr(t, "Setting", err)
		equal(t, "setting", v, []byte("first"))
		return nil
	})
}

func testSequences(t *testing.T, s store.Store) {
	next := func(tx store.Tx, seq string, want int64) {
		t.Helper()
		n, err := tx.Next(seq)
		wantNoErr(t, "Next", err)
		equal(t, "Next("+seq+")", n, want)
	}
	update(t, s, func(tx store.Tx) error {
		next(tx, "uid", 1)
		next(tx, "uid", 2)
		next(tx, "operation", 1)
		next(tx, "uid", 3)
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		next(tx, "uid", 4)
		next(tx, "upload", 1)
		next(tx, "operation", 2)
		return nil
	})
}
