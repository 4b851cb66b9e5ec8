package edge

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Environment rule IDs (spec/host-api-v1alpha3.md §6.4).
const (
	// RuleEnvCollision: two declarations share one env name.
	RuleEnvCollision = "edge.env.collision"
	// RuleEnvShape: a field the namespace is built from has the wrong JSON type.
	RuleEnvShape = "edge.env.shape"
)

// BindingList describes one binding-list field of WorkerVersion's desired
// spec (spec/host-api-v1alpha3.md §6.4).
type BindingList struct {
	Field      string // desired field, e.g. "kvBindings"
	Binding    string // x-takoform-binding contract name, e.g. "module-worker.edge-kv"
	TargetKind string // Form kind a binding targets, e.g. "EdgeKVNamespace"
	Interface  string // interface the target must provide, "name@version"
}

var bindingLists = [...]BindingList{
	{"kvBindings", "module-worker.edge-kv", "EdgeKVNamespace", "edge.kv@1.0.0"},
	{"bucketBindings", "module-worker.object-bucket", "ObjectBucket", "edge.objects@1.0.0"},
	{"sqliteBindings", "module-worker.sqlite", "SQLiteDatabase", "edge.sql@1.0.0"},
	{"queueProducerBindings", "module-worker.queue-producer", "AtLeastOnceQueue", "edge.queue@1.0.0"},
	{"serviceBindings", "module-worker.service", "ModuleWorker", "worker.service@1.0.0"},
}

// BindingLists is the table of WorkerVersion binding-list fields, in the
// order spec/host-api-v1alpha3.md §6.4 lists them. It is a copy: the rules here never read it back.
var BindingLists = slices.Clone(bindingLists[:])

// CheckEnvironmentNamespace enforces WorkerVersion's single environment
// namespace (spec/host-api-v1alpha3.md §6.4) on a decoded desired spec (objects map[string]any, arrays
// []any, strings string): every `vars` key, every `requiredSensitiveVars`
// entry and every binding `name` across the BindingLists fields must be
// distinct. Comparison is exact and case-sensitive (JavaScript identifiers).
// Absent (or null) fields declare nothing.
//
// Names are visited vars (keys in byte order), then requiredSensitiveVars,
// then each binding list in BindingLists order; a collision returns
// RuleEnvCollision with Pointer at the later declaration and a Message naming
// both pointers. A present field of the wrong type returns RuleEnvShape at it.
// Name grammar is left to schema validation.
func CheckEnvironmentNamespace(spec map[string]any) error {
	seen := map[string]string{} // env name -> pointer of first declaration
	declare := func(name, ptr string) error {
		if first, dup := seen[name]; dup {
			return newRuleError(RuleEnvCollision, ptr, fmt.Sprintf(
				"env name %q at %s is already declared at %s; vars keys, requiredSensitiveVars and binding names share one env namespace, so rename one of them",
				name, ptr, first))
		}
		seen[name] = ptr
		return nil
	}

	if v, ok := spec["vars"]; ok && v != nil {
		vars, ok := v.(map[string]any)
		if !ok {
			return envShapeError("/vars", "an object", v)
		}
		keys := make([]string, 0, len(vars))
		for k := range vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := declare(k, string(jsontext.Pointer("/vars").AppendToken(k))); err != nil {
				return err
			}
		}
	}

	if v, ok := spec["requiredSensitiveVars"]; ok && v != nil {
		names, err := envStringList(v, "/requiredSensitiveVars")
		if err != nil {
			return err
		}
		for i, n := range names {
			if err := declare(n, "/requiredSensitiveVars/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}

	for _, bl := range bindingLists {
		v, ok := spec[bl.Field]
		if !ok || v == nil {
			continue
		}
		base := "/" + bl.Field
		entries, err := envObjectList(v, base)
		if err != nil {
			return err
		}
		for i, e := range entries {
			ptr := base + "/" + strconv.Itoa(i) + "/name"
			name, ok := e["name"].(string)
			if !ok {
				return envShapeError(ptr, "a string", e["name"])
			}
			if err := declare(name, ptr); err != nil {
				return err
			}
		}
	}
	return nil
}

func envStringList(v any, ptr string) ([]string, error) {
	switch l := v.(type) {
	case []string:
		return l, nil
	case []any:
		out := make([]string, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, envShapeError(ptr+"/"+strconv.Itoa(i), "a string", x)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, envShapeError(ptr, "an array of strings", v)
}

func envObjectList(v any, ptr string) ([]map[string]any, error) {
	switch l := v.(type) {
	case []map[string]any:
		return l, nil
	case []any:
		out := make([]map[string]any, len(l))
		for i, x := range l {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, envShapeError(ptr+"/"+strconv.Itoa(i), "an object", x)
			}
			out[i] = m
		}
		return out, nil
	}
	return nil, envShapeError(ptr, "an array of objects", v)
}

func envShapeError(ptr, want string, got any) error {
	what := fmt.Sprintf("%T", got)
	if got == nil {
		what = "nothing"
	}
	return newRuleError(RuleEnvShape, ptr, fmt.Sprintf("%s must be %s, got %s; fix the desired spec to match the WorkerVersion schema", ptr, want, what))
}
