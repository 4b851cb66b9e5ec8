// Package storetest is the one behavioural test suite every store.Store
// implementation must pass (SQLite now, PostgreSQL later). It asserts what
// the host relies on: exact values read back, ErrNotFound and ErrConflict
// where store.Tx documents them, uniqueness rules of spec/host-api-v1alpha3.md §1.6–1.7,
// idempotency record lifetime (§3.5), the operation queue (§4), artifact
// holdings (§3.6), sequences, maintenance (schema version, gauges, usage,
// artifact references and conditional sweeps, maintenance.go), edge.kv
// entries (kv.go), edge.queue messages (queue.go), edge.objects metadata
// (objects.go), sealed sensitive values (secrets.go), migration ledgers
// (ledger.go), cron firings and queue delivery (events.go), and
// transaction isolation (an Update commits all or nothing, concurrent
// Updates do not affect each other, a View sees committed data only).
//
// Times used by the suite have microsecond precision, so a store may keep
// microseconds (PostgreSQL) or finer; they are compared with time.Equal.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// Run runs the suite. open must return a new, empty, open store for each
// call and arrange for it to be closed (t.Cleanup); subtests run in
// sequence.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	suites := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"ResourceCreateRead", testResourceCreateRead},
		{"ResourceNotFound", testResourceNotFound},
		{"ResourcesOfKind", testResourcesOfKind},
		{"ResourceKeyConflictAcrossDefinitionVersions", testResourceKeyConflict},
		{"ResourceUIDConflict", testResourceUIDConflict},
		{"ResourceUpdate", testResourceUpdate},
		{"ResourceDeleteAndRecreate", testResourceDelete},
		{"ExactAnswer", testExactAnswer},
		{"ExactAnswerByView", testExactAnswerByView},
		{"NativeIDUniquePerTenant", testNativeID},
		{"RefusedWriteLeavesTransactionUsable", testRefusedWriteLeavesTxUsable},
		{"Claims", testClaims},
		{"Pins", testPins},
		{"PinsDroppedWithSource", testPinsDroppedWithSource},
		{"Idempotency", testIdempotency},
		{"IdempotencyRetireExpireRebind", testIdempotencyLifetime},
		{"ClaimIdempotency", testClaimIdempotency},
		{"ClaimIdempotencyConcurrent", testClaimIdempotencyConcurrent},
		{"Operations", testOperations},
		{"ClaimOperation", testClaimOperation},
		{"DueOperations", testDueOperations},
		{"PendingOperationFor", testPendingOperationFor},
		{"KeyState", testKeyState},
		{"KeyStatePins", testKeyStatePins},
		{"KeyStateClaimsOnce", testKeyStateClaimsOnce},
		{"KeyStateCreateConflict", testKeyStateCreateConflict},
		{"KeyStateExpectFreeAtFreeKey", testExpectFreeAtFreeKey},
		{"KeyStateExpectFreeAtTakenKey", testExpectFreeAtTakenKey},
		{"KeyStateExpectFreeError", testExpectFreeError},
		{"KeyStateExpectFreeConcurrent", testExpectFreeConcurrent},
		{"KeyStateExpectFreeTwoKeys", testExpectFreeTwoKeys},
		{"BlobsAndHoldings", testBlobs},
		{"ManifestsAndUploads", testManifestsUploads},
		{"Lanes", testLanes},
		{"Settings", testSettings},
		{"Sequences", testSequences},
		{"UpdateRollsBackOnError", testUpdateRollback},
		{"UpdateCanceledContext", testUpdateCanceled},
		{"ConcurrentUpdatesIsolated", testConcurrentUpdates},
		{"ViewSeesCommittedOnly", testViewCommittedOnly},
		{"ViewIsReadOnly", testViewReadOnly},
		{"ViewReleasesOnPanicAndCancel", testViewReleases},
	}
	suites = append(suites, maintenanceCases...)
	suites = append(suites, kvCases...)
	suites = append(suites, queueCases...)
	suites = append(suites, objectCases...)
	suites = append(suites, secretCases...)
	suites = append(suites, ledgerCases...)
	suites = append(suites, eventCases...)
	suites = append(suites, struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{"PeersHearAnnouncements", testPeers})
	suites = append(suites, leaseCases...)
	for _, sc := range suites {
		t.Run(sc.name, func(t *testing.T) { sc.fn(t, open(t)) })
	}
}

// Fixtures.

var (
	refV1 = form.FormRef{
		APIVersion:        "edge.forms.takoform.com/v1alpha1",
		Kind:              "KVNamespace",
		DefinitionVersion: "0.1.0",
		SchemaDigest:      "sha256:1111111111111111111111111111111111111111111111111111111111111111",
	}
	refV2 = form.FormRef{
		APIVersion:        "edge.forms.takoform.com/v1alpha1",
		Kind:              "KVNamespace",
		DefinitionVersion: "0.2.0",
		SchemaDigest:      "sha256:2222222222222222222222222222222222222222222222222222222222222222",
	}
	workerRef = form.FormRef{
		APIVersion:        "edge.forms.takoform.com/v1alpha1",
		Kind:              "Worker",
		DefinitionVersion: "0.1.0",
		SchemaDigest:      "sha256:3333333333333333333333333333333333333333333333333333333333333333",
	}
	t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
)

func at(d time.Duration) time.Time { return t0.Add(d) }

func key(tenant, space, name string) store.Key {
	return store.Key{Tenant: tenant, Space: space, APIVersion: refV1.APIVersion, Kind: refV1.Kind, Name: name}
}

// kv is a KVNamespace resource under refV1 at (tenant, space, name).
func kv(tenant, space, name, uid string) *store.Resource {
	return &store.Resource{
		Key:           key(tenant, space, name),
		UID:           uid,
		FormRef:       refV1,
		PackageDigest: "sha256:4444444444444444444444444444444444444444444444444444444444444444",
		Generation:    1,
		Revision:      1,
		Spec:          []byte(`{"title":"` + name + `"}`),
		SpecDigest:    "sha256:5555555555555555555555555555555555555555555555555555555555555555",
		Status:        []byte(`{"observedGeneration":"1"}`),
		CreatedAt:     at(time.Second),
		UpdatedAt:     at(time.Second),
	}
}

// Helpers.

func update(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func create(t *testing.T, s store.Store, rs ...*store.Resource) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, r := range rs {
			if err := tx.CreateResource(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// The assertions report with t.Errorf, never t.Fatal: an Update's fn may
// run on a goroutine of the store (SQLite's writer), where FailNow must
// not be called.

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got error %v, want one wrapping %v", what, err, want)
	}
}

func wantNoErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// equal compares got and want deeply, time.Time fields (at any depth of
// structs, pointers and slices) with time.Equal and []byte treating nil
// and empty alike.
func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !sameValue(reflect.ValueOf(got), reflect.ValueOf(want)) {
		t.Errorf("%s:\n got  %+v\n want %+v", what, deref(got), deref(want))
	}
}

var (
	timeType  = reflect.TypeOf(time.Time{})
	bytesType = reflect.TypeOf([]byte(nil))
)

func sameValue(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch {
	case a.Type() == timeType:
		return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
	case a.Type() == bytesType:
		return bytes.Equal(a.Bytes(), b.Bytes())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	default:
		return a.Interface() == b.Interface()
	}
}

// deref makes %+v print what pointers (and slices of them) point at.
func deref(v any) any {
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Pointer && !rv.IsNil():
		return rv.Elem().Interface()
	case rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Pointer:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = deref(rv.Index(i).Interface())
		}
		return out
	}
	return v
}
