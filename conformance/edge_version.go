package conformance

import (
	"context"
	"fmt"

	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "undeclared-runtime-handler-rejected", Group: "edge", Summary: "a WorkerVersion handler outside fetch, scheduled, queue is refused everywhere it can enter", Run: undeclaredHandlerRejected},
		Check{ID: "declared-handler-not-exported-rejected", Group: "edge", Summary: "a WorkerVersion declaring a handler its bundle's default export lacks is invalid_argument on apply and import", Run: declaredHandlerNotExported},
		Check{ID: "binding-name-collision-rejected", Group: "edge", Summary: "vars keys, requiredSensitiveVars and binding names share one environment namespace, held by the apply and import", Run: bindingNameCollision},
	)
}

// edgeWorkerAndBundle creates a worker and a bundle of source.
func (e *Env) edgeWorkerAndBundle(ctx context.Context, source []byte) (worker, bundle string, err error) {
	w, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return "", "", err
	}
	digest, err := e.UploadBundle(ctx, e.A1, source)
	if err != nil {
		return "", "", fmt.Errorf("upload bundle: %w", err)
	}
	b, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest})
	if err != nil {
		return "", "", fmt.Errorf("create bundle: %w", err)
	}
	return w.Metadata.Name, b.Metadata.Name, nil
}

// edgeVersionSpec is a WorkerVersion spec of worker and bundle.
func (e *Env) edgeVersionSpec(worker, bundle string, handlers []any, extra map[string]any) map[string]any {
	s := map[string]any{"worker": e.Rel("ModuleWorker", worker), "bundle": e.Rel("WorkerBundle", bundle), "handlers": handlers}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

func undeclaredHandlerRejected(ctx context.Context, e *Env) error {
	wn, bn, err := e.edgeWorkerAndBundle(ctx, Module("fetch", "scheduled", "queue", "email", "tail"))
	if err != nil {
		return err
	}
	for _, hs := range [][]any{{"fetch", "email"}, {"Fetch"}, {"tail"}, {"scheduled", "trace"}, {"FETCH", "queue"}, {}} {
		if err := e.edgeSpecRefused(ctx, "WorkerVersion", e.edgeVersionSpec(wn, bn, hs, nil), fmt.Sprintf("handlers %v", hs)); err != nil {
			return err
		}
	}
	if _, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.edgeVersionSpec(wn, bn, []any{"fetch", "scheduled", "queue"}, nil)); err != nil {
		return fmt.Errorf("a version declaring the whole vocabulary: %w", err)
	}
	return nil
}

func declaredHandlerNotExported(ctx context.Context, e *Env) error {
	cases := []struct {
		what     string
		source   string
		declares []any
	}{
		{"a default export lacking scheduled", string(Module("fetch")), []any{"fetch", "scheduled"}},
		{"a default export lacking queue", string(Module("fetch", "scheduled")), []any{"queue"}},
		{"a module without a default export", "export const fetch = async () => new Response('x');\n", []any{"fetch"}},
		{"a handler exported by name, not on the default export", "export async function fetch() { return new Response('x'); }\nexport default {};\n", []any{"fetch"}},
	}
	for _, c := range cases {
		wn, bn, err := e.edgeWorkerAndBundle(ctx, []byte(c.source))
		if err != nil {
			return err
		}
		spec := e.edgeVersionSpec(wn, bn, c.declares, nil)
		name := e.Name("version")
		_, err = e.Create(ctx, e.A1, "WorkerVersion", name, spec)
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("a version declaring %v over %s (the host parses the main module's bytes, any bytes, and refuses a declared handler its default export lacks): %w", c.declares, c.what, err)
		}
		if err := e.edgeAbsent(ctx, e.A1, e.Space, "WorkerVersion", name); err != nil {
			return err
		}
		_, err = e.edgeImport(ctx, e.A1, e.Space, "WorkerVersion", name, spec)
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("importing a version declaring %v over %s (import validates like apply: the host parses the main module's bytes and refuses a declared handler its default export lacks): %w", c.declares, c.what, err)
		}
		if err := e.edgeAbsent(ctx, e.A1, e.Space, "WorkerVersion", name); err != nil {
			return err
		}
	}
	// Handlers on the default export, however the object is written, serve.
	for _, src := range []string{
		"const worker = { fetch: async () => new Response('x'), async queue(batch) {} };\nexport default worker;\n",
		"const worker = { async fetch() { return new Response('x'); }, queue: async () => {} };\nexport { worker as default };\n",
	} {
		wn, bn, err := e.edgeWorkerAndBundle(ctx, []byte(src))
		if err != nil {
			return err
		}
		if _, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.edgeVersionSpec(wn, bn, []any{"fetch", "queue"}, nil)); err != nil {
			return fmt.Errorf("a version declaring the handlers of a default export written %q: %w", src, err)
		}
	}
	// Declaring a subset of what the default export carries is fine.
	wn, bn, err := e.edgeWorkerAndBundle(ctx, Module("fetch", "scheduled"))
	if err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.edgeVersionSpec(wn, bn, []any{"scheduled"}, nil)); err != nil {
		return fmt.Errorf("a version declaring a handler its bundle exports: %w", err)
	}
	if _, err := e.edgeImport(ctx, e.A1, e.Space, "WorkerVersion", e.Name("version"), e.edgeVersionSpec(wn, bn, []any{"fetch", "scheduled"}, nil)); err != nil {
		return fmt.Errorf("importing a version declaring handlers its bundle exports: %w", err)
	}
	return nil
}

