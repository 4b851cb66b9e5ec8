// Package projection holds the JavaScript projections of the bindings the
// runtime gateway (host/runtime/gateway) serves: the objects a binding
// name carries in a worker's env (spec/runtime-v1.md §5). Each is an ES
// module exporting a maker that takes a workerd Fetcher — a service
// binding whose requests reach the tenant's gateway socket with the
// binding's resource UID injected by workerd — and returns the frozen
// projection object, whose methods each return a Promise (§5.0).
//
// The generated entry module imports them by the names of Modules, which
// the worker's module list must carry verbatim (they import each other by
// relative name), e.g.
//
//	import { makeKV } from "__takoform/kv.js";
//	env.CACHE = makeKV(hostEnv.CACHE);
package projection

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
)

//go:embed js/*.js
var sources embed.FS

// Prefix starts every projection module name; a tenant bundle's module
// names must not use it.
const Prefix = "__takoform/"

// Modules returns every projection module: module name (Prefix + file
// name) → ES module source.
func Modules() map[string]string {
	out := map[string]string{}
	entries, err := fs.ReadDir(sources, "js")
	if err != nil {
		panic(err) // embedded at build time
	}
	for _, e := range entries {
		b, err := sources.ReadFile(path.Join("js", e.Name()))
		if err != nil {
			panic(err)
		}
		out[Prefix+e.Name()] = string(b)
	}
	return out
}

// The Binding definitions the projections serve, by name (forms/edge).
const (
	BindingKV     = "module-worker.edge-kv"
	BindingSQL    = "module-worker.sqlite"
	BindingQueue  = "module-worker.queue-producer"
	BindingBucket = "module-worker.object-bucket"
)

// FamilyV1alpha1 is the group of the v1alpha1 family (spec/runtime-v1.md §0.2).
const FamilyV1alpha1 = "edge.forms.takoform.com/v1alpha1"

// Maker names the module and export that build the projection of binding
// (a Binding definition name) for a WorkerVersion of the family
// apiVersion: the entry imports export from module and calls it with the
// binding's gateway Fetcher. It fails for a binding this package does
// not project (yet) in that family.
func Maker(apiVersion, binding string) (module, export string, err error) {
	if apiVersion == FamilyV1alpha1 {
		switch binding {
		case BindingKV:
			return Prefix + "kv.js", "makeKV", nil
		case BindingSQL:
			return Prefix + "sql-v1alpha1.js", "makeSQL", nil
		case BindingQueue:
			return Prefix + "queue.js", "makeQueue", nil
		case BindingBucket:
			return Prefix + "objects.js", "makeObjects", nil
		}
	}
	return "", "", fmt.Errorf("no projection of binding %s for %s", binding, apiVersion)
}
