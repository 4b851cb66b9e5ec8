package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Module is one module of a version's bundle, as its committed manifest
// lists it (spec/runtime-v1.md §1.1), with its bytes.
type Module struct {
	Name      string
	MediaType string
	Data      []byte
}

// Version is one version a shard generation serves on its own socket.
type Version struct {
	UID        string
	MainModule string
	Modules    []Module
	Vars       []Var
	Bindings   []Binding
	Services   []Service
	// Secrets are the version's sensitive variables (spec/runtime-v1.md
	// §3.2): each reaches the engine only through the process
	// environment (Environ), never a file.
	Secrets []Secret
	// Socket is the unix socket path the version's HTTP listener binds.
	Socket string
	// Assets are its static assets; nil when it has none.
	Assets *Assets
}

// Shard is one generation of one tenant's engine process: every version
// it serves, the host-only sockets and the projection sources.
type Shard struct {
	// Dir is the generation's 0700 directory: config and module files.
	Dir string
	// Health is the unix socket of the host's event-loop probe, served by
	// a host-owned worker with no tenant code (Probe).
	Health string
	// Gateway is the unix socket of the binding gateway; "" when no
	// version has a gateway-served binding.
	Gateway string
	// Tail is the unix socket of the host's tail sink: every version's
	// console output and uncaught exceptions reach it through a host-owned
	// tail worker (TailWorker); "" sends them nowhere.
	Tail string
	// Dispatch is the unix socket of the host-owned dispatch worker
	// (DispatchWorker) through which the host invokes each version's
	// scheduled and queue handlers; "" configures none. With one, the
	// engine must run with --experimental (Start): the worker's
	// compatibility flag service_binding_extra_handlers is experimental.
	Dispatch string
	Versions []Version
	// Projections maps a projection module name (Projections[k].Module)
	// to its JS source; a version with a binding of a kind missing here
	// cannot be configured.
	Projections map[string]string
}

// Loadable media types and the workerd module type each loads as
// (spec/runtime-v1.md §1.1); application/source-map+json is carried,
// never linked.
var moduleTypes = map[string]string{
	"application/javascript+module": "esModule",
	"text/plain":                    "text",
	"application/octet-stream":      "data",
	"application/wasm":              "wasm",
}

const auxiliaryMediaType = "application/source-map+json"

// healthWorker answers the host's event-loop probe (Probe).
const healthWorker = `export default { fetch() { return new Response("ok"); } };
`

// TailWorker is the host-owned tail worker of every shard (workerd's
// Worker.tails, not an experimental feature): after each invocation of a
// version it receives workerd's trace events, with ctx.props.version the
// version's UID set by the config (never by tenant code), and posts those
// that carry console output or exceptions to the host's tail sink as
// {"version": UID, "events": [...]} (spec/runtime-v1.md §2.1).
const TailWorker = `export default {
  async tail(events, env, ctx) {
    const kept = events.filter((e) => (e.logs && e.logs.length) || (e.exceptions && e.exceptions.length));
    if (kept.length === 0) return;
    const body = JSON.stringify({ version: ctx.props.version, events: kept });
    const resp = await env.SINK.fetch("http://tail/", { method: "POST", body, headers: { "content-type": "application/json" } });
    await resp.arrayBuffer();
  },
};
`

// DispatchFlag is the compatibility flag of the dispatch worker alone:
// it gives a service binding scheduled() and queue() (workerd's
// Fetcher), so a host-owned worker can invoke a version's handlers.
// No version gets it.
const DispatchFlag = "service_binding_extra_handlers"

// DispatchWorker is the host-owned dispatch worker of a shard with events
// (Shard.Dispatch): it has one service binding per version, named by the
// version's UID, and answers the host's POST /scheduled {version,
// scheduledTime (ms), cron} with {outcome} and POST /queue {version,
// queue, messages: [{id, timestamp (ms), body (base64), attempts}]} with
// {outcome, ackAll, retryBatch, explicitAcks, retryMessages}, workerd's
// results (spec/runtime-v1.md §2.5, §2.6). A version it does not bind
// answers 404 and a call that did not reach the version (it threw) 502,
// each {error}: the handler did not run.
const DispatchWorker = `function bytes(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    const req = await request.json();
    const target = Object.hasOwn(env, req.version) ? env[req.version] : undefined;
    if (target === undefined) return Response.json({ error: "this generation does not run version " + req.version }, { status: 404 });
    try {
      if (path === "/scheduled") {
        const r = await target.scheduled({ scheduledTime: new Date(req.scheduledTime), cron: req.cron });
        return Response.json({ outcome: r.outcome });
      }
      if (path === "/queue") {
        const messages = req.messages.map((m) => ({ id: m.id, timestamp: new Date(m.timestamp), body: bytes(m.body), attempts: m.attempts }));
        const r = await target.queue(req.queue, messages);
        return Response.json({ outcome: r.outcome, ackAll: r.ackAll, retryBatch: r.retryBatch, explicitAcks: r.explicitAcks, retryMessages: r.retryMessages });
      }
    } catch (err) {
      return Response.json({ error: String(err && err.message || err) }, { status: 502 });
    }
    return Response.json({ error: "no such dispatch " + path }, { status: 404 });
  },
};
`

