package build

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// Member order of the written files. JCS digests ignore it; it only makes the
// files readable: identity first, then the main parts, then the rest
// alphabetically, $defs last.
var leadingKeys = []string{
	"family", "$schema", "apiVersion", "kind", "name", "definitionVersion", "version", "title", "description",
	"role", "path", "sourceRole", "targetInterface", "allowedTargetForms", "bindingNameGrammar", "runtimeProjection",
	"lifecycle", "operation", "input", "expected", "expectedError", "stage", "desiredPath", "inputPath",
	"expectedFailure", "type",
	"desiredSchema", "inputSchema", "outputSchema", "immutableFields", "lifecycleCapabilities",
	"providedInterfaces", "acceptedBindings", "conformanceFixtures", "negativeConformanceFixtures",
	"operations", "semantics", "limits", "fixtures", "errors", "idempotent",
	"forms", "interfaces", "bindings",
}

var keyRank = func() map[string]int {
	r := map[string]int{"$defs": len(leadingKeys) + 1}
	for i, k := range leadingKeys {
		r[k] = i
	}
	return r
}()

func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if r, ok := keyRank[k]; ok {
			return r
		}
		return len(leadingKeys)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank(keys[i]), rank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// encode writes v as 2-space indented JSON ending in a newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := write(&b, v, ""); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func write(b *bytes.Buffer, v any, indent string) error {
	inner := indent + "  "
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case int:
		b.WriteString(strconv.Itoa(t))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
	case json.Number:
		b.WriteString(t.String())
	case string:
		return writeString(b, t)
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[\n")
		for i, x := range t {
			b.WriteString(inner)
			if err := write(b, x, inner); err != nil {
				return err
			}
			if i < len(t)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case map[string]any:
		if len(t) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteString("{\n")
		keys := orderedKeys(t)
		for i, k := range keys {
			b.WriteString(inner)
			if err := writeString(b, k); err != nil {
				return err
			}
			b.WriteString(": ")
			if err := write(b, t[k], inner); err != nil {
				return err
			}
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	default:
		return fmt.Errorf("cannot encode %T", v)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	return nil
}
