package engine

// BuiltinModules are the engine built-in module specifiers of the pinned
// workerd that a bundle could import, each refused (spec/runtime-v1.md
// §1.1, §10.7): the load check and every shard put a host stub that throws
// at evaluation in place of each one the bundle does not itself name.
// Listed from the pinned binary: node:module's builtinModules, with and
// without the node: prefix (both resolve), node:sqlite and node:test, and
// the cloudflare: and workerd: specifiers in the binary's strings.
// TestBuiltinsRefused imports each through the engine; a binary bump must
// list what it adds (spec/runtime-v1.md §0.3).
var BuiltinModules = func() []string {
	node := []string{"_http_agent", "_http_client", "_http_common", "_http_incoming", "_http_outgoing", "_http_server",
		"_stream_duplex", "_stream_passthrough", "_stream_readable", "_stream_transform", "_stream_wrap", "_stream_writable",
		"_tls_common", "_tls_wrap", "assert", "assert/strict", "async_hooks", "buffer", "child_process", "cluster", "console",
		"constants", "crypto", "dgram", "diagnostics_channel", "dns", "dns/promises", "domain", "events", "fs", "fs/promises",
		"http", "http2", "https", "inspector", "inspector/promises", "module", "net", "os", "path", "path/posix", "path/win32",
		"perf_hooks", "process", "punycode", "querystring", "readline", "readline/promises", "repl", "stream",
		"stream/consumers", "stream/promises", "stream/web", "string_decoder", "sys", "timers", "timers/promises", "tls",
		"trace_events", "tty", "url", "util", "util/types", "v8", "vm", "wasi", "worker_threads", "zlib"}
	// process and node:process resolve before the bundle's modules in the
	// pinned engine, so no stub can take their place (UnrefusableBuiltins).
	var l []string
	for _, n := range node {
		if n != "process" {
			l = append(l, "node:"+n, n)
		}
	}
	l = append(l, "node:sqlite", "node:test")
	for _, n := range []string{"ai", "br", "durable-objects", "email", "internal-class", "node", "pipelines", "sockets", "vectorize", "workers", "workflows"} {
		l = append(l, "cloudflare:"+n)
	}
	return append(l, "workerd:unsafe", "workerd:unsafe-eval", "workerd:rtti")
}()

// UnrefusableBuiltins are the built-in specifiers the pinned engine
// resolves before any module of the bundle, so neither the load check nor
// a shard can refuse them: both yield the engine's process object, which
// every worker already has as the global process at the pinned
// compatibilityDate (an extra global, spec/runtime-v1.md §10.7). The load
// check therefore accepts a static import of them; repo decision 0052.
var UnrefusableBuiltins = []string{"node:process", "process"}
