package surface

import "testing"

// TestFrameworkType translates the framework's type notation, nested
// objects and collections included, and refuses unbalanced text.
func TestFrameworkType(t *testing.T) {
	for in, want := range map[string]string{
		"basetypes.StringType":                "string",
		"types.SetType[basetypes.StringType]": "set(string)",
		`types.ObjectType["bundle":basetypes.StringType, "run_worker_first":basetypes.BoolType]`:    "object({bundle=string, run_worker_first=bool})",
		`types.ListType[types.ObjectType["path":basetypes.StringType, "size":basetypes.Int64Type]]`: "list(object({path=string, size=number}))",
	} {
		if got, err := FrameworkType(in); err != nil || got != want {
			t.Errorf("FrameworkType(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"types.ListType[basetypes.StringType", "basetypes.StringType]", `types.ObjectType["a:basetypes.StringType]`} {
		if got, err := FrameworkType(bad); err == nil {
			t.Errorf("FrameworkType(%s) = %q, want an error", bad, got)
		}
	}
}

// TestFromReference reads the reference format and refuses another.
func TestFromReference(t *testing.T) {
	s, err := FromReference([]byte(`{"takoform_x": {"version": 1, "attributes": {"name": {"type": "basetypes.StringType", "required": true}}}}`))
	if err != nil || s.Types["takoform_x"].Version != 1 || !s.Types["takoform_x"].Attributes["name"].Required || s.Types["takoform_x"].Attributes["name"].Type != "string" {
		t.Fatalf("FromReference = %+v, %v", s, err)
	}
	if _, err := FromReference([]byte(`{"types": {}, "data_sources": {}}`)); err == nil {
		t.Error("a surface document was read as a reference surface")
	}
}
