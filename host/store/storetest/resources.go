package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

func testResourceCreateRead(t *testing.T, s store.Store) {
	want := kv("acme", "prod", "sessions", "uid-1")
	want.NativeID = "ns-8f3a"
	create(t, s, want, kv("acme", "prod", "cache", "uid-2"))
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Resource(want.Key)
		wantNoErr(t, "Resource", err)
		equal(t, "Resource by key", got, want)
		got, err = tx.ResourceByUID("uid-1")
		wantNoErr(t, "ResourceByUID", err)
		equal(t, "Resource by UID", got, want)
		got, err = tx.ResourceByNativeID("acme", "ns-8f3a")
		wantNoErr(t, "ResourceByNativeID", err)
		equal(t, "Resource by native id", got, want)
		return nil
	})
}

// ResourcesOfKind lists one kind across tenants and spaces, in UID order,
// and nothing of another kind or a deleted resource.
func testResourcesOfKind(t *testing.T, s store.Store) {
	b := kv("globex", "dev", "b", "uid-b")
	a := kv("acme", "prod", "a", "uid-a")
	gone := kv("acme", "prod", "gone", "uid-c")
	other := kv("acme", "prod", "w", "uid-0")
	other.Kind = "Worker"
	create(t, s, b, a, gone, other)
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource("uid-c") })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.ResourcesOfKind(refV1.APIVersion, refV1.Kind)
		wantNoErr(t, "ResourcesOfKind", err)
		equal(t, "ResourcesOfKind", got, []*store.Resource{a, b})
		none, err := tx.ResourcesOfKind(refV1.APIVersion, "Absent")
		wantNoErr(t, "ResourcesOfKind of an absent kind", err)
		if len(none) != 0 {
			t.Errorf("ResourcesOfKind of an absent kind = %d resources, want none", len(none))
		}
		return nil
	})
}

func testResourceNotFound(t *testing.T, s store.Store) {
	create(t, s, kv("acme", "prod", "sessions", "uid-1"))
	update(t, s, func(tx store.Tx) error {
		for _, k := range []store.Key{
			key("acme", "prod", "other"),
			key("acme", "staging", "sessions"),
			key("globex", "prod", "sessions"),
			{Tenant: "acme", Space: "prod", APIVersion: refV1.APIVersion, Kind: "Worker", Name: "sessions"},
		} {
			_, err := tx.Resource(k)
			wantErr(t, "Resource("+k.Tenant+"/"+k.Space+"/"+k.Kind+"/"+k.Name+")", err, store.ErrNotFound)
		}
		_, err := tx.ResourceByUID("uid-404")
		wantErr(t, "ResourceByUID", err, store.ErrNotFound)
		_, err = tx.ResourceByNativeID("acme", "ns-404")
		wantErr(t, "ResourceByNativeID", err, store.ErrNotFound)
		_, err = tx.ResourceByNativeID("acme", "")
		wantErr(t, "ResourceByNativeID of the empty claim", err, store.ErrNotFound)
		wantErr(t, "UpdateResource", tx.UpdateResource(kv("acme", "prod", "sessions", "uid-404")), store.ErrNotFound)
		wantErr(t, "DeleteResource", tx.DeleteResource("uid-404"), store.ErrNotFound)
		return nil
	})
}

// The Key has no definition version: a second resource with the same key
// under another FormRef is the same name (spec/host-api-v1alpha3.md §1.6).
func testResourceKeyConflict(t *testing.T, s store.Store) {
	first := kv("acme", "prod", "sessions", "uid-1")
	create(t, s, first)
	second := kv("acme", "prod", "sessions", "uid-2")
	second.FormRef = refV2
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.CreateResource(second) })
	wantErr(t, "CreateResource of the same key under another definition version", err, store.ErrConflict)
	// The same name in another space, tenant or kind is another address.
	other := []*store.Resource{kv("acme", "staging", "sessions", "uid-3"), kv("globex", "prod", "sessions", "uid-4")}
	worker := kv("acme", "prod", "sessions", "uid-5")
	worker.Kind, worker.FormRef = "Worker", workerRef
	create(t, s, append(other, worker)...)
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Resource(first.Key)
		wantNoErr(t, "Resource", err)
		equal(t, "the first resource, unchanged", got, first)
		_, err = tx.ResourceByUID("uid-2")
		wantErr(t, "ResourceByUID of the refused create", err, store.ErrNotFound)
		for _, r := range append(other, worker) {
			got, err := tx.ResourceByUID(r.UID)
			wantNoErr(t, "ResourceByUID", err)
			equal(t, "resource "+r.UID, got, r)
		}
		return nil
	})
}