func bindingNameCollision(ctx context.Context, e *Env) error {
	wn, bn, err := e.edgeWorkerAndBundle(ctx, Module("fetch"))
	if err != nil {
		return err
	}
	kvRef, err := e.edgeProvidingRef(ctx, "EdgeKVNamespace", "edge.kv")
	if err != nil {
		return err
	}
	bucketRef, err := e.edgeProvidingRef(ctx, "ObjectBucket", "edge.objects")
	if err != nil {
		return err
	}
	var kv, kv2, bucket string
	for _, t := range []struct {
		dst  *string
		kind string
	}{{&kv, "EdgeKVNamespace"}, {&kv2, "EdgeKVNamespace"}, {&bucket, "ObjectBucket"}} {
		ref := kvRef
		if t.kind == "ObjectBucket" {
			ref = bucketRef
		}
		r, err := e.Apply(ctx, e.A1, e.RequestIn(e.Space, ref, e.Name("data"), map[string]any{}), nil)
		if err != nil {
			return fmt.Errorf("create %s: %w", t.kind, err)
		}
		*t.dst = r.Metadata.Name
	}
	bind := func(name, kind, target string) map[string]any {
		return map[string]any{"name": name, "resource": e.Rel(kind, target)}
	}
	fetch := []any{"fetch"}
	for _, c := range []struct {
		what  string
		extra map[string]any
	}{
		{"a vars key and a kv binding named STORE", map[string]any{"vars": map[string]any{"STORE": "x"}, "kvBindings": []any{bind("STORE", "EdgeKVNamespace", kv)}}},
		{"a vars key and a required sensitive var named API_KEY", map[string]any{"vars": map[string]any{"API_KEY": "x"}, "requiredSensitiveVars": []any{"API_KEY"}}},
		{"a kv binding and a bucket binding both named data", map[string]any{"kvBindings": []any{bind("data", "EdgeKVNamespace", kv)}, "bucketBindings": []any{bind("data", "ObjectBucket", bucket)}}},
		{"a required sensitive var and a kv binding named TOKEN", map[string]any{"requiredSensitiveVars": []any{"TOKEN"}, "kvBindings": []any{bind("TOKEN", "EdgeKVNamespace", kv)}}},
		{"two kv bindings named cache", map[string]any{"kvBindings": []any{bind("cache", "EdgeKVNamespace", kv), bind("cache", "EdgeKVNamespace", kv2)}}},
	} {
		if err := e.edgeAggregateRefused(ctx, "WorkerVersion", e.edgeVersionSpec(wn, bn, fetch, c.extra), "one environment namespace", c.what); err != nil {
			return err
		}
	}
	// Distinct names (the namespace is case-sensitive) are one environment.
	ok := map[string]any{
		"vars": map[string]any{"store": 1, "MODE": "prod"}, "requiredSensitiveVars": []any{"API_KEY"},
		"kvBindings":     []any{bind("STORE", "EdgeKVNamespace", kv), bind("cache", "EdgeKVNamespace", kv2)},
		"bucketBindings": []any{bind("files", "ObjectBucket", bucket)},
	}
	if _, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.edgeVersionSpec(wn, bn, fetch, ok)); err != nil {
		return fmt.Errorf("a version whose vars, sensitive vars and binding names are distinct: %w", err)
	}
	return nil
}
