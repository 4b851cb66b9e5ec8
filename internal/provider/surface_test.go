package provider_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/surface"
)

// baselinePath is the hand-committed surface floor (decision 0030, repo
// decision 0004). No test or command rewrites it.
const baselinePath = "testdata/schema-baseline.json"

func committedBaseline(t *testing.T) *surface.Surface {
	data, err := os.ReadFile(baselinePath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := surface.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func liveSurface(t *testing.T, reg *provider.Registry) *surface.Surface {
	srv, err := provider.NewServer("test", reg)()
	if err != nil {
		t.Fatal(err)
	}
	s, err := surface.FromProviderServer(context.Background(), srv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLiveSurfaceHoldsTheFloor holds this build's provider to the
// committed baseline: any finding names the rule and the _v2 to mint.
func TestLiveSurfaceHoldsTheFloor(t *testing.T) {
	for _, f := range surface.Check(committedBaseline(t), liveSurface(t, edgeRegistry(t))) {
		t.Errorf("%s", f)
	}
}

// TestBaselineCoversTheReferenceSurface checks, once, that the committed
// baseline keeps every type and attribute of the public provider's v1alpha3
// surface with the same type and flags (the reference file's framework
// notation translated into ours).
func TestBaselineCoversTheReferenceSurface(t *testing.T) {
	want := referenceSurface(t, filepath.Join(testref.Dir(t), "terraform-surface-baseline-v1alpha3.json"))
	if len(want.Types) != 12 {
		t.Fatalf("the reference surface lists %d types", len(want.Types))
	}
	for _, f := range surface.Check(want, committedBaseline(t)) {
		t.Errorf("%s", f)
	}
}

// referenceSurface reads a public reference surface file
// (surface.FromReference).
func referenceSurface(t *testing.T, file string) *surface.Surface {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := surface.FromReference(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEachRuleOnOurOwnSurface mutates a copy of this build's own surface
// once per rule and expects exactly that rule (the unmutated copy passes).
func TestEachRuleOnOurOwnSurface(t *testing.T) {
	live := liveSurface(t, edgeRegistry(t))
	base := func() *surface.Surface {
		s, err := surface.Parse(live.JSON())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if f := surface.Check(base(), base()); len(f) != 0 {
		t.Fatalf("the unmutated surface has findings: %v", f)
	}
	attr := func(s *surface.Surface, typ, name string, f func(a *surface.Attribute)) {
		a := s.Types[typ].Attributes[name]
		f(&a)
		s.Types[typ].Attributes[name] = a
	}
	cases := []struct {
		rule   surface.Rule
		mutate func(b, c *surface.Surface)
	}{
		{surface.TypeRemoved, func(b, c *surface.Surface) { delete(c.Types, "takoform_worker_endpoint") }},
		{surface.AttributeRemoved, func(b, c *surface.Surface) { delete(c.Types["takoform_worker_cron_trigger"].Attributes, "cron") }},
		{surface.TypeChanged, func(b, c *surface.Surface) {
			attr(c, "takoform_worker_version", "handlers", func(a *surface.Attribute) { a.Type = "list(string)" })
		}},
		{surface.BecameRequired, func(b, c *surface.Surface) {
			attr(c, "takoform_queue_consumer", "dead_letter_queue", func(a *surface.Attribute) { a.Optional, a.Required = false, true })
		}},
		{surface.NewRequired, func(b, c *surface.Surface) {
			c.Types["takoform_module_worker"].Attributes["compatibility_date"] = surface.Attribute{Type: "string", Required: true}
		}},
		{surface.OptionalLost, func(b, c *surface.Surface) {
			attr(c, "takoform_at_least_once_queue", "delivery_delay_seconds", func(a *surface.Attribute) { a.Optional = false })
		}},
		{surface.ComputedLost, func(b, c *surface.Surface) {
			attr(c, "takoform_worker_endpoint", "url", func(a *surface.Attribute) { a.Computed, a.Optional = false, true })
		}},
		{surface.SensitiveLost, func(b, c *surface.Surface) {
			attr(b, "takoform_worker_version", "vars_json", func(a *surface.Attribute) { a.Sensitive = true })
		}},
		{surface.VersionDecreased, func(b, c *surface.Surface) {
			ty := c.Types["takoform_sqlite_database"]
			ty.Version = 0
			c.Types["takoform_sqlite_database"] = ty
		}},
		{surface.TombstoneReused, func(b, c *surface.Surface) {
			ty := b.Types["takoform_worker_bundle"]
			ty.Tombstones = []string{"entry_point"}
			b.Types["takoform_worker_bundle"] = ty
			c.Types["takoform_worker_bundle"].Attributes["entry_point"] = surface.Attribute{Type: "string", Optional: true}
		}},
	}
	for _, k := range cases {
		b, c := base(), base()
		k.mutate(b, c)
		got := surface.Check(b, c)
		if len(got) != 1 || got[0].Rule != k.rule.ID {
			t.Errorf("%s: findings %v", k.rule.ID, got)
		}
	}
}
