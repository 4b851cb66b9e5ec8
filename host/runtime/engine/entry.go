package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/takoform/takoform/host/runtime/projection"
)

// EntryModule is the name of the generated main module of every version.
// Manifest names never start with "__takoform/" in a runnable version
// (ReservedPrefix), so it cannot collide with a tenant's module.
const EntryModule = ReservedPrefix + "entry.js"

// ReservedPrefix starts every module name the host adds to a version.
const ReservedPrefix = projection.Prefix

// Kind is a gateway-served binding kind (spec/runtime-v1.md §5.1–§5.4).
type Kind string

// The gateway-served binding kinds, by the WorkerVersion field that
// declares them (spec/host-api-v1alpha3.md §6.4).
const (
	KindKV      Kind = "kv"      // kvBindings, edge.kv
	KindObjects Kind = "objects" // bucketBindings, edge.objects
	KindSQL     Kind = "sql"     // sqliteBindings, edge.sql (v1alpha1 family)
	KindQueue   Kind = "queue"   // queueProducerBindings, edge.queue producer
	// KindSQLV1beta1 is sqliteBindings of a v1beta1-family version: its
	// own edge.sql (spec/runtime-v1.md §5.3, right column).
	KindSQLV1beta1 Kind = "sql-v1beta1"
)

// Projection is where a kind's JS projection comes from: the module the
// data side supplies (its source is Shard.Projections[Module]) and the
// factory it exports, called as factory(rawFetcher) to build env.NAME.
type Projection struct{ Module, Factory string }

// Projections is the one table of projection modules and factories.
var Projections = map[Kind]Projection{
	KindKV:         {ReservedPrefix + "kv.js", "makeKV"},
	KindObjects:    {ReservedPrefix + "objects.js", "makeObjects"},
	KindSQL:        {ReservedPrefix + "sql-v1alpha1.js", "makeSQL"},
	KindSQLV1beta1: {ReservedPrefix + "sql-v1beta1.js", "makeSQL"},
	KindQueue:      {ReservedPrefix + "queue.js", "makeQueue"},
}

// Var is one declared var: its env name and stored JSON value.
type Var struct {
	Name  string
	Value json.RawMessage
}

// Binding is one gateway-served binding of a version: its env name, kind
// and the UID of the bound resource (sent by workerd as the
// Takoform-Binding header, never by tenant code).
type Binding struct {
	Name string
	Kind Kind
	UID  string
}

// Service is one service binding of a version (spec/runtime-v1.md §5.5):
// its env name and the target worker's active deployment, as weighted
// version UIDs in stored order. A call draws a version by weight per call;
// a drawn version the shard does not run (none, not runnable) rejects the
// call with an Error named backend_unavailable.
type Service struct {
	Name    string
	Targets []ServiceTarget
}

// ServiceTarget is one weighted version of a service binding's target.
type ServiceTarget struct {
	Version string // WorkerVersion UID
	Weight  int64  // basis points
}

// ServiceRawName is the internal workerd binding name of a version's i-th
// service binding's j-th target.
func ServiceRawName(i, j int) string { return "__takoform_s" + strconv.Itoa(i) + "_" + strconv.Itoa(j) }

// RawName is the internal workerd binding name of a version's i-th
// gateway binding; tenant code never sees it (the entry builds env).
func RawName(i int) string { return "__takoform_b" + strconv.Itoa(i) }

// MaxWaitUntilTasks is how many ctx.waitUntil tasks one invocation may
// register; the next call throws RangeError (spec/runtime-v1.md §2.4).
const MaxWaitUntilTasks = 1000

// WaitUntilCeiling is how long a waitUntil task may stay pending after its
// invocation's handler settled before it is cancelled and reported
// (spec/runtime-v1.md §2.4, §10.3). A variable so tests can shorten it;
// it is read when a shard's entry is generated.
var WaitUntilCeiling = 30 * time.Second

// MaxRetryDelaySeconds bounds a queue retry's delaySeconds
// (spec/runtime-v1.md §2.6): a larger one throws RangeError.
const MaxRetryDelaySeconds = 43200

// FailedBody is the fixed body of the host-generated 500 a fetch that
// throws, rejects or returns a non-Response gets (spec/runtime-v1.md §2.2,
// §10.8): no error, no stack, no tenant detail.
const FailedBody = "500 Internal Server Error: the worker failed before answering\n"