// ConfigFile is the name of the generated config in Shard.Dir.
const ConfigFile = "workerd.capnp"

// WriteConfig writes s's workerd configuration (text Cap'n Proto, constant
// "config") and every module file into s.Dir, which must exist, and
// returns the config's path. Each version is a worker service whose first
// module is its generated entry (Entry), with a refusing stub in place of
// each engine built-in (BuiltinModules) the bundle does not name, listening on its own socket with
// X-Forwarded-Proto as the scheme header; each gateway binding is an
// external service to s.Gateway injecting Takoform-Binding: <UID>;
// each sensitive variable is a fromEnvironment binding naming its
// SecretEnv variable, so no value is ever written here (Environ);
// a version with static assets reads their bytes from a read-only disk
// service of Assets.Dir (spec/runtime-v1.md §9.2, repo decision 0059);
// globalOutbound reaches public addresses only (spec/runtime-v1.md §4,
// §0.3, §3.2). No version gets a compatibility flag; only the dispatch
// worker (Shard.Dispatch) has one (DispatchFlag).
func WriteConfig(s Shard) (string, error) {
	var svc, sockets []string
	svc = append(svc, `(name = "internet", network = (allow = ["public"]))`)
	if err := os.WriteFile(filepath.Join(s.Dir, "health.js"), []byte(healthWorker), 0o600); err != nil {
		return "", err
	}
	svc = append(svc, fmt.Sprintf(`(name = "__health", worker = (modules = [(name = "health.js", esModule = embed "health.js")], compatibilityDate = %s, globalOutbound = "internet"))`, capnpText(CompatibilityDate)))
	sockets = append(sockets, fmt.Sprintf(`(name = "health", address = %s, http = (), service = "__health")`, capnpText("unix:"+s.Health)))
	if s.Tail != "" {
		if err := os.WriteFile(filepath.Join(s.Dir, "tail.js"), []byte(TailWorker), 0o600); err != nil {
			return "", err
		}
		svc = append(svc, fmt.Sprintf(`(name = "__tailsink", external = (address = %s, http = ()))`, capnpText("unix:"+s.Tail)))
		svc = append(svc, fmt.Sprintf(`(name = "__tail", worker = (modules = [(name = "tail.js", esModule = embed "tail.js")], compatibilityDate = %s, bindings = [(name = "SINK", service = "__tailsink")], globalOutbound = "internet"))`, capnpText(CompatibilityDate)))
	}
	if s.Dispatch != "" {
		if err := os.WriteFile(filepath.Join(s.Dir, "dispatch.js"), []byte(DispatchWorker), 0o600); err != nil {
			return "", err
		}
		var binds []string
		for vi, v := range s.Versions {
			binds = append(binds, fmt.Sprintf(`(name = %s, service = %s)`, capnpText(v.UID), capnpText("v"+strconv.Itoa(vi))))
		}
		svc = append(svc, fmt.Sprintf(`(name = "__dispatch", worker = (modules = [(name = "dispatch.js", esModule = embed "dispatch.js")], compatibilityDate = %s, compatibilityFlags = [%s], bindings = [%s], globalOutbound = "internet"))`,
			capnpText(CompatibilityDate), capnpText(DispatchFlag), strings.Join(binds, ", ")))
		sockets = append(sockets, fmt.Sprintf(`(name = "dispatch", address = %s, http = (), service = "__dispatch")`, capnpText("unix:"+s.Dispatch)))
	}
	for vi, v := range s.Versions {
		w, extra, err := writeVersion(s, vi, v)
		if err != nil {
			return "", fmt.Errorf("version %s: %w", v.UID, err)
		}
		name := "v" + strconv.Itoa(vi)
		svc = append(svc, fmt.Sprintf(`(name = %s, worker = %s)`, capnpText(name), w))
		svc = append(svc, extra...)
		sockets = append(sockets, fmt.Sprintf(`(name = %s, address = %s, http = (forwardedProtoHeader = "X-Forwarded-Proto"), service = %s)`,
			capnpText(name), capnpText("unix:"+v.Socket), capnpText(name)))
	}
	var c strings.Builder
	c.WriteString("# Generated by the Takoform host; one tenant's shard (spec/runtime-v1.md §0.3).\n")
	c.WriteString("using Workerd = import \"/workerd/workerd.capnp\";\n")
	c.WriteString("const config :Workerd.Config = (\n  services = [\n")
	for _, x := range svc {
		c.WriteString("    " + x + ",\n")
	}
	// Structured logging: one JSON object per line, workerd's own
	// diagnostics carrying "source" (Start tells them from console output).
	c.WriteString("  ],\n  logging = (structuredLogging = true),\n  sockets = [\n")
	for _, x := range sockets {
		c.WriteString("    " + x + ",\n")
	}
	c.WriteString("  ],\n);\n")
	p := filepath.Join(s.Dir, ConfigFile)
	return p, os.WriteFile(p, []byte(c.String()), 0o600)
}

