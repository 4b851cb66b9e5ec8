// Package build turns forms/edge/source into the generated family tree: it
// resolves document references to exact refs, computing every schemaDigest
// (JCS + SHA-256, spec/host-api-v1alpha3.md §1.3) in dependency order, and encodes the files.
package build

import (
	"fmt"
	"unicode/utf8"

	"github.com/takoform/takoform/forms/edge/source"
	"github.com/takoform/takoform/ijson"
)

// IndexPath is the family index, relative to the family root.
const IndexPath = "family.json"

// node is one definition document awaiting its digest.
type node struct {
	key    string // "interface:<name>@<version>", "binding:…", "form:<kind>"
	path   string // definition.json path relative to the family root
	doc    source.M
	digest string
	body   source.M // resolved document
}

func interfaceKey(name, version string) string { return "interface:" + name + "@" + version }
func bindingKey(name, version string) string   { return "binding:" + name + "@" + version }
func formKey(kind string) string               { return "form:" + kind }

// Generate returns every file of the edition's family tree keyed by its
// slash path relative to the family root. The result is deterministic.
func Generate(e source.Edition) (map[string][]byte, error) {
	var nodes []*node
	ifaces, binds, forms := e.Interfaces(), e.Bindings(), e.Forms()
	for _, i := range ifaces {
		nodes = append(nodes, &node{key: interfaceKey(i.Name, i.Version), path: "interfaces/" + i.Name + "/definition.json", doc: i.Doc})
	}
	for _, b := range binds {
		nodes = append(nodes, &node{key: bindingKey(b.Name, b.Version), path: "bindings/" + b.Name + "/definition.json", doc: b.Doc})
	}
	for _, f := range forms {
		nodes = append(nodes, &node{key: formKey(f.Kind), path: "forms/" + f.Dir + "/definition.json", doc: f.Doc})
	}
	if err := checkIdentities(e, ifaces, binds, forms); err != nil {
		return nil, err
	}
	byKey := map[string]*node{}
	for _, n := range nodes {
		if byKey[n.key] != nil {
			return nil, fmt.Errorf("duplicate document %s", n.key)
		}
		if err := checkProse(n.key, n.doc); err != nil {
			return nil, err
		}
		byKey[n.key] = n
	}
	files := map[string][]byte{}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n *node) error
	visit = func(n *node) error {
		switch state[n.key] {
		case 1:
			return fmt.Errorf("reference cycle through %s", n.key)
		case 2:
			return nil
		}
		state[n.key] = 1
		for _, dep := range refKeys(n.doc, nil) {
			d := byKey[dep]
			if d == nil {
				return fmt.Errorf("%s refers to unknown document %s", n.key, dep)
			}
			if err := visit(d); err != nil {
				return err
			}
		}
		body, err := resolve(n.doc, byKey)
		if err != nil {
			return fmt.Errorf("%s: %w", n.key, err)
		}
		data, err := encode(body)
		if err != nil {
			return fmt.Errorf("%s: %w", n.key, err)
		}
		if n.digest, err = ijson.Digest(data); err != nil {
			return fmt.Errorf("%s: %w", n.key, err)
		}
		n.body = body.(source.M)
		files[n.path] = data
		state[n.key] = 2
		return nil
	}
	for _, n := range nodes {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	for _, f := range forms {
		for _, fx := range f.Fixtures {
			data, err := encode(fx.Value)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", f.Kind, fx.Path, err)
			}
			if err := ijson.Check(data); err != nil {
				return nil, fmt.Errorf("%s %s: %w", f.Kind, fx.Path, err)
			}
			files["forms/"+f.Dir+"/"+fx.Path] = data
		}
	}
	index, err := familyIndex(e, ifaces, binds, forms, byKey)
	if err != nil {
		return nil, err
	}
	files[IndexPath] = index
	return files, nil
}

func familyIndex(e source.Edition, ifaces []source.Interface, binds []source.Binding, forms []source.Form, byKey map[string]*node) ([]byte, error) {
	var fe, ie, be []any
	for _, f := range forms {
		n := byKey[formKey(f.Kind)]
		fe = append(fe, source.M{"kind": f.Kind, "role": f.Role, "path": n.path, "formRef": formRefOf(n)})
	}
	for _, i := range ifaces {
		n := byKey[interfaceKey(i.Name, i.Version)]
		ie = append(ie, source.M{"name": i.Name, "version": i.Version, "path": n.path, "schemaDigest": n.digest})
	}
	for _, b := range binds {
		n := byKey[bindingKey(b.Name, b.Version)]
		be = append(be, source.M{"name": b.Name, "version": b.Version, "path": n.path, "schemaDigest": n.digest})
	}
	return encode(source.M{"family": e.Group, "forms": fe, "interfaces": ie, "bindings": be})
}

