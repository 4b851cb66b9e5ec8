package form_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
)

// JSON pointers (RFC 6901) are read and written by jsontext.Pointer: these
// cases pin the escapes ~0 and ~1, their order (~01 is "~1", not "/"), and
// that the stricter field-pointer rule still refuses what it refused.
func TestFieldPointerEscapes(t *testing.T) {
	doc := widget()
	props := at(doc, "desiredSchema", "properties")
	for _, name := range []string{"a/b", "c~d", "~1"} {
		props[name] = map[string]any{"type": "string"}
	}
	doc["immutableFields"] = []any{"/owner", "/a~1b", "/c~0d", "/~01"}
	d := parse(t, doc)
	for _, name := range []string{"a/b", "c~d", "~1"} {
		if !d.IsImmutable(name) {
			t.Errorf("field %q is listed (escaped) in immutableFields but not immutable", name)
		}
	}
	for _, name := range []string{"a~1b", "c~0d", "/", "~01", "a"} {
		if d.IsImmutable(name) {
			t.Errorf("field %q is immutable; only its escaped spelling's field is", name)
		}
	}

	for _, p := range []string{"", "owner", "/ow~2ner", "/owner~", "/~", "/a~1b/~x"} {
		doc := widget()
		doc["immutableFields"] = []any{"/owner", p}
		_, err := form.Parse(encode(doc))
		var de *form.DefinitionError
		if !errors.As(err, &de) {
			t.Errorf("immutableFields %q accepted (err %v)", p, err)
			continue
		}
		found := false
		for _, pr := range de.Problems {
			found = found || pr.Pointer == "/immutableFields/1" && strings.Contains(pr.Message, "is not a JSON pointer")
		}
		if !found {
			t.Errorf("immutableFields %q: no 'not a JSON pointer' problem at /immutableFields/1: %v", p, err)
		}
	}
}

// A problem under a member whose name holds "/" or "~" points at it escaped.
func TestProblemPointersEscapeNames(t *testing.T) {
	doc := widget()
	at(doc, "desiredSchema", "properties")["api/~Token"] = map[string]any{"type": "string"}
	_, err := form.Parse(encode(doc))
	var de *form.DefinitionError
	if !errors.As(err, &de) {
		t.Fatalf("a credential field was accepted (err %v)", err)
	}
	for _, p := range de.Problems {
		if p.Pointer == "/desiredSchema/properties/api~1~0Token" {
			return
		}
	}
	t.Fatalf("no problem at /desiredSchema/properties/api~1~0Token: %v", err)
}

func TestResolveLocalRefUnescapes(t *testing.T) {
	target := map[string]any{"type": "string"}
	root := map[string]any{"$defs": map[string]any{"a/b": target, "~1": map[string]any{"type": "integer"}}}
	if got := form.ResolveLocalRef(root, "#/$defs/a~1b"); got["type"] != "string" {
		t.Errorf("#/$defs/a~1b resolved to %v", got)
	}
	if got := form.ResolveLocalRef(root, "#/$defs/~01"); got["type"] != "integer" {
		t.Errorf("#/$defs/~01 resolved to %v", got)
	}
	for _, ref := range []string{"#/$defs/a/b", "#/$defs/~1", "#/$defs/a~2b", "$defs/a~1b"} {
		if got := form.ResolveLocalRef(root, ref); got != nil {
			t.Errorf("%s resolved to %v, want nothing", ref, got)
		}
	}
	if got := form.ResolveLocalRef(root, "#"); got["$defs"] == nil {
		t.Errorf("# is the root, got %v", got)
	}
}
