package form

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/takoform/takoform/ijson"
)

var messagePrinter = message.NewPrinter(language.English)

// Diagnostic is one reason a desired spec is refused: the JSON pointer into
// the spec ("" for the spec itself) and a message. It is the shape of
// validate's diagnostics (spec/host-api-v1alpha3.md §3.4 (3)).
type Diagnostic struct {
	Pointer string `json:"field,omitempty"`
	Message string `json:"message"`
}

// compile compiles the desired and output schemas once and checks every
// declared top-level default against its own property schema (compiled by
// the same compiler as the desired schema: the document is checked and
// compiled once, not once per default).
func (d *Definition) compile(v *verifier) {
	c, desiredURL, err := resourceCompiler("desired", d.desired)
	if err == nil {
		d.schema, err = c.Compile(desiredURL)
	}
	if err != nil {
		v.add("/desiredSchema", "the desired schema does not compile: %v", err)
		return
	}
	if d.output != nil {
		if d.outSchema, err = compileSchema("output", d.output); err != nil {
			v.add("/outputSchema", "the output schema does not compile: %v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.defaults)) {
		sub, err := c.Compile(desiredURL + pointerTo("#", "properties", name))
		if err == nil {
			err = sub.Validate(deepCopy(d.defaults[name]))
		}
		if err != nil {
			v.add(pointerTo("/desiredSchema", "properties", name, "default"), "the default does not satisfy its own schema: %v", firstLine(err))
		}
	}
}

// compileSchema compiles doc as the resource urn:takoform:<name>.json.
func compileSchema(name string, doc map[string]any) (*jsonschema.Schema, error) {
	c, url, err := resourceCompiler(name, doc)
	if err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// resourceCompiler is a compiler holding doc as the resource
// urn:takoform:<name>.json, and that URL.
func resourceCompiler(name string, doc map[string]any) (*jsonschema.Compiler, string, error) {
	c := newCompiler()
	url := "urn:takoform:" + name + ".json"
	return c, url, c.AddResource(url, doc)
}

// newCompiler is a JSON Schema 2020-12 compiler whose "pattern" regexps
// come from one process-wide cache.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(cachedRegexp)
	return c
}

// patterns holds compiled "pattern" regexps by source, at most
// maxPatterns of them: the metaschema check and the compile of a schema
// both compile each pattern, and the definitions of a family share many.
// A *regexp.Regexp is immutable and safe for concurrent use.
var (
	patterns    sync.Map // string -> *regexp.Regexp
	patternsLen atomic.Int64
)

const maxPatterns = 4096

// cachedRegexp is the library's own engine (regexp.Compile, RE2 syntax)
// behind the cache.
func cachedRegexp(src string) (jsonschema.Regexp, error) {
	if v, ok := patterns.Load(src); ok {
		if re, ok := v.(*regexp.Regexp); ok {
			return re, nil
		}
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	if patternsLen.Load() < maxPatterns {
		if _, loaded := patterns.LoadOrStore(src, re); !loaded {
			patternsLen.Add(1)
		}
	}
	return re, nil
}

// ValidateSpec validates a decoded desired spec (as returned by
// ijson.Decode: numbers as json.Number) against the desired schema. It
// returns nil when valid, else the leaf diagnostics sorted by pointer. It
// does not materialise defaults; call Materialize first (spec/host-api-v1alpha3.md §5.6).
func (d *Definition) ValidateSpec(spec any) []Diagnostic {
	err := d.schema.Validate(spec)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Diagnostic{{Message: err.Error()}}
	}
	var out []Diagnostic
	collectLeaves(ve, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// ValidateOutputs validates a decoded status.outputs document against the
// declared output schema (spec/host-api-v1alpha3.md §5.3); a Form without outputs accepts only
// a nil document.
func (d *Definition) ValidateOutputs(outputs any) []Diagnostic {
	if d.outSchema == nil {
		if outputs != nil {
			return []Diagnostic{{Message: "the Form declares no outputs; omit status.outputs"}}
		}
		return nil
	}
	if err := d.outSchema.Validate(outputs); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			var out []Diagnostic
			collectLeaves(ve, &out)
			return out
		}
		return []Diagnostic{{Message: err.Error()}}
	}
	return nil
}

// ValidateSpecJSON strictly decodes data (ijson) and validates it; an
// undecodable document is one diagnostic at its JSON pointer.
func (d *Definition) ValidateSpecJSON(data []byte) []Diagnostic {
	spec, err := ijson.Decode(data)
	if err != nil {
		var je *ijson.Error
		if errors.As(err, &je) {
			return []Diagnostic{{Pointer: je.Pointer, Message: je.Detail}}
		}
		return []Diagnostic{{Message: err.Error()}}
	}
	return d.ValidateSpec(spec)
}

func collectLeaves(ve *jsonschema.ValidationError, out *[]Diagnostic) {
	if len(ve.Causes) == 0 {
		*out = append(*out, Diagnostic{Pointer: pointerTo("", ve.InstanceLocation...), Message: leafMessage(ve.ErrorKind)})
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(c, out)
	}
}

// Diagnostic messages are bounded whatever the instance holds: at most
// namedMembers member names (each cut to boundBytes) before the rest are
// counted, and at most MaxMessageBytes in all.
const (
	namedMembers = 5
	boundBytes   = 64
	// MaxMessageBytes bounds a diagnostic's message, in bytes.
	MaxMessageBytes = 1024
)

// leafMessage is the message of one schema violation: the library's,
// except that a list of unknown members names the first few (in sorted
// order) and counts the rest, and any message is cut at MaxMessageBytes.
func leafMessage(k jsonschema.ErrorKind) string {
	if ap, ok := k.(*kind.AdditionalProperties); ok && (len(ap.Properties) > namedMembers || slices.ContainsFunc(ap.Properties, func(p string) bool { return len(p) > boundBytes })) {
		names := slices.Sorted(slices.Values(ap.Properties))
		first := make([]string, 0, namedMembers)
		for _, n := range names[:min(len(names), namedMembers)] {
			first = append(first, Truncate(n, boundBytes))
		}
		msg := (&kind.AdditionalProperties{Properties: first}).LocalizedString(messagePrinter)
		if rest := len(names) - len(first); rest > 0 {
			msg = strings.TrimSuffix(msg, " not allowed") + fmt.Sprintf(" and %d more not allowed", rest)
		}
		return Truncate(msg, MaxMessageBytes)
	}
	return Truncate(k.LocalizedString(messagePrinter), MaxMessageBytes)
}

// Truncate returns s when it is at most n bytes long; otherwise its first
// n bytes or fewer (cut at a UTF-8 boundary) followed by "… (K more
// bytes)", K the bytes left out. Messages quoting input use it to stay
// bounded whatever the input holds.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Defaults returns a copy of the declared top-level defaults, by field.
func (d *Definition) Defaults() map[string]any {
	out := make(map[string]any, len(d.defaults))
	for k, v := range d.defaults {
		out[k] = deepCopy(v)
	}
	return out
}

// Materialize returns a copy of spec with every declared top-level default
// filled in where the property is absent (spec/host-api-v1alpha3.md §5.6). A spec that is not
// an object is returned unchanged (validation refuses it).
func (d *Definition) Materialize(spec any) any {
	m, ok := spec.(map[string]any)
	if !ok {
		return spec
	}
	out := make(map[string]any, len(m)+len(d.defaults))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range d.defaults {
		if _, present := out[k]; !present {
			out[k] = deepCopy(v)
		}
	}
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	default:
		return v
	}
}

// SpecDigest is the digest of a materialised spec (spec/host-api-v1alpha3.md §3.4 (4)):
// ijson.DigestValue of the spec.
func SpecDigest(spec any) (string, error) {
	dg, err := ijson.DigestValue(spec)
	if err != nil {
		return "", fmt.Errorf("spec digest: %w", err)
	}
	return dg, nil
}

// MergeDiagnostics puts semantic findings (a family's rules, which say
// what is wrong in the field's own terms) first and keeps only the schema
// findings about other fields, so one mistake is reported once and in the
// most specific words.
func MergeDiagnostics(semantic, schema []Diagnostic) []Diagnostic {
	out := append([]Diagnostic(nil), semantic...)
	for _, d := range schema {
		covered := false
		for _, s := range semantic {
			if d.Pointer == s.Pointer || strings.HasPrefix(d.Pointer, s.Pointer+"/") || strings.HasPrefix(s.Pointer, d.Pointer+"/") {
				covered = true
			}
		}
		if !covered {
			out = append(out, d)
		}
	}
	return out
}