func formRefOf(n *node) source.M {
	return source.M{
		"apiVersion":        n.body["apiVersion"],
		"kind":              n.body["kind"],
		"definitionVersion": n.body["definitionVersion"],
		"schemaDigest":      n.digest,
	}
}

// refKeys lists the documents v refers to, in order of appearance.
func refKeys(v any, acc []string) []string {
	switch t := v.(type) {
	case source.InterfaceRef:
		return append(acc, interfaceKey(t.Name, t.Version))
	case source.BindingRef:
		return append(acc, bindingKey(t.Name, t.Version))
	case source.FormRef:
		return append(acc, formKey(t.Kind))
	case source.M:
		for _, k := range orderedKeys(t) {
			acc = refKeys(t[k], acc)
		}
	case []any:
		for _, x := range t {
			acc = refKeys(x, acc)
		}
	}
	return acc
}

// resolve copies v, replacing each reference with the exact ref object of the
// (already digested) document it names.
func resolve(v any, byKey map[string]*node) (any, error) {
	target := func(key string) (*node, error) {
		n := byKey[key]
		if n == nil || n.digest == "" {
			return nil, fmt.Errorf("reference to %s before its digest is known", key)
		}
		return n, nil
	}
	switch t := v.(type) {
	case source.InterfaceRef:
		n, err := target(interfaceKey(t.Name, t.Version))
		if err != nil {
			return nil, err
		}
		return source.M{"apiVersion": n.body["apiVersion"], "name": t.Name, "version": t.Version, "schemaDigest": n.digest}, nil
	case source.BindingRef:
		n, err := target(bindingKey(t.Name, t.Version))
		if err != nil {
			return nil, err
		}
		return source.M{"apiVersion": n.body["apiVersion"], "name": t.Name, "version": t.Version, "schemaDigest": n.digest}, nil
	case source.FormRef:
		n, err := target(formKey(t.Kind))
		if err != nil {
			return nil, err
		}
		return formRefOf(n), nil
	case source.M:
		out := make(source.M, len(t))
		for k, x := range t {
			r, err := resolve(x, byKey)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			r, err := resolve(x, byKey)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

// checkProse enforces the title/description bounds of the definition
// meta-schemas: title 1..160, description ≤4096, operation description ≤1024.
func checkProse(key string, doc source.M) error {
	title, _ := doc["title"].(string)
	if n := utf8.RuneCountInString(title); n < 1 || n > 160 {
		return fmt.Errorf("%s: title has %d characters, want 1..160", key, n)
	}
	desc, _ := doc["description"].(string)
	if n := utf8.RuneCountInString(desc); n > 4096 {
		return fmt.Errorf("%s: description has %d characters, want at most 4096", key, n)
	}
	ops, _ := doc["operations"].([]any)
	for _, o := range ops {
		op := o.(source.M)
		d, _ := op["description"].(string)
		if n := utf8.RuneCountInString(d); n > 1024 {
			return fmt.Errorf("%s operation %v: description has %d characters, want at most 1024", key, op["name"], n)
		}
	}
	return nil
}

// checkIdentities requires each document to repeat the identity it is
// listed under (spec/host-api-v1alpha3.md §1.3: a verifier rejects a mismatch).
func checkIdentities(e source.Edition, ifaces []source.Interface, binds []source.Binding, forms []source.Form) error {
	for _, i := range ifaces {
		if i.Doc["name"] != i.Name || i.Doc["version"] != i.Version {
			return fmt.Errorf("interface %s@%s: document names %v@%v", i.Name, i.Version, i.Doc["name"], i.Doc["version"])
		}
	}
	for _, b := range binds {
		if b.Doc["name"] != b.Name || b.Doc["version"] != b.Version {
			return fmt.Errorf("binding %s@%s: document names %v@%v", b.Name, b.Version, b.Doc["name"], b.Doc["version"])
		}
	}
	for _, f := range forms {
		if f.Doc["kind"] != f.Kind || f.Doc["role"] != f.Role || f.Doc["apiVersion"] != e.Group {
			return fmt.Errorf("form %s: document has kind %v, role %v, apiVersion %v", f.Kind, f.Doc["kind"], f.Doc["role"], f.Doc["apiVersion"])
		}
	}
	return nil
}
