package spaceid

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const committedSchema = "../spec/schemas/space-id.schema.json"

func TestCommittedSchemaUpToDate(t *testing.T) {
	got, err := os.ReadFile(committedSchema)
	if err != nil {
		t.Fatalf("%v; run `go generate ./spaceid`", err)
	}
	if !bytes.Equal(got, JSONSchema()) {
		t.Fatalf("%s differs from JSONSchema(); run `go generate ./spaceid`", committedSchema)
	}
}

func TestSchemaShape(t *testing.T) {
	b := JSONSchema()
	for i, c := range b {
		if c >= 0x7F || (c < 0x20 && c != '\n') {
			t.Fatalf("byte %d of JSONSchema() is %#x; want printable ASCII", i, c)
		}
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Fatal("JSONSchema() must end with a newline")
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["pattern"] != Pattern() || m["minLength"] != 1.0 || m["maxLength"] != float64(MaxCodePoints) ||
		m["type"] != "string" || m["$id"] != SchemaID {
		t.Fatalf("unexpected schema: %v", m)
	}
	if strings.Contains(Pattern(), `\u`) {
		t.Fatal(`pattern must not use \u escapes (RE2 lacks them)`)
	}
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// compiledSchema compiles the committed schema file with Draft 2020-12.
func compiledSchema(t testing.TB) *jsonschema.Schema {
	schemaOnce.Do(func() {
		f, err := os.Open(committedSchema)
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if schemaErr = c.AddResource(SchemaID, doc); schemaErr != nil {
			return
		}
		schema, schemaErr = c.Compile(SchemaID)
	})
	if schemaErr != nil {
		t.Fatalf("compile %s: %v", committedSchema, schemaErr)
	}
	return schema
}

func TestSchemaTableCases(t *testing.T) {
	sch := compiledSchema(t)
	for _, c := range append(validCases(), invalidCases()...) {
		err := sch.Validate(c.in)
		if (err == nil) != (c.rule == "") {
			t.Errorf("schema on %q (%s): err = %v, want valid = %v", c.in, c.name, err, c.rule == "")
		}
	}
}

// seeds returns the table cases plus each boundary of every range, alone and
// at the start, middle and end of a value.
func seeds() []string {
	var out []string
	for _, c := range append(validCases(), invalidCases()...) {
		out = append(out, c.in)
	}
	var pts []rune
	for _, s := range sets {
		for _, r := range s.ranges {
			pts = append(pts, r.lo-1, r.lo, r.hi, r.hi+1)
		}
	}
	pts = append(pts, 0x7E, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF)
	for _, r := range pts {
		if r < 0 || !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		out = append(out, s, s+"a", "a"+s, "a"+s+"b", s+s)
	}
	for _, n := range []int{1, 254, 255, 256} {
		out = append(out, strings.Repeat("é", n), strings.Repeat("a", n), strings.Repeat("\U0001F600", n))
		out = append(out, strings.Repeat("a", n-1)+" ", " "+strings.Repeat("a", n-1))
	}
	return out
}

func FuzzAgreement(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	sch := compiledSchema(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // no JSON document can carry it; see TestInvalidUTF8
		}
		goErr := Validate(s)
		schErr := sch.Validate(s)
		if (goErr == nil) != (schErr == nil) {
			t.Fatalf("disagreement on %q: Go: %v; schema: %v", s, goErr, schErr)
		}
	})
}

// Every code point, alone and at each position, against the Go-compiled pattern.
func TestPatternEveryCodePoint(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	re := regexp.MustCompile(Pattern())
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		for _, s := range []string{c, c + "a", "a" + c, "a" + c + "b"} {
			if re.MatchString(s) != Valid(s) {
				t.Fatalf("pattern and Validate disagree on %q", s)
			}
		}
	}
}
