package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccNoAliasing: two resources of one configuration with the same
// kind, space and name — the spaces differ only in Unicode normalisation,
// which OpenTofu folds to NFC — are never both bound to one host object.
// Five runs at parallelism 10, three such pairs each: in every pair one
// resource is created and recorded, the other is refused with the
// duplicate-address diagnostic and recorded nowhere, and no two state
// entries share a uid (spec/decisions/0006-idempotency-keys-per-mutation.md).
func TestAccNoAliasing(t *testing.T) {
	t.Parallel()
	h := accHost(t, hosttest.Options{})
	c := hostClient(t, h)
	ref := edgeRef(t, "EdgeKVNamespace")
	const space = "\u00e9quipe"
	for run := range 5 {
		var cfg strings.Builder
		cfg.WriteString(providerBlock(h, "Prod North"))
		for pair := range 3 {
			name := fmt.Sprintf("dup-%d-%d", run, pair)
			fmt.Fprintf(&cfg, `
resource "takoform_edge_kv_namespace" "composed_%[1]d" {
  name  = %[2]q
  space = "\u00e9quipe"
}

resource "takoform_edge_kv_namespace" "decomposed_%[1]d" {
  name  = %[2]q
  space = "e\u0301quipe"
}
`, pair, name)
		}
		d := newTofuDir(t, edgeRegistry(t), cfg.String())
		out, err := d.run("apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=10")
		if err == nil {
			t.Fatalf("run %d: the apply succeeded with three aliased pairs:\n%s", run, out)
		}
		flat := strings.Join(strings.Fields(out), " ")
		if n := strings.Count(flat, "Another resource of this configuration creates the same kind, space and name"); n != 3 {
			t.Fatalf("run %d: %d duplicate-address refusals, want 3:\n%s", run, n, out)
		}
		if !strings.Contains(flat, "Rename one of the two resources") || !strings.Contains(flat, "takoform.provider/duplicate-address") {
			t.Fatalf("run %d: the refusal lacks its code or repair:\n%s", run, out)
		}
		uids := map[string]string{}
		byName := map[string]string{}
		for _, e := range d.state() {
			uid, name := fmt.Sprint(e.Attrs["uid"]), fmt.Sprint(e.Attrs["name"])
			if other, dup := uids[uid]; dup {
				t.Fatalf("run %d: %s and %s are both bound to uid %s", run, other, e.Address, uid)
			}
			if other, dup := byName[name]; dup {
				t.Fatalf("run %d: %s and %s both record %s", run, other, e.Address, name)
			}
			uids[uid], byName[name] = e.Address, uid
		}
		for pair := range 3 {
			name := fmt.Sprintf("dup-%d-%d", run, pair)
			res, err := c.Read(context.Background(), client.Address{Space: space, Ref: ref, Name: name})
			if err != nil {
				t.Fatalf("run %d: %s is not on the host: %v", run, name, err)
			}
			if byName[name] != res.Metadata.UID {
				t.Fatalf("run %d: the host holds %s as uid %s, state records %q", run, name, res.Metadata.UID, byName[name])
			}
		}
	}
}