// Entry generates the main module of a version (spec/runtime-v1.md §2.1,
// §3.1): it imports the tenant's main module (mainModule, a manifest
// name) and, for each handler its default export carries (fetch,
// scheduled, queue; none unless the default export is a plain object),
// exports one that calls it with exactly (event, env, ctx). env is a new
// plain object per invocation holding exactly vars (their JSON values),
// secrets (each the string of its SecretRawName binding), bindings (factory(raw binding) of Projections) and services, for which
// runs says which target versions the shard serves, in lexicographic
// order; a service binding is an object with only fetch (Service). A
// fetch that throws, rejects or returns a non-Response answers
// FailedBody with status 500 and hands the error to workerd as a rejected
// waitUntil task, so the invocation's trace (the tail worker, TailWorker)
// carries its name and message. With assets (nil: none) the fetch
// handler serves them around the tenant's (assetsHandlers). It fails on a
// name declared twice.
func Entry(mainModule string, vars []Var, bindings []Binding, services []Service, secrets []string, runs func(version string) bool, assets *Assets) (string, error) {
	type member struct{ name, expr string }
	var members []member
	seen := map[string]bool{}
	values := map[string]json.RawMessage{}
	for _, v := range vars {
		if seen[v.Name] {
			return "", fmt.Errorf("env name %q is declared twice", v.Name)
		}
		seen[v.Name] = true
		values[v.Name] = v.Value
		members = append(members, member{v.Name, "v[" + jsString(v.Name) + "]"})
	}
	for j, name := range secrets {
		if seen[name] {
			return "", fmt.Errorf("env name %q is declared twice", name)
		}
		seen[name] = true
		members = append(members, member{name, "raw[" + jsString(SecretRawName(j)) + "]"})
	}
	var imports []string
	imported := map[Kind]bool{}
	for i, b := range bindings {
		if seen[b.Name] {
			return "", fmt.Errorf("env name %q is declared twice", b.Name)
		}
		seen[b.Name] = true
		p, ok := Projections[b.Kind]
		if !ok {
			return "", fmt.Errorf("binding %q has unknown kind %q", b.Name, b.Kind)
		}
		if !imported[b.Kind] {
			imported[b.Kind] = true
			imports = append(imports, fmt.Sprintf("import { %s } from %s;\n", p.Factory, jsString("/"+p.Module)))
		}
		members = append(members, member{b.Name, p.Factory + "(raw[" + jsString(RawName(i)) + "])"})
	}
	for i, s := range services {
		if seen[s.Name] {
			return "", fmt.Errorf("env name %q is declared twice", s.Name)
		}
		seen[s.Name] = true
		var targets []string
		for j, t := range s.Targets {
			raw := "null"
			if runs(t.Version) {
				raw = "raw[" + jsString(ServiceRawName(i, j)) + "]"
			}
			targets = append(targets, fmt.Sprintf("[%d, %s]", t.Weight, raw))
		}
		members = append(members, member{s.Name, "service([" + strings.Join(targets, ", ") + "])"})
	}
	slices.Sort(imports)
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
	varsJSON, err := json.Marshal(values)
	if err != nil {
		return "", fmt.Errorf("vars: %w", err)
	}
	var js strings.Builder
	js.WriteString("// Generated by the Takoform host (spec/runtime-v1.md §2.1, §3.1).\n")
	fmt.Fprintf(&js, "import tenant from %s;\n", jsString("../"+mainModule))
	for _, im := range imports {
		js.WriteString(im)
	}
	fmt.Fprintf(&js, "const VARS = %s;\n", jsString(string(varsJSON)))
	js.WriteString("function env(raw) {\n  const v = JSON.parse(VARS);\n  return {\n")
	for _, m := range members {
		fmt.Fprintf(&js, "    %s: %s,\n", jsString(m.name), m.expr)
	}
	js.WriteString("  };\n}\n")
	fmt.Fprintf(&js, "const FAILED = %s;\n", jsString(FailedBody))
	fmt.Fprintf(&js, "const MAX_TASKS = %d;\nconst TASK_CEILING_MS = %d;\nconst MAX_DELAY = %d;\n", MaxWaitUntilTasks, WaitUntilCeiling.Milliseconds(), MaxRetryDelaySeconds)
	js.WriteString(entryHandlers)
	if assets != nil {
		pre, err := assetsPreamble(assets)
		if err != nil {
			return "", err
		}
		js.WriteString(pre)
		js.WriteString(assetsHandlers)
	}
	js.WriteString("export default handlers;\n")
	return js.String(), nil
}

