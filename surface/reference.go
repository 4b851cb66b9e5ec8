package surface

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FromReference reads a surface in the public provider's reference format
// (the takoform data sets' terraform-surface-*.json: per type its schema
// version and its top-level attributes, each with a
// terraform-plugin-framework type such as
// `types.ListType[types.ObjectType["a":basetypes.StringType]]` and its
// required / optional / computed / sensitive flags) into our notation, so
// a public provider's surface can be held as a floor (spec/lane-v1beta1.md
// §13.5). Errors: not that format, or a type it cannot translate.
func FromReference(data []byte) (*Surface, error) {
	var ref map[string]struct {
		Version    *int64 `json:"version"`
		Attributes map[string]struct {
			Type                                    string
			Required, Optional, Computed, Sensitive bool
		} `json:"attributes"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		return nil, fmt.Errorf("reference surface: %w", err)
	}
	s := &Surface{Types: map[string]Type{}}
	for tn, rt := range ref {
		if rt.Version == nil || rt.Attributes == nil {
			return nil, fmt.Errorf("reference surface: type %q has no version or no attributes; is this a reference surface file?", tn)
		}
		st := Type{Version: *rt.Version, Attributes: map[string]Attribute{}}
		for an, ra := range rt.Attributes {
			typ, err := FrameworkType(ra.Type)
			if err != nil {
				return nil, fmt.Errorf("reference surface: %s.%s: %w", tn, an, err)
			}
			st.Attributes[an] = Attribute{Type: typ, Required: ra.Required, Optional: ra.Optional, Computed: ra.Computed, Sensitive: ra.Sensitive}
		}
		s.Types[tn] = st
	}
	return s, nil
}

// FrameworkType translates a terraform-plugin-framework type notation
// ("types.ListType[types.ObjectType[\"a\":basetypes.StringType]]") into
// the surface notation ("list(object({a=string}))").
func FrameworkType(s string) (string, error) {
	r := strings.NewReplacer(
		"basetypes.StringType", "string", "basetypes.Int64Type", "number", "basetypes.BoolType", "bool",
		"basetypes.Float64Type", "number", "basetypes.NumberType", "number",
		"types.ListType[", "list(", "types.SetType[", "set(", "types.MapType[", "map(", "types.ObjectType[", "object({",
	)
	out := r.Replace(s)
	// Close brackets: object({…]] → object({…})…; list(…] → list(…).
	var b strings.Builder
	var stack []string
	for i := 0; i < len(out); i++ {
		switch {
		case strings.HasPrefix(out[i:], "object({"):
			stack = append(stack, "})")
			b.WriteString("object({")
			i += len("object({") - 1
		case out[i] == '(':
			stack = append(stack, ")")
			b.WriteByte('(')
		case out[i] == ']':
			if len(stack) == 0 {
				return "", fmt.Errorf("unbalanced type %q", s)
			}
			b.WriteString(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
		case out[i] == '"':
			j := strings.IndexByte(out[i+1:], '"')
			if j < 0 {
				return "", fmt.Errorf("unterminated member name in type %q", s)
			}
			b.WriteString(out[i+1 : i+1+j])
			i += j + 1
		case out[i] == ':':
			b.WriteByte('=')
		default:
			b.WriteByte(out[i])
		}
	}
	if len(stack) != 0 {
		return "", fmt.Errorf("unbalanced type %q", s)
	}
	return b.String(), nil
}