func testResourceUIDConflict(t *testing.T, s store.Store) {
	create(t, s, kv("acme", "prod", "sessions", "uid-1"))
	for _, r := range []*store.Resource{kv("acme", "prod", "cache", "uid-1"), kv("globex", "dev", "x", "uid-1")} {
		err := s.Update(t.Context(), func(tx store.Tx) error { return tx.CreateResource(r) })
		wantErr(t, "CreateResource with a used UID at "+r.Tenant+"/"+r.Name, err, store.ErrConflict)
	}
	view(t, s, func(tx store.Tx) error {
		_, err := tx.Resource(key("acme", "prod", "cache"))
		wantErr(t, "Resource of the refused create", err, store.ErrNotFound)
		return nil
	})
}

func testResourceUpdate(t *testing.T, s store.Store) {
	orig := kv("acme", "prod", "sessions", "uid-1")
	create(t, s, orig)
	next := kv("acme", "prod", "sessions", "uid-1")
	next.PackageDigest = "sha256:6666666666666666666666666666666666666666666666666666666666666666"
	next.Generation, next.Revision = 2, 3
	next.Spec = []byte(`{"title":"sessions v2"}`)
	next.SpecDigest = "sha256:7777777777777777777777777777777777777777777777777777777777777777"
	next.Status = []byte(`{"observedGeneration":"2"}`)
	next.NativeID = "ns-2"
	next.UpdatedAt = at(time.Minute)
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(next) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.ResourceByUID("uid-1")
		wantNoErr(t, "ResourceByUID", err)
		equal(t, "updated resource", got, next)
		got, err = tx.ResourceByNativeID("acme", "ns-2")
		wantNoErr(t, "ResourceByNativeID after update", err)
		equal(t, "updated resource by native id", got, next)
		return nil
	})
	// Dropping the claim releases it.
	next.NativeID, next.Revision = "", 4
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(next) })
	view(t, s, func(tx store.Tx) error {
		_, err := tx.ResourceByNativeID("acme", "ns-2")
		wantErr(t, "ResourceByNativeID of a dropped claim", err, store.ErrNotFound)
		got, err := tx.ResourceByUID("uid-1")
		wantNoErr(t, "ResourceByUID", err)
		equal(t, "resource without claim", got, next)
		return nil
	})
}

// Delete + re-create of a name yields a new incarnation (spec/host-api-v1alpha3.md §1.4).
func testResourceDelete(t *testing.T, s store.Store) {
	r := kv("acme", "prod", "sessions", "uid-1")
	r.NativeID = "ns-1"
	create(t, s, r, kv("acme", "prod", "cache", "uid-2"))
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource("uid-1") })
	again := kv("acme", "prod", "sessions", "uid-3")
	again.NativeID = "ns-1"
	create(t, s, again)
	view(t, s, func(tx store.Tx) error {
		_, err := tx.ResourceByUID("uid-1")
		wantErr(t, "ResourceByUID of the deleted incarnation", err, store.ErrNotFound)
		got, err := tx.Resource(r.Key)
		wantNoErr(t, "Resource", err)
		equal(t, "the new incarnation", got, again)
		got, err = tx.ResourceByNativeID("acme", "ns-1")
		wantNoErr(t, "ResourceByNativeID", err)
		equal(t, "the new claimant", got, again)
		_, err = tx.ResourceByUID("uid-2")
		wantNoErr(t, "ResourceByUID of the untouched resource", err)
		return nil
	})
}

