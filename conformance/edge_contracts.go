package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

func init() {
	register(
		Check{ID: "module-worker-runtime-contract-advertised", Group: "edge", Summary: "worker.runtime@1.0.0 is advertised at the Form's digest; WorkerVersion handlers are exactly fetch, scheduled, queue; no compatibility dates or flags", Run: runtimeContractAdvertised},
		Check{ID: "edge-interface-contracts-advertised", Group: "edge", Summary: "edge.kv, edge.objects, edge.sql and edge.queue are advertised at the digests the Forms name", Run: edgeInterfacesAdvertised},
	)
}

// edgeServedRefs lists the exact refs the host's support profiles serve
// for an Edge kind.
func (e *Env) edgeServedRefs(ctx context.Context, kind string) ([]form.FormRef, error) {
	ps, err := e.A1.SupportForms(ctx)
	if err != nil {
		return nil, fmt.Errorf("support forms: %w", err)
	}
	var out []form.FormRef
	for _, p := range ps.Profiles {
		if p.FormRef != nil && p.FormRef.APIVersion == e.Group && p.FormRef.Kind == kind {
			out = append(out, *p.FormRef)
		}
	}
	return out, nil
}

// edgeLocalDefinition finds the Edge family document this runner carries
// whose exact ref is ref (our family; another family's documents are not
// carried, and the checks then learn from the served schemas instead).
func edgeLocalDefinition(ref form.FormRef) (*form.Definition, bool) {
	idx, err := edge.Index()
	if err != nil {
		return nil, false
	}
	for _, f := range idx.Forms {
		r := f.FormRef
		if (form.FormRef{APIVersion: r.APIVersion, Kind: r.Kind, DefinitionVersion: r.DefinitionVersion, SchemaDigest: r.SchemaDigest}) != ref {
			continue
		}
		data, err := fs.ReadFile(edge.Family(), f.Path)
		if err != nil {
			return nil, false
		}
		def, err := form.Parse(data)
		if err != nil || def.Ref() != ref {
			return nil, false
		}
		return def, true
	}
	return nil, false
}

// edgeNamedInterfaces collects the exact InterfaceRefs named name that
// the host's Edge Forms declare: in providedInterfaces of kind (documents
// this runner carries) and in the x-takoform-required-interface
// annotations of the served desired schemas of the consumers (the host
// verifies a target provides exactly those), keyed by where each was read.
func (e *Env) edgeNamedInterfaces(ctx context.Context, kind, name string, consumers map[string][][]string) (map[string]form.InterfaceRef, error) {
	out := map[string]form.InterfaceRef{}
	refs, err := e.edgeServedRefs(ctx, kind)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		if def, ok := edgeLocalDefinition(ref); ok {
			for _, p := range def.ProvidedInterfaces() {
				if p.Name == name {
					out[fmt.Sprintf("%s %s providedInterfaces", kind, ref.DefinitionVersion)] = p
				}
			}
		}
	}
	for ckind, paths := range consumers {
		crefs, err := e.edgeServedRefs(ctx, ckind)
		if err != nil {
			return nil, err
		}
		for _, cref := range crefs {
			d, err := e.A1.FormDefinition(ctx, e.Space, cref)
			if err != nil {
				return nil, fmt.Errorf("form definition of %s: %w", cref, err)
			}
			var schema any
			if err := json.Unmarshal(d.DesiredSchema, &schema); err != nil {
				return nil, err
			}
			for _, path := range paths {
				node := schema
				for _, seg := range path {
					m, _ := node.(map[string]any)
					node = m[seg]
				}
				m, _ := node.(map[string]any)
				raw, ok := m["x-takoform-required-interface"]
				if !ok {
					continue
				}
				b, _ := json.Marshal(raw)
				var ir form.InterfaceRef
				if err := json.Unmarshal(b, &ir); err == nil && ir.Name == name {
					out[fmt.Sprintf("%s %s desiredSchema /%s", ckind, cref.DefinitionVersion, strings.Join(path, "/"))] = ir
				}
			}
		}
	}
	return out, nil
}

// edgeContractAdvertised checks the host's InterfaceSupport profile for
// name@1.0.0 names exactly every ref the Forms name.
func (e *Env) edgeContractAdvertised(ctx context.Context, name string, named map[string]form.InterfaceRef) error {
	if len(named) == 0 {
		return fmt.Errorf("no served Form names %s@1.0.0 (neither in a providedInterfaces this runner carries nor in a served relation annotation)", name)
	}
	p, err := e.A1.SupportInterface(ctx, name, "1.0.0")
	if err != nil {
		return fmt.Errorf("support profile of %s@1.0.0: %w", name, err)
	}
	if p.Kind != "InterfaceSupport" || p.InterfaceRef == nil {
		return fmt.Errorf("support profile of %s@1.0.0 is a %s without interfaceRef", name, p.Kind)
	}
	where := make([]string, 0, len(named))
	for w := range named {
		where = append(where, w)
	}
	sort.Strings(where)
	for _, w := range where {
		if want := named[w]; *p.InterfaceRef != want {
			return fmt.Errorf("the host advertises %s (%s) but %s names %s (%s)", p.InterfaceRef, p.InterfaceRef.APIVersion, w, want, want.APIVersion)
		}
	}
	return nil
}

