package source

// JSON Schema (Draft 2020-12) building blocks shared by every document.

const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// with returns a shallow copy of m with the key/value pairs kv added.
func with(m M, kv ...any) M {
	out := make(M, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// about adds a description to a schema node.
func about(m M, description string) M { return with(m, "description", description) }

// root marks a schema as a document root.
func root(m M) M { return with(m, "$schema", draft202012) }

// closed is an object schema admitting exactly props.
func closed(props M, required ...string) M {
	m := M{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		m["required"] = list(required...)
	}
	return m
}

// empty is the closed object with no members.
func empty() M { return closed(M{}) }

func list(s ...string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// text is a string of minLen..maxLen characters.
func text(minLen, maxLen int) M {
	return M{"type": "string", "minLength": minLen, "maxLength": maxLen}
}

// textMax is a string of at most maxLen characters.
func textMax(maxLen int) M { return M{"type": "string", "maxLength": maxLen} }

// choice is a string from a closed list.
func choice(values ...string) M { return M{"type": "string", "enum": list(values...)} }

func integer(minimum, maximum int64) M {
	return M{"type": "integer", "minimum": minimum, "maximum": maximum}
}

func integerFrom(minimum int64) M { return M{"type": "integer", "minimum": minimum} }

func boolean() M { return M{"type": "boolean"} }

// array is an array of items with extra keywords kv.
func array(items M, kv ...any) M {
	return with(M{"type": "array", "items": items}, kv...)
}

// stringMap is an open map of strings (headers, metadata).
func stringMap(maxKey, maxValue, maxEntries int) M {
	return M{
		"type":                 "object",
		"additionalProperties": textMax(maxValue),
		"maxProperties":        maxEntries,
		"propertyNames":        textMax(maxKey),
	}
}

// encodedBytes is the family's byte-string shape {encoding: base64, data}.
func encodedBytes(maxData int) M {
	return closed(M{"data": textMax(maxData), "encoding": choice("base64")}, "data", "encoding")
}