// A native id is claimed once per tenant, across spaces and kinds; the
// same native id in another tenant is another claim (spec/host-api-v1alpha3.md §1.7).
func testNativeID(t *testing.T, s store.Store) {
	a := kv("acme", "prod", "sessions", "uid-1")
	a.NativeID = "ns-shared"
	b := kv("globex", "prod", "sessions", "uid-2")
	b.NativeID = "ns-shared"
	unclaimed := []*store.Resource{kv("acme", "prod", "u1", "uid-3"), kv("acme", "prod", "u2", "uid-4")}
	create(t, s, append([]*store.Resource{a, b}, unclaimed...)...)

	c := kv("acme", "staging", "other", "uid-5")
	c.Kind, c.FormRef, c.NativeID = "Worker", workerRef, "ns-shared"
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.CreateResource(c) })
	wantErr(t, "CreateResource claiming a native id the tenant has claimed", err, store.ErrConflict)

	claimer := kv("acme", "prod", "u1", "uid-3")
	claimer.NativeID, claimer.Revision = "ns-shared", 2
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.UpdateResource(claimer) })
	wantErr(t, "UpdateResource claiming a native id the tenant has claimed", err, store.ErrConflict)

	view(t, s, func(tx store.Tx) error {
		for _, want := range []*store.Resource{a, b} {
			got, err := tx.ResourceByNativeID(want.Tenant, "ns-shared")
			wantNoErr(t, "ResourceByNativeID", err)
			equal(t, "claimant in "+want.Tenant, got, want)
		}
		got, err := tx.ResourceByUID("uid-3")
		wantNoErr(t, "ResourceByUID", err)
		equal(t, "resource whose claim was refused", got, unclaimed[0])
		return nil
	})

	// Deleting the claimant releases the claim.
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource("uid-1") })
	create(t, s, c)
	view(t, s, func(tx store.Tx) error {
		got, err := tx.ResourceByNativeID("acme", "ns-shared")
		wantNoErr(t, "ResourceByNativeID", err)
		equal(t, "new claimant", got, c)
		return nil
	})
}

// A claim (e.g. a custom-domain hostname) is held by one UID per tenant,
// across spaces (spec/host-api-v1alpha3.md §6.5); deleting the holder releases it.
func testClaims(t *testing.T, s store.Store) {
	const host = "api.example.com"
	create(t, s, kv("acme", "prod", "a", "uid-1"), kv("acme", "staging", "b", "uid-2"),
		kv("globex", "prod", "a", "uid-3"), kv("acme", "prod", "c", "uid-4"))
	update(t, s, func(tx store.Tx) error {
		_, err := tx.ClaimHolder("acme", host)
		wantErr(t, "ClaimHolder of an unheld claim", err, store.ErrNotFound)
		wantNoErr(t, "PutClaim", tx.PutClaim("acme", host, "uid-1"))
		wantNoErr(t, "PutClaim again by its holder", tx.PutClaim("acme", host, "uid-1"))
		wantErr(t, "PutClaim by another space's resource", tx.PutClaim("acme", host, "uid-2"), store.ErrConflict)
		wantNoErr(t, "PutClaim in another tenant", tx.PutClaim("globex", host, "uid-3"))
		wantNoErr(t, "PutClaim", tx.PutClaim("acme", "www.example.com", "uid-1"))
		return tx.PutClaim("acme", "shop.example.com", "uid-4")
	})
	holder := func(tenant, claim, want string) {
		t.Helper()
		view(t, s, func(tx store.Tx) error {
			got, err := tx.ClaimHolder(tenant, claim)
			if want == "" {
				wantErr(t, "ClaimHolder of "+claim, err, store.ErrNotFound)
				return nil
			}
			wantNoErr(t, "ClaimHolder", err)
			equal(t, "holder of "+claim+" in "+tenant, got, want)
			return nil
		})
	}
	holder("acme", host, "uid-1")
	holder("globex", host, "uid-3")
	holder("acme", "www.example.com", "uid-1")
	update(t, s, func(tx store.Tx) error { return tx.ReleaseClaims("uid-1") })
	holder("acme", host, "")
	holder("acme", "www.example.com", "")
	holder("globex", host, "uid-3")
	holder("acme", "shop.example.com", "uid-4")
	update(t, s, func(tx store.Tx) error { return tx.PutClaim("acme", host, "uid-2") })
	holder("acme", host, "uid-2")
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource("uid-4") })
	holder("acme", "shop.example.com", "")
	holder("acme", host, "uid-2")
}

func pin(source, pointer string, target *store.Resource) store.Pin {
	return store.Pin{
		SourceUID:        source,
		Pointer:          pointer,
		RelationPointer:  relationPointer(pointer),
		TargetAPIVersion: target.APIVersion,
		TargetKind:       target.Kind,
		TargetName:       target.Name,
		TargetUID:        target.UID,
		TargetFormRef:    target.FormRef,
		Binding:          "module-worker.kv@1.0.0#sha256:8888888888888888888888888888888888888888888888888888888888888888",
	}
}

// relationPointer turns /kvBindings/0/resource into /kvBindings/*/resource.
func relationPointer(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, "/")
}

