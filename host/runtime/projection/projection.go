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
