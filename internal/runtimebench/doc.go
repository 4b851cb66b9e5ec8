// Package runtimebench holds the data plane's benchmarks, `make
// bench-runtime` (PERFORMANCE.md): on real workerd (enginetest.Binary) and a
// host on a real SQLite file, each figure printed beside its floor measured
// in the same run — hello-world requests per second and latency at c = 32
// through the ingress beside a bare full-duplex httputil.ReverseProxy in
// front of the same workerd socket and beside that socket itself; a KV
// read-after-write round trip through a worker beside a plain request and
// the binding gateway alone; the resident memory of a shard and of each
// further worker beside a bare workerd process; the time from a version's
// apply to its first answer beside a bare workerd's cold start; queue
// messages per second end to end beside storing them alone; the delay of
// a cron firing beside a fetch and the dispatcher's poll. The
// package has no code outside its benchmarks; nothing here runs in `make
// test` but the compiler.
package runtimebench