func sortPins(pins []store.Pin) []store.Pin {
	pins = slices.Clone(pins)
	slices.SortFunc(pins, func(a, b store.Pin) int {
		return strings.Compare(a.SourceUID+"\x00"+a.Pointer, b.SourceUID+"\x00"+b.Pointer)
	})
	return pins
}

func testPins(t *testing.T, s store.Store) {
	kv1, kv2 := kv("acme", "prod", "kv1", "uid-1"), kv("acme", "prod", "kv2", "uid-2")
	w1 := kv("acme", "prod", "w1", "uid-3")
	w2 := kv("acme", "prod", "w2", "uid-4")
	foreign := kv("acme", "staging", "w1", "uid-5") // same target name, other space
	create(t, s, kv1, kv2, w1, w2, foreign)

	first := []store.Pin{pin("uid-3", "/kvBindings/1/resource", kv2), pin("uid-3", "/kvBindings/0/resource", kv1)}
	w2pins := []store.Pin{pin("uid-4", "/kvBindings/0/resource", kv1)}
	stagingKV1 := *kv1
	stagingKV1.Space, stagingKV1.UID = "staging", "uid-9"
	foreignPins := []store.Pin{pin("uid-5", "/kvBindings/0/resource", &stagingKV1)}
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "ReplacePins w1", tx.ReplacePins("uid-3", first))
		wantNoErr(t, "ReplacePins w2", tx.ReplacePins("uid-4", w2pins))
		return tx.ReplacePins("uid-5", foreignPins)
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Pins("uid-3")
		wantNoErr(t, "Pins", err)
		equal(t, "Pins in the order given", got, first)
		got, err = tx.PinsTo("uid-1")
		wantNoErr(t, "PinsTo", err)
		equal(t, "PinsTo kv1", sortPins(got), sortPins([]store.Pin{first[1], w2pins[0]}))
		got, err = tx.PinsToName("acme", "prod", kv1.APIVersion, kv1.Kind, "kv1")
		wantNoErr(t, "PinsToName", err)
		equal(t, "PinsToName kv1 in prod", sortPins(got), sortPins([]store.Pin{first[1], w2pins[0]}))
		got, err = tx.PinsToName("acme", "staging", kv1.APIVersion, kv1.Kind, "kv1")
		wantNoErr(t, "PinsToName", err)
		equal(t, "PinsToName kv1 in staging", got, foreignPins)
		got, err = tx.PinsToName("globex", "prod", kv1.APIVersion, kv1.Kind, "kv1")
		wantNoErr(t, "PinsToName", err)
		equal(t, "PinsToName in another tenant", len(got), 0)
		got, err = tx.Pins("uid-2")
		wantNoErr(t, "Pins of a resource holding none", err)
		equal(t, "Pins of a resource holding none", len(got), 0)
		return nil
	})

	// Replace exactly: w1 now pins only kv2, under a new pointer.
	second := []store.Pin{pin("uid-3", "/kvBindings/0/resource", kv2)}
	update(t, s, func(tx store.Tx) error { return tx.ReplacePins("uid-3", second) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Pins("uid-3")
		wantNoErr(t, "Pins", err)
		equal(t, "Pins after replace", got, second)
		got, err = tx.PinsTo("uid-1")
		wantNoErr(t, "PinsTo", err)
		equal(t, "PinsTo kv1 after replace", got, w2pins)
		got, err = tx.PinsTo("uid-2")
		wantNoErr(t, "PinsTo", err)
		equal(t, "PinsTo kv2 after replace", got, second)
		return nil
	})

	// kv1 replaced by a new incarnation: pins still hold the old UID and
	// are found by name (drift), not by the new UID.
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "DeleteResource", tx.DeleteResource("uid-1"))
		return tx.CreateResource(kv("acme", "prod", "kv1", "uid-6"))
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.PinsTo("uid-6")
		wantNoErr(t, "PinsTo", err)
		equal(t, "PinsTo the new incarnation", len(got), 0)
		got, err = tx.PinsTo("uid-1")
		wantNoErr(t, "PinsTo", err)
		equal(t, "PinsTo the deleted incarnation", got, w2pins)
		got, err = tx.PinsToName("acme", "prod", kv1.APIVersion, kv1.Kind, "kv1")
		wantNoErr(t, "PinsToName", err)
		equal(t, "PinsToName after replacement", got, w2pins)
		return nil
	})

	// Replacing with nothing leaves nothing.
	update(t, s, func(tx store.Tx) error { return tx.ReplacePins("uid-3", nil) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Pins("uid-3")
		wantNoErr(t, "Pins", err)
		equal(t, "Pins after replacing with none", len(got), 0)
		got, err = tx.PinsTo("uid-2")
		wantNoErr(t, "PinsTo", err)
		equal(t, "PinsTo kv2", len(got), 0)
		return nil
	})
}