// entryHandlers is the fixed tail of the generated entry module.
const entryHandlers = `function unavailable() {
  const err = new Error("the service binding's worker could not be reached");
  err.name = "backend_unavailable";
  return err;
}
function service(targets) {
  return {
    fetch(input, init) {
      const draw = Math.floor(Math.random() * 10000);
      let sum = 0;
      for (const [weight, target] of targets) {
        sum += weight;
        if (draw < sum) {
          return target === null ? Promise.reject(unavailable()) : target.fetch(input, init).catch(() => { throw unavailable(); });
        }
      }
      return Promise.reject(unavailable());
    },
  };
}
function report(native, err) {
  // A settled rejection on workerd's own waitUntil: workerd records it
  // among the invocation's exceptions (name, message) for the tail worker.
  const e = err instanceof Error ? err : new Error("a non-Error value was thrown (" + typeof err + ")");
  native.waitUntil(Promise.reject(e));
}
// context is the ctx a handler receives (spec/runtime-v1.md §2.4): only
// waitUntil and passThroughOnException (a no-op). A task's rejection is
// reported, never the invocation's failure; the 1001st task throws
// RangeError; a task still pending TASK_CEILING_MS after the handler
// settled is let go and reported; once the handler settled and every task
// settled, waitUntil throws an Error named context_expired.
function context(native, handler) {
  let tasks = 0, pending = 0, settled = false, expire;
  const ceiling = new Promise((resolve) => { expire = resolve; });
  const ctx = Object.freeze({
    waitUntil(promise) {
      if (settled && pending === 0) {
        const err = new Error("waitUntil after the invocation ended");
        err.name = "context_expired";
        throw err;
      }
      if (++tasks > MAX_TASKS) throw new RangeError("at most " + MAX_TASKS + " waitUntil tasks per invocation");
      pending++;
      const task = Promise.resolve(promise).then(() => "settled", (err) => { report(native, err); return "settled"; });
      const late = ceiling.then(() => new Promise((resolve) => setTimeout(resolve, TASK_CEILING_MS)))
        .then(() => "late");
      native.waitUntil(Promise.race([task, late]).then((how) => {
        pending--;
        if (how === "late") {
          const e = new Error("a " + handler + " waitUntil task was still pending " + TASK_CEILING_MS + " ms after the handler settled; it was let go");
          e.name = "waitUntil_ceiling";
          throw e;
        }
      }));
    },
    passThroughOnException() {},
  });
  const done = () => { settled = true; expire(); };
  return [ctx, done];
}
function settlement(name, message) {
  const err = new Error(message);
  err.name = name;
  return err;
}
function delayOf(options) {
  if (options === undefined || options === null || options.delaySeconds === undefined) return undefined;
  const d = options.delaySeconds;
  if (!Number.isInteger(d) || d < 0 || d > MAX_DELAY) throw new RangeError("delaySeconds is an integer from 0 to " + MAX_DELAY);
  return d;
}
// batch is the batch a queue handler receives (spec/runtime-v1.md §2.6):
// settlements are synchronous, recorded on workerd's own messages (whose
// results the host's dispatch worker returns), each message settled at
// most once (already_settled), only messages of this batch
// (unknown_message), and only while the handler runs (unknown_batch).
function batch(native) {
  const natives = new Map();
  const settled = new Set();
  let over = false;
  for (const m of native.messages) natives.set(m.id, m);
  const open = () => {
    if (over) throw settlement("unknown_batch", "this batch settled when its handler did");
  };
  const check = (id) => {
    open();
    if (!natives.has(id)) throw settlement("unknown_message", "message " + id + " is not in this batch");
    if (settled.has(id)) throw settlement("already_settled", "message " + id + " is settled already");
  };
  const acknowledge = (id) => {
    check(id);
    settled.add(id);
    natives.get(id).ack();
  };
  const retry = (id, options) => {
    const d = delayOf(options);
    check(id);
    settled.add(id);
    natives.get(id).retry(d === undefined ? {} : { delaySeconds: d });
  };
  const acknowledgeAll = () => {
    open();
    for (const id of natives.keys()) if (!settled.has(id)) acknowledge(id);
  };
  const messages = Object.freeze(native.messages.map((m) => {
    const id = m.id;
    return Object.freeze({
      id,
      timestampMillis: m.timestamp.getTime(),
      timestamp: m.timestamp,
      body: m.body,
      attempts: m.attempts,
      ack() { acknowledge(id); },
      retry(options) { retry(id, options); },
    });
  }));
  const b = Object.freeze({
    batchId: crypto.randomUUID(),
    queue: native.queue,
    messages,
    acknowledge,
    retry,
    acknowledgeAll,
    ackAll: acknowledgeAll,
    retryAll(options) {
      const d = delayOf(options);
      open();
      for (const id of natives.keys()) if (!settled.has(id)) retry(id, d === undefined ? undefined : { delaySeconds: d });
    },
  });
  return [b, () => { over = true; }];
}
function failed() {
  return new Response(FAILED, { status: 500, headers: { "content-type": "text/plain; charset=utf-8" } });
}
const handlers = {};
if (tenant !== null && typeof tenant === "object") {
  if (typeof tenant.fetch === "function") {
    handlers.fetch = async function (request, raw, native) {
      const [ctx, done] = context(native, "fetch");
      let response;
      try {
        response = await tenant.fetch(request, env(raw), ctx);
      } catch (err) {
        report(native, err);
        return failed();
      } finally {
        done();
      }
      if (!(response instanceof Response)) {
        report(native, new TypeError("fetch returned a value that is not a Response"));
        return failed();
      }
      return response;
    };
  }
  if (typeof tenant.scheduled === "function") {
    handlers.scheduled = async function (event, raw, native) {
      const [ctx, done] = context(native, "scheduled");
      const ev = Object.freeze({ scheduledTime: event.scheduledTime, cron: event.cron, noRetry() {} });
      try { return await tenant.scheduled(ev, env(raw), ctx); } finally { done(); }
    };
  }
  if (typeof tenant.queue === "function") {
    handlers.queue = async function (native, raw, nativeCtx) {
      const [ctx, done] = context(nativeCtx, "queue");
      const [b, over] = batch(native);
      try { return await tenant.queue(b, env(raw), ctx); } finally { over(); done(); }
    };
  }
}
`

// jsString is s as a JavaScript string literal (JSON's, which JS accepts;
// U+2028 and U+2029 are escaped by encoding/json).
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}