// writeVersion writes version vi's module files and returns its Worker
// struct and the gateway services its bindings use.
func writeVersion(s Shard, vi int, v Version) (string, []string, error) {
	dir := filepath.Join(s.Dir, "v"+strconv.Itoa(vi))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", nil, err
	}
	service := map[string]string{} // version UID -> its worker service
	for i, o := range s.Versions {
		service[o.UID] = "v" + strconv.Itoa(i)
	}
	runs := func(uid string) bool { return service[uid] != "" }
	var secretNames []string
	for _, sv := range v.Secrets {
		secretNames = append(secretNames, sv.Name)
	}
	entry, err := Entry(v.MainModule, v.Vars, v.Bindings, v.Services, secretNames, runs, v.Assets)
	if err != nil {
		return "", nil, err
	}
	var mods []string
	file := func(i int, data []byte) (string, error) {
		rel := filepath.Join("v"+strconv.Itoa(vi), strconv.Itoa(i))
		return rel, os.WriteFile(filepath.Join(s.Dir, rel), data, 0o600)
	}
	rel, err := file(0, []byte(entry))
	if err != nil {
		return "", nil, err
	}
	mods = append(mods, fmt.Sprintf(`(name = %s, esModule = embed %s)`, capnpText(EntryModule), capnpText(rel)))
	for i, m := range v.Modules {
		if strings.HasPrefix(m.Name, ReservedPrefix) {
			return "", nil, fmt.Errorf("module %q uses the host's reserved prefix %q", m.Name, ReservedPrefix)
		}
		if m.MediaType == auxiliaryMediaType {
			continue
		}
		typ, ok := moduleTypes[m.MediaType]
		if !ok {
			return "", nil, fmt.Errorf("module %q has media type %q, which is not loadable (unsupported_media_type)", m.Name, m.MediaType)
		}
		rel, err := file(i+1, m.Data)
		if err != nil {
			return "", nil, err
		}
		mods = append(mods, fmt.Sprintf(`(name = %s, %s = embed %s)`, capnpText(m.Name), typ, capnpText(rel)))
	}
	named := map[string]bool{}
	for _, m := range v.Modules {
		named[m.Name] = true
	}
	for i, b := range BuiltinModules {
		if named[b] {
			continue // the bundle's own module of that name wins
		}
		rel, err := file(len(v.Modules)+1+i, []byte(refusedBuiltin(b)))
		if err != nil {
			return "", nil, err
		}
		mods = append(mods, fmt.Sprintf(`(name = %s, esModule = embed %s)`, capnpText(b), capnpText(rel)))
	}
	var kinds []Kind
	var binds, extra []string
	for i, b := range v.Bindings {
		if s.Gateway == "" {
			return "", nil, fmt.Errorf("binding %q needs the binding gateway, which this shard does not have", b.Name)
		}
		if !slices.Contains(kinds, b.Kind) {
			kinds = append(kinds, b.Kind)
		}
		gw := fmt.Sprintf("gw-%d-%d", vi, i)
		extra = append(extra, fmt.Sprintf(`(name = %s, external = (address = %s, http = (injectRequestHeaders = [(name = "Takoform-Binding", value = %s)])))`,
			capnpText(gw), capnpText("unix:"+s.Gateway), capnpText(b.UID)))
		binds = append(binds, fmt.Sprintf(`(name = %s, service = %s)`, capnpText(RawName(i)), capnpText(gw)))
	}
	for j := range v.Secrets {
		binds = append(binds, fmt.Sprintf(`(name = %s, fromEnvironment = %s)`, capnpText(SecretRawName(j)), capnpText(SecretEnv(vi, j))))
	}
	for i, sv := range v.Services {
		for j, t := range sv.Targets {
			if runs(t.Version) {
				binds = append(binds, fmt.Sprintf(`(name = %s, service = %s)`, capnpText(ServiceRawName(i, j)), capnpText(service[t.Version])))
			}
		}
	}
	if v.Assets != nil {
		if !filepath.IsAbs(v.Assets.Dir) {
			return "", nil, fmt.Errorf("the static assets directory %q is not absolute", v.Assets.Dir)
		}
		disk := "va" + strconv.Itoa(vi)
		extra = append(extra, fmt.Sprintf(`(name = %s, disk = (path = %s, writable = false))`, capnpText(disk), capnpText(v.Assets.Dir)))
		binds = append(binds, fmt.Sprintf(`(name = %s, service = %s)`, capnpText(AssetsRawName), capnpText(disk)))
	}
	for _, k := range kinds {
		if p := Projections[k]; s.Projections[p.Module] == "" {
			return "", nil, fmt.Errorf("the %s projection (%s) is not available in this build", k, p.Module)
		}
	}
	if len(kinds) > 0 {
		// Every projection module goes in: they import shared ones
		// (e.g. __takoform/common.js) by name.
		names := slices.Sorted(maps.Keys(s.Projections))
		for j, name := range names {
			rel := filepath.Join("v"+strconv.Itoa(vi), "p-"+strconv.Itoa(j)+".js")
			if err := os.WriteFile(filepath.Join(s.Dir, rel), []byte(s.Projections[name]), 0o600); err != nil {
				return "", nil, err
			}
			mods = append(mods, fmt.Sprintf(`(name = %s, esModule = embed %s)`, capnpText(name), capnpText(rel)))
		}
	}
	tails := ""
	if s.Tail != "" {
		props, err := json.Marshal(map[string]string{"version": v.UID})
		if err != nil {
			return "", nil, err
		}
		tails = fmt.Sprintf(`, tails = [(name = "__tail", props = (json = %s))]`, capnpText(string(props)))
	}
	w := fmt.Sprintf(`(modules = [%s], compatibilityDate = %s, bindings = [%s], globalOutbound = "internet"%s)`,
		strings.Join(mods, ", "), capnpText(CompatibilityDate), strings.Join(binds, ", "), tails)
	return w, extra, nil
}