func testPinsDroppedWithSource(t *testing.T, s store.Store) {
	kv1 := kv("acme", "prod", "kv1", "uid-1")
	w1, w2 := kv("acme", "prod", "w1", "uid-2"), kv("acme", "prod", "w2", "uid-3")
	create(t, s, kv1, w1, w2)
	w1pins := []store.Pin{pin("uid-2", "/kvBindings/0/resource", kv1), pin("uid-2", "/kvBindings/1/resource", kv1)}
	w2pins := []store.Pin{pin("uid-3", "/kvBindings/0/resource", kv1)}
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "ReplacePins", tx.ReplacePins("uid-2", w1pins))
		return tx.ReplacePins("uid-3", w2pins)
	})
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource("uid-2") })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Pins("uid-2")
		wantNoErr(t, "Pins of a deleted source", err)
		equal(t, "Pins of a deleted source", len(got), 0)
		got, err = tx.PinsTo("uid-1")
		wantNoErr(t, "PinsTo", err)
		equal(t, "PinsTo kv1 after its holder was deleted", got, w2pins)
		got, err = tx.PinsToName("acme", "prod", kv1.APIVersion, kv1.Kind, "kv1")
		wantNoErr(t, "PinsToName", err)
		equal(t, "PinsToName kv1 after its holder was deleted", got, w2pins)
		return nil
	})
}

// A write a unique constraint refuses — a native id the tenant has
// claimed, a taken key or UID — is an error wrapping store.ErrConflict
// that leaves the transaction usable: the same Update goes on writing and
// commits what it wrote, refusals excepted (store.Tx; decision
// spec/decisions/0068-one-sql-core.md).
func testRefusedWriteLeavesTxUsable(t *testing.T, s store.Store) {
	a := kv("acme", "prod", "a", "uid-1")
	a.NativeID = "ns-a"
	b := kv("acme", "prod", "b", "uid-2")
	create(t, s, a, b)

	claimer := kv("acme", "prod", "b", "uid-2")
	claimer.NativeID, claimer.Revision = "ns-a", 2
	renamed := kv("acme", "prod", "b", "uid-2")
	renamed.NativeID, renamed.Revision = "ns-b", 3
	fresh := kv("acme", "prod", "c", "uid-3")
	sameUID := kv("acme", "prod", "d", "uid-1")
	update(t, s, func(tx store.Tx) error {
		wantErr(t, "UpdateResource claiming a native id the tenant has claimed", tx.UpdateResource(claimer), store.ErrConflict)
		wantNoErr(t, "UpdateResource after the refusal", tx.UpdateResource(renamed))
		wantErr(t, "CreateResource of a taken UID", tx.CreateResource(sameUID), store.ErrConflict)
		wantNoErr(t, "CreateResource after the refusal", tx.CreateResource(fresh))
		wantNoErr(t, "PutClaim", tx.PutClaim("acme", "api.example.com", "uid-1"))
		wantErr(t, "PutClaim held by another", tx.PutClaim("acme", "api.example.com", "uid-3"), store.ErrConflict)
		return tx.PutClaim("acme", "www.example.com", "uid-3")
	})
	view(t, s, func(tx store.Tx) error {
		for _, want := range []*store.Resource{a, renamed, fresh} {
			got, err := tx.ResourceByUID(want.UID)
			wantNoErr(t, "ResourceByUID "+want.UID, err)
			equal(t, "resource "+want.UID, got, want)
		}
		got, err := tx.ResourceByNativeID("acme", "ns-b")
		wantNoErr(t, "ResourceByNativeID of the claim written after the refusal", err)
		equal(t, "claimant of ns-b", got, renamed)
		_, err = tx.ResourceByUID("uid-4")
		wantErr(t, "ResourceByUID of nothing", err, store.ErrNotFound)
		for claim, want := range map[string]string{"api.example.com": "uid-1", "www.example.com": "uid-3"} {
			holder, err := tx.ClaimHolder("acme", claim)
			wantNoErr(t, "ClaimHolder "+claim, err)
			if holder != want {
				t.Errorf("ClaimHolder %s = %s, want %s", claim, holder, want)
			}
		}
		return nil
	})
}
