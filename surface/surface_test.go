package surface

import (
	"encoding/json"
	"fmt"
	"testing"
)

func base() *Surface {
	return &Surface{Types: map[string]Type{
		"takoform_widget": {Version: 1, Tombstones: []string{"legacy"}, Attributes: map[string]Attribute{
			"name":            {Type: "string", Required: true},
			"size":            {Type: "number", Optional: true, Computed: true},
			"color":           {Type: "string", Optional: true},
			"uid":             {Type: "string", Computed: true},
			"secret_hint":     {Type: "string", Optional: true, Sensitive: true},
			"versions":        {Type: "list(object({weight=number, worker_version=string}))", Required: true},
			"versions.weight": {Type: "number", Required: true},
		}},
		"takoform_gadget": {Version: 1, Attributes: map[string]Attribute{"name": {Type: "string", Required: true}}},
	}}
}

func clone(s *Surface) *Surface {
	b, _ := json.Marshal(s)
	var c Surface
	_ = json.Unmarshal(b, &c)
	return &c
}

func TestEachRuleFindsExactlyItsMutation(t *testing.T) {
	cases := []struct {
		rule   Rule
		mutate func(s *Surface)
	}{
		{TypeRemoved, func(s *Surface) { delete(s.Types, "takoform_gadget") }},
		{AttributeRemoved, func(s *Surface) { delete(s.Types["takoform_widget"].Attributes, "color") }},
		{TypeChanged, func(s *Surface) { setAttr(s, "size", func(a *Attribute) { a.Type = "string" }) }},
		{TypeChanged, func(s *Surface) {
			setAttr(s, "versions", func(a *Attribute) { a.Type = "list(object({weight=string, worker_version=string}))" })
		}},
		{TypeChanged, func(s *Surface) { // a required nested member added: reported once, on its parent
			setAttr(s, "versions", func(a *Attribute) { a.Type = "list(object({label=string, weight=number, worker_version=string}))" })
			s.Types["takoform_widget"].Attributes["versions.label"] = Attribute{Type: "string", Required: true}
		}},
		{BecameRequired, func(s *Surface) { setAttr(s, "color", func(a *Attribute) { a.Optional, a.Required = false, true }) }},
		{NewRequired, func(s *Surface) {
			s.Types["takoform_widget"].Attributes["region_hint"] = Attribute{Type: "string", Required: true}
		}},
		{OptionalLost, func(s *Surface) { setAttr(s, "size", func(a *Attribute) { a.Optional = false }) }},
		{ComputedLost, func(s *Surface) { setAttr(s, "uid", func(a *Attribute) { a.Computed, a.Optional = false, true }) }},
		{SensitiveLost, func(s *Surface) { setAttr(s, "secret_hint", func(a *Attribute) { a.Sensitive = false }) }},
		{VersionDecreased, func(s *Surface) { w := s.Types["takoform_widget"]; w.Version = 0; s.Types["takoform_widget"] = w }},
		{TombstoneReused, func(s *Surface) {
			s.Types["takoform_widget"].Attributes["legacy"] = Attribute{Type: "string", Optional: true}
		}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		cur := clone(base())
		c.mutate(cur)
		got := Check(base(), cur)
		if len(got) != 1 || got[0].Rule != c.rule.ID {
			t.Errorf("%s: findings %v, want exactly one %s", c.rule.ID, got, c.rule.ID)
			continue
		}
		if got[0].Remedy == "" || !contains(got[0].Remedy, got[0].Type+"_v2") {
			t.Errorf("%s: remedy %q does not name the _v2 type", c.rule.ID, got[0].Remedy)
		}
		covered[c.rule.ID] = true
	}
	for _, r := range Rules {
		if !covered[r.ID] || r.Doc == "" {
			t.Errorf("rule %s has no mutation case or no doc line", r.ID)
		}
	}
}

func TestAdditionsPass(t *testing.T) {
	cur := clone(base())
	cur.Types["takoform_widget"].Attributes["label"] = Attribute{Type: "string", Optional: true}
	cur.Types["takoform_widget"].Attributes["hostname"] = Attribute{Type: "string", Computed: true}
	cur.Types["takoform_new"] = Type{Version: 1, Attributes: map[string]Attribute{"name": {Type: "string", Required: true}}}
	setAttr(cur, "color", func(a *Attribute) { a.Computed = true }) // relaxing: O → OC
	w := cur.Types["takoform_widget"]
	w.Version = 2
	cur.Types["takoform_widget"] = w
	if got := Check(base(), cur); len(got) != 0 {
		t.Fatalf("additions are refused: %v", got)
	}
}

func setAttr(s *Surface, name string, f func(a *Attribute)) {
	a := s.Types["takoform_widget"].Attributes[name]
	f(&a)
	s.Types["takoform_widget"].Attributes[name] = a
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// bigSchemaJSON is a `providers schema -json` document of n resource
// types with 30 attributes each.
func bigSchemaJSON(n int) []byte {
	types := map[string]any{}
	for i := 0; i < n; i++ {
		attrs := map[string]any{}
		for j := 0; j < 30; j++ {
			attrs[fmt.Sprintf("attr_%d", j)] = map[string]any{"type": "string", "optional": true}
		}
		attrs["versions"] = map[string]any{"nested_type": map[string]any{"nesting_mode": "list", "attributes": map[string]any{
			"weight": map[string]any{"type": "number", "required": true}}}, "optional": true}
		types[fmt.Sprintf("example_type_%d", i)] = map[string]any{"version": 1, "block": map[string]any{"attributes": attrs}}
	}
	doc := map[string]any{"format_version": "1.0", "provider_schemas": map[string]any{
		"registry.opentofu.org/example/example": map[string]any{"resource_schemas": types}}}
	b, _ := json.Marshal(doc)
	return b
}

func TestFromSchemaJSON(t *testing.T) {
	s, err := FromSchemaJSON(bigSchemaJSON(3), "")
	if err != nil {
		t.Fatal(err)
	}
	a := s.Types["example_type_2"].Attributes["versions"]
	if len(s.Types) != 3 || a.Type != "list(object({weight=number}))" || !s.Types["example_type_0"].Attributes["versions.weight"].Required {
		t.Fatalf("derived %+v", s.Types["example_type_2"])
	}
}

// BenchmarkCheck1000Types parses a 1,000-type `providers schema -json`
// document and checks it against itself as baseline.
func BenchmarkCheck1000Types(b *testing.B) {
	doc := bigSchemaJSON(1000)
	base, err := FromSchemaJSON(doc, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cur, err := FromSchemaJSON(doc, "")
		if err != nil {
			b.Fatal(err)
		}
		if f := Check(base, cur); len(f) != 0 {
			b.Fatal(f)
		}
	}
}

// TestDataSourcesAreAFloor: the rules hold data sources as they hold
// resource types, and a finding names the element data.<name> and the
// _v2 to mint.
func TestDataSourcesAreAFloor(t *testing.T) {
	withData := func() *Surface {
		s := clone(base())
		s.DataSources = map[string]Type{"takoform_gadget": {Version: 0, Attributes: map[string]Attribute{
			"name": {Type: "string", Required: true}, "uid": {Type: "string", Computed: true}}}}
		return s
	}
	if got := Check(withData(), withData()); len(got) != 0 {
		t.Fatalf("unchanged data sources have findings: %v", got)
	}
	cases := []struct {
		rule   Rule
		mutate func(s *Surface)
	}{
		{TypeRemoved, func(s *Surface) { s.DataSources = nil }},
		{AttributeRemoved, func(s *Surface) { delete(s.DataSources["takoform_gadget"].Attributes, "uid") }},
		{TypeChanged, func(s *Surface) {
			s.DataSources["takoform_gadget"].Attributes["uid"] = Attribute{Type: "number", Computed: true}
		}},
	}
	for _, c := range cases {
		cur := withData()
		c.mutate(cur)
		got := Check(withData(), cur)
		if len(got) != 1 || got[0].Rule != c.rule.ID || got[0].Type != "data.takoform_gadget" || !contains(got[0].Remedy, "mint takoform_gadget_v2") {
			t.Errorf("%s: findings %v", c.rule.ID, got)
		}
	}
	doc := []byte(`{"format_version":"1.0","provider_schemas":{"registry.opentofu.org/example/example":{
		"data_source_schemas":{"example_thing":{"version":0,"block":{"attributes":{"uid":{"type":"string","computed":true}}}}}}}}`)
	s, err := FromSchemaJSON(doc, "")
	if err != nil {
		t.Fatal(err)
	}
	if a := s.DataSources["example_thing"].Attributes["uid"]; a.Type != "string" || !a.Computed {
		t.Fatalf("derived data sources %+v", s.DataSources)
	}
}
