package ijson

import (
	"encoding/json"
	"testing"

	"github.com/gowebpki/jcs"
)

// CanonicalValue of a json.Number is Canonical(json.Marshal(v)): a literal
// JSON does not write (which strconv.ParseFloat would read) is refused, as
// json.Marshal refuses it.
func TestCanonicalValueNumberGrammar(t *testing.T) {
	for _, lit := range []string{"+1", ".5", "5.", "00", "0x1p4", "1e", "1e+", "-", "-0", "1.0", "1E2", "1e-2", " 1", "NaN", "Inf", "1_0", "-01", "0.5e10", "123456789012345678"} {
		v := map[string]any{"n": json.Number(lit)}
		got, gerr := CanonicalValue(v)
		var want []byte
		m, werr := json.Marshal(v)
		if werr == nil {
			want, werr = jcs.Transform(m)
		}
		if (gerr == nil) != (werr == nil) || string(got) != string(want) {
			t.Errorf("json.Number(%q): CanonicalValue %s (%v); Canonical(json.Marshal) %s (%v)", lit, got, gerr, want, werr)
		}
	}
}
