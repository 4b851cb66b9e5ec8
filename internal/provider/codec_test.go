package provider_test

import (
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/wire"
)

func fieldAttrs(c *provider.Codec) []string {
	var out []string
	for _, f := range c.Fields {
		out = append(out, f.Attr)
	}
	return out
}

// TestCodecPerExactFormRef (decision 0017; repo decision 0003 rule 2): a type
// supporting Gizmo 1.0.0 and 1.1.0 carries one codec per exact ref, each
// derived from THAT definition — only 1.1.0's has the coating member and
// the serialUrl output — while the schema and the create codec come from
// the default create definition. Each codec encodes and decodes by its own
// declarations: 1.0.0's drops coating and reads an answer without outputs,
// which 1.1.0's refuses. Default create refs are per type: a _v2 of the
// same kind creates under its own.
func TestCodecPerExactFormRef(t *testing.T) {
	cat := evolutionCatalog(t)
	v100, v110, v200 := gizmoRef(t, cat, "1.0.0"), gizmoRef(t, cat, "1.1.0"), gizmoRef(t, cat, "2.0.0")
	reg := gizmoBuild(t, cat, gizmoType("takoform_gizmo", v110, v100), gizmoType("takoform_gizmo_v2", v200))
	ts := reg.Types["takoform_gizmo"]
	c100, ok100 := ts.Codec(v100)
	c110, ok110 := ts.Codec(v110)
	if !ok100 || !ok110 || c100.Ref != v100 || c110.Ref != v110 || c100.Def.Ref() != v100 || c110.Def.Ref() != v110 {
		t.Fatalf("codecs are not keyed by their own exact refs: %v %v", c100, c110)
	}
	if want := []form.FormRef{v100, v110}; !reflect.DeepEqual(ts.KnownRefs(), want) {
		t.Errorf("known refs %v, want %v", ts.KnownRefs(), want)
	}
	if ts.Create != c110 || ts.DefaultCreate != v110 || reg.Types["takoform_gizmo_v2"].DefaultCreate != v200 {
		t.Errorf("default create refs are not per type: %v, %v", ts.DefaultCreate, reg.Types["takoform_gizmo_v2"].DefaultCreate)
	}
	if got := fieldAttrs(c100); strings.Contains(strings.Join(got, " "), "coating") || len(c100.Outputs) != 0 {
		t.Errorf("1.0.0's codec has 1.1.0's declarations: fields %v outputs %v", got, c100.Outputs)
	}
	if got := fieldAttrs(c110); !strings.Contains(strings.Join(got, " "), "coating") || !reflect.DeepEqual(c110.Outputs, []string{"serialUrl"}) {
		t.Errorf("1.1.0's codec lacks its own declarations: fields %v outputs %v", got, c110.Outputs)
	}
	if _, ok := ts.Schema.Attributes["serial_url"]; !ok {
		t.Error("the schema lacks the default create definition's output")
	}
	if got := fieldAttrs(reg.Types["takoform_gizmo_v2"].Create); strings.Contains(strings.Join(got, " "), "finish") {
		t.Errorf("the _v2 codec has 1.0.0's finish: %v", got)
	}

	attrs := map[string]any{"sprocket_count": big.NewFloat(2), "serial_number": "AB-0001", "coating": "wax"}
	s100, err1 := c100.Encode(attrs)
	s110, err2 := c110.Encode(attrs)
	if err1 != nil || err2 != nil || s100["coating"] != nil || s110["coating"] != "wax" {
		t.Errorf("encode: 1.0.0 %v (%v), 1.1.0 %v (%v)", s100, err1, s110, err2)
	}

	res := &wire.Resource{APIVersion: v100.APIVersion, Kind: v100.Kind, Form: wire.FormReference{FormRef: v100},
		Metadata: wire.Metadata{Name: "g", Space: "lab", UID: "u-1", Generation: "1", Revision: "1"},
		Spec:     []byte(`{"sprocketCount":2,"serialNumber":"AB-0001","finish":"matte"}`)}
	got := map[string]any{}
	if err := c100.Decode(res, got, nil); err != nil || got["form_definition_version"] != "1.0.0" || got["outputs_json"] != "{}" {
		t.Errorf("1.0.0's codec on its own answer: %v, %v", got, err)
	}
	if err := c110.Decode(res, map[string]any{}, nil); err == nil || !strings.Contains(err.Error(), `declared output "serialUrl"`) {
		t.Errorf("1.1.0's codec accepted an answer without its declared output: %v", err)
	}

	bad := []provider.TypeDecl{gizmoType("takoform_gizmo", v100, form.FormRef{APIVersion: v100.APIVersion, Kind: "Gizmo", DefinitionVersion: "9.9.9", SchemaDigest: v100.SchemaDigest})}
	if _, err := provider.NewRegistry(cat, bad); err == nil {
		t.Error("a supported ref missing from the catalog was accepted")
	}
}
