package spaceid

// The code-point table below is the single source of truth for decision 0003
// (spec/host-api-v1alpha3.md §1.1). Validate and JSONSchema are both derived from it.

// cpRange is an inclusive range of code points.
type cpRange struct {
	lo, hi rune
	what   string // human name, used in error messages
}

// cpSet is a named set of code points refused by one rule.
type cpSet struct {
	name   string
	rule   Rule
	ranges []cpRange
}

// Indexes into sets.
const (
	anywhere = iota // refused at every position
	edge            // refused as the first or last code point
)

var sets = [...]cpSet{
	anywhere: {
		name: "anywhere",
		rule: RuleForbiddenCodePoint,
		ranges: []cpRange{
			{0x0000, 0x001F, "a control character"},
			{0x002F, 0x002F, "'/', the SPACE/NAME separator"},
			{0x007F, 0x009F, "a control character"},
		},
	},
	edge: {
		// Unicode White_Space plus U+FEFF.
		name: "edge",
		rule: RuleEdgeCodePoint,
		ranges: []cpRange{
			{0x0009, 0x000D, "white space"},
			{0x0020, 0x0020, "a space"},
			{0x0085, 0x0085, "white space (next line)"},
			{0x00A0, 0x00A0, "a no-break space"},
			{0x1680, 0x1680, "white space (Ogham space mark)"},
			{0x2000, 0x200A, "white space"},
			{0x2028, 0x2028, "a line separator"},
			{0x2029, 0x2029, "a paragraph separator"},
			{0x202F, 0x202F, "a narrow no-break space"},
			{0x205F, 0x205F, "white space (medium mathematical space)"},
			{0x3000, 0x3000, "an ideographic space"},
			{0xFEFF, 0xFEFF, "a zero width no-break space (byte order mark)"},
		},
	},
}

// lookup reports whether r is in set s and, if so, its description.
func (s *cpSet) lookup(r rune) (string, bool) {
	for _, rg := range s.ranges {
		if rg.lo <= r && r <= rg.hi {
			return rg.what, true
		}
	}
	return "", false
}
