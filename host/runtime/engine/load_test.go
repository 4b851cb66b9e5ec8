package engine_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/enginetest"
)

const jsType = "application/javascript+module"

func js(name, src string) engine.Module {
	return engine.Module{Name: name, MediaType: jsType, Data: []byte(src)}
}

// TestLoad loads real bundles on the engine and checks the exported set
// or the load code of each (spec/runtime-v1.md §1.2, §1.3), including
// bundles the static parser (artifact.ExportedHandlers) judges wrongly.
func TestLoad(t *testing.T) {
	bin := enginetest.Binary(t)
	// A minimal valid wasm module (magic and version only), and one that is not.
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	cases := []struct {
		name     string
		main     string
		modules  []engine.Module
		declared []string
		want     []string
		code     string
	}{
		{name: "plain object", main: "src/index.js", modules: []engine.Module{js("src/index.js", `export default { fetch() {}, queue() {}, scheduled() {} };`)},
			declared: []string{"queue"}, want: []string{"fetch", "scheduled", "queue"}},
		{name: "built at run time", main: "w.js", modules: []engine.Module{js("w.js", `const h = {}; h["fe" + "tch"] = () => new Response("x"); export default h;`)},
			declared: []string{"fetch"}, want: []string{"fetch"}},
		{name: "non-callable property", main: "w.js", modules: []engine.Module{js("w.js", `export default { fetch: 1, scheduled() {} };`)}, want: []string{"scheduled"}},
		{name: "inherited property", main: "w.js", modules: []engine.Module{js("w.js", `export default Object.create({ fetch() {} });`)}, want: []string{}},
		{name: "class default", main: "w.js", modules: []engine.Module{js("w.js", `export default class { fetch() {} };`)}, want: []string{}},
		{name: "no default", main: "w.js", modules: []engine.Module{js("w.js", `export const fetch = () => {};`)}, want: []string{}},
		{name: "text main", main: "t.txt", modules: []engine.Module{{Name: "t.txt", MediaType: "text/plain", Data: []byte("hi")}}, want: []string{}},
		{name: "graph", main: "src/a.js", modules: []engine.Module{
			js("src/a.js", `import b from "./lib/b.js"; import c from "/c.js"; import t from "../t.txt"; import d from "/d.bin"; import w from "/m.wasm";
if (!(w instanceof WebAssembly.Module) || !(d instanceof ArrayBuffer) || t !== "é") throw new Error("bad graph");
export default { fetch: b, queue: c };`),
			js("src/lib/b.js", `export default function () {}`), js("c.js", `export default () => {}`),
			{Name: "t.txt", MediaType: "text/plain", Data: []byte("é")}, {Name: "d.bin", MediaType: "application/octet-stream", Data: []byte{0xff}},
			{Name: "m.wasm", MediaType: "application/wasm", Data: wasm},
			{Name: "src/a.js.map", MediaType: "application/source-map+json", Data: []byte("{}")},
		}, want: []string{"fetch", "queue"}},

		{name: "main missing", main: "nope.js", modules: []engine.Module{js("w.js", `export default {};`)}, code: artifact.LoadModuleNotFound},
		{name: "json module", main: "w.js", modules: []engine.Module{js("w.js", `export default {};`), {Name: "x.json", MediaType: "application/json", Data: []byte("{}")}}, code: artifact.LoadUnsupportedMediaType},
		{name: "auxiliary main", main: "w.js.map", modules: []engine.Module{js("w.js", `export default {};`), {Name: "w.js.map", MediaType: "application/source-map+json", Data: []byte("{}")}}, code: artifact.LoadUnsupportedMediaType},
		{name: "unresolved import", main: "src/w.js", modules: []engine.Module{js("src/w.js", `import x from "./missing.js"; export default { fetch() {} };`)}, code: artifact.LoadModuleNotFound},
		{name: "unresolved deep import", main: "w.js", modules: []engine.Module{js("w.js", `import x from "./a.js"; export default { fetch() {} };`), js("a.js", `import y from "/b.js"; export default 1;`)}, code: artifact.LoadModuleNotFound},
		{name: "node built-in", main: "w.js", modules: []engine.Module{js("w.js", `import * as fs from "node:fs"; export default { fetch() {} };`)}, code: artifact.LoadModuleNotFound},
		{name: "bare node built-in", main: "w.js", modules: []engine.Module{js("w.js", `import * as p from "path"; export default { fetch() {} };`)}, code: artifact.LoadModuleNotFound},
		{name: "cloudflare built-in", main: "w.js", modules: []engine.Module{js("w.js", `import { connect } from "cloudflare:sockets"; export default { fetch() {} };`)}, code: artifact.LoadModuleNotFound},
		{name: "workerd built-in", main: "w.js", modules: []engine.Module{js("w.js", `import * as u from "workerd:unsafe"; export default { fetch() {} };`)}, code: artifact.LoadModuleNotFound},
		{name: "imports auxiliary", main: "w.js", modules: []engine.Module{js("w.js", `import m from "./w.js.map"; export default { fetch() {} };`), {Name: "w.js.map", MediaType: "application/source-map+json", Data: []byte("{}")}}, code: artifact.LoadUnsupportedMediaType},
		{name: "parse error", main: "w.js", modules: []engine.Module{js("w.js", `export default { fetch() {} `)}, code: artifact.LoadModuleSyntaxError},
		{name: "parse error elsewhere", main: "w.js", modules: []engine.Module{js("w.js", `export default {};`), js("unused.js", `let = ;`)}, code: artifact.LoadModuleSyntaxError},
		{name: "wasm does not compile", main: "w.js", modules: []engine.Module{js("w.js", `import w from "./m.wasm"; export default {};`), {Name: "m.wasm", MediaType: "application/wasm", Data: []byte("not wasm")}}, code: artifact.LoadModuleSyntaxError},
		{name: "text not utf-8", main: "w.js", modules: []engine.Module{js("w.js", `export default {};`), {Name: "t.txt", MediaType: "text/plain", Data: []byte{0xff}}}, code: artifact.LoadModuleSyntaxError},
		{name: "evaluation throws", main: "w.js", modules: []engine.Module{js("w.js", `throw new TypeError("boom"); export default {};`)}, code: artifact.LoadModuleSyntaxError},
		{name: "throws like a missing module", main: "w.js", modules: []engine.Module{js("w.js", `throw new Error('No such module "x".'); export default {};`)}, code: artifact.LoadModuleSyntaxError},
		{name: "missing named export", main: "w.js", modules: []engine.Module{js("w.js", `import { nope } from "./a.js"; export default {};`), js("a.js", `export const yes = 1;`)}, code: artifact.LoadModuleSyntaxError},
		{name: "unsettled top-level await", main: "w.js", modules: []engine.Module{js("w.js", `await new Promise(() => {}); export default { fetch() {} };`)}, code: artifact.LoadModuleSyntaxError},
		{name: "declared not exported", main: "w.js", modules: []engine.Module{js("w.js", `export default { fetch() {} };`)}, declared: []string{"fetch", "queue"}, code: artifact.LoadHandlerNotExported},
		{name: "declared outside vocabulary", main: "w.js", modules: []engine.Module{js("w.js", `export default { fetch() {}, tail() {} };`)}, declared: []string{"tail"}, code: artifact.LoadHandlerNotExported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := engine.Load(context.Background(), bin, c.modules, c.main, c.declared)
			var le *artifact.LoadError
			switch {
			case c.code == "" && err != nil:
				t.Fatalf("Load: %v, want %v", err, c.want)
			case c.code == "" && !slices.Equal(got, c.want):
				t.Fatalf("Load = %#v, want %#v", got, c.want)
			case c.code != "" && !errors.As(err, &le):
				t.Fatalf("Load = %v, %v; want a %s refusal", got, err, c.code)
			case c.code != "" && le.Code != c.code:
				t.Fatalf("Load refused %v, want code %s", le, c.code)
			}
			if le != nil {
				t.Logf("%v", le)
			}
		})
	}
}

// BenchmarkLoad measures one load check of a small bundle.
func BenchmarkLoad(b *testing.B) {
	bin := enginetest.Binary(b)
	mods := []engine.Module{js("w.js", `import x from "./a.js"; export default { fetch() {}, queue: x };`), js("a.js", `export default () => 1;`)}
	for b.Loop() {
		if _, err := engine.Load(context.Background(), bin, mods, "w.js", []string{"fetch"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadFloor is the floor of BenchmarkLoad in the same run:
// `workerd test` of a config with one worker of one module, no stubs, no
// probe work.
func BenchmarkLoadFloor(b *testing.B) {
	bin := enginetest.Binary(b)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.js"), []byte(`export default { test() {} };`), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (services = [(name = "w", worker = (modules = [(name = "w.js", esModule = embed "w.js")], compatibilityDate = "` + engine.CompatibilityDate + `"))]);
`
	if err := os.WriteFile(filepath.Join(dir, "c.capnp"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cmd := exec.Command(bin, "test", "c.capnp")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