// refusedBuiltin is the stub a shard serves in place of engine built-in
// name: importing it throws, so tenant code never reaches a built-in
// (spec/runtime-v1.md §1.1, §10.7). A version that imports one statically
// does not start; a dynamic import rejects.
func refusedBuiltin(name string) string {
	return fmt.Sprintf("throw new Error(%s);\nexport default undefined;\n",
		jsString(fmt.Sprintf("%q is an engine built-in module, which this host does not offer (not portable): bundle what the code needs", name)))
}

// Secret is one sensitive variable of a version: its env name and value.
type Secret struct {
	Name  string
	Value string
}

// SecretEnv is the process environment variable carrying version vi's
// j-th sensitive value; the config names it (a fromEnvironment binding),
// the value itself is only in the environment Environ builds.
func SecretEnv(vi, j int) string { return "TAKOFORM_SV_" + strconv.Itoa(vi) + "_" + strconv.Itoa(j) }

// SecretRawName is the internal workerd binding name of a version's j-th
// sensitive variable; tenant code never sees it (the entry builds env).
func SecretRawName(j int) string { return "__takoform_e" + strconv.Itoa(j) }

// Environ is the whole environment of s's engine process: one variable
// per sensitive value of each version (SecretEnv), and nothing of the
// host's own environment. A value must not hold a NUL byte.
func Environ(s Shard) ([]string, error) {
	env := []string{}
	for vi, v := range s.Versions {
		for j, sv := range v.Secrets {
			if strings.IndexByte(sv.Value, 0) >= 0 {
				return nil, fmt.Errorf("version %s: sensitive variable %s holds a NUL byte, which an environment cannot carry", v.UID, sv.Name)
			}
			env = append(env, SecretEnv(vi, j)+"="+sv.Value)
		}
	}
	return env, nil
}

// capnpText is s as a Cap'n Proto text literal: quotes, backslashes and
// every byte outside printable ASCII escaped as \xNN.
func capnpText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