func runtimeContractAdvertised(ctx context.Context, e *Env) error {
	workers, err := e.edgeServedRefs(ctx, "ModuleWorker")
	if err != nil {
		return err
	}
	if len(workers) == 0 {
		return skipf("the host serves no ModuleWorker")
	}
	named, err := e.edgeNamedInterfaces(ctx, "ModuleWorker", "worker.runtime", map[string][][]string{
		"WorkerVersion": {{"properties", "worker"}}, "WorkerDeployment": {{"properties", "worker"}},
		"WorkerEndpoint": {{"properties", "worker"}}, "WorkerCustomDomain": {{"properties", "worker"}},
		"WorkerCronTrigger": {{"properties", "worker"}}, "QueueConsumer": {{"properties", "worker"}},
	})
	if err != nil {
		return err
	}
	if err := e.edgeContractAdvertised(ctx, "worker.runtime", named); err != nil {
		return err
	}
	versions, err := e.edgeServedRefs(ctx, "WorkerVersion")
	if err != nil {
		return err
	}
	if len(versions) == 0 {
		return fmt.Errorf("the host serves ModuleWorker but no WorkerVersion to run it")
	}
	for _, ref := range versions {
		p, err := e.A1.SupportForm(ctx, ref.APIVersion, ref.Kind, ref.DefinitionVersion)
		if err != nil {
			return fmt.Errorf("support profile of WorkerVersion %s: %w", ref.DefinitionVersion, err)
		}
		got := append([]string(nil), p.SupportedEnums["handlers"]...)
		sort.Strings(got)
		want := append([]string(nil), edge.HandlerVocabulary...)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("WorkerVersion %s supportedEnums.handlers = %v; want exactly the worker.runtime@1.0.0 vocabulary %v", ref.DefinitionVersion, p.SupportedEnums["handlers"], edge.HandlerVocabulary)
		}
	}
	// The runtime is fixed by the contract: no compatibility dates or flags.
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/support/forms", nil, nil)
	if err != nil {
		return err
	}
	var doc struct {
		Profiles []struct {
			FormRef         *form.FormRef              `json:"formRef"`
			SupportedEnums  map[string]json.RawMessage `json:"supportedEnums"`
			SupportedRanges map[string]json.RawMessage `json:"supportedRanges"`
		} `json:"profiles"`
	}
	if r.Status != 200 || json.Unmarshal(r.Body, &doc) != nil {
		return fmt.Errorf("GET /support/forms answered HTTP %d: %s", r.Status, abbreviate(r.Body))
	}
	for _, p := range doc.Profiles {
		if p.FormRef == nil || p.FormRef.APIVersion != e.Group {
			continue
		}
		for _, m := range []map[string]json.RawMessage{p.SupportedEnums, p.SupportedRanges} {
			for k := range m {
				if strings.HasPrefix(strings.ToLower(k), "compatibility") {
					return fmt.Errorf("%s %s advertises %q; a worker's runtime is fixed by worker.runtime@1.0.0, never by compatibility dates or flags", p.FormRef.Kind, p.FormRef.DefinitionVersion, k)
				}
			}
		}
	}
	return nil
}

func edgeInterfacesAdvertised(ctx context.Context, e *Env) error {
	binding := func(field string) []string { return []string{"properties", field, "items", "properties", "resource"} }
	contracts := []struct {
		kind, name string
		consumers  map[string][][]string
	}{
		{"EdgeKVNamespace", "edge.kv", map[string][][]string{"WorkerVersion": {binding("kvBindings")}}},
		{"ObjectBucket", "edge.objects", map[string][][]string{"WorkerVersion": {binding("bucketBindings")}}},
		{"SQLiteDatabase", "edge.sql", map[string][][]string{"WorkerVersion": {binding("sqliteBindings")}}},
		{"AtLeastOnceQueue", "edge.queue", map[string][][]string{"WorkerVersion": {binding("queueProducerBindings")},
			"QueueConsumer": {{"properties", "queue"}, {"properties", "deadLetterQueue"}}}},
	}
	checked := 0
	for _, c := range contracts {
		served, err := e.edgeServedRefs(ctx, c.kind)
		if err != nil {
			return err
		}
		if len(served) == 0 {
			continue // a host may support a subset of the family
		}
		named, err := e.edgeNamedInterfaces(ctx, c.kind, c.name, c.consumers)
		if err != nil {
			return err
		}
		if err := e.edgeContractAdvertised(ctx, c.name, named); err != nil {
			return fmt.Errorf("%s: %w", c.kind, err)
		}
		checked++
	}
	if checked == 0 {
		return skipf("the host serves none of EdgeKVNamespace, ObjectBucket, SQLiteDatabase, AtLeastOnceQueue")
	}
	return nil
}

// edgeProvidingRef is the served ref of kind that provides interface name
// in a document this runner carries, else e.Ref(kind).
func (e *Env) edgeProvidingRef(ctx context.Context, kind, name string) (form.FormRef, error) {
	refs, err := e.edgeServedRefs(ctx, kind)
	if err != nil {
		return form.FormRef{}, err
	}
	for _, ref := range refs {
		if def, ok := edgeLocalDefinition(ref); ok {
			for _, p := range def.ProvidedInterfaces() {
				if p.Name == name {
					return ref, nil
				}
			}
		}
	}
	return e.Ref(kind)
}
