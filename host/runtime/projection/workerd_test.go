package projection_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/runtime/projection"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
)

// findWorkerd is the engine binary: TAKOFORM_WORKERD, else what
// scripts/workerd.sh installed under tools/. Without one the test skips
// saying how to install it, and fails under CI=true
// (spec/runtime-v1.md §0.3).
func findWorkerd(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TAKOFORM_WORKERD"); p != "" {
		return p
	}
	if root, err := repoRoot(); err == nil {
		found, _ := filepath.Glob(filepath.Join(root, "tools", "workerd-*", "node_modules", "@cloudflare", "workerd-linux-64", "bin", "workerd"))
		for _, rel := range []string{"tools/workerd", "tools/bin/workerd"} {
			found = append(found, filepath.Join(root, rel))
		}
		for _, p := range found {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	const how = "workerd not found: run scripts/workerd.sh, or set TAKOFORM_WORKERD to the binary of " +
		"npm install --no-save --ignore-scripts --prefix DIR @cloudflare/workerd-linux-64@1.20261117.1 " +
		"(DIR/node_modules/@cloudflare/workerd-linux-64/bin/workerd)"
	if os.Getenv("CI") == "true" {
		t.Fatal(how)
	}
	t.Skip(how)
	return ""
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// The test worker: env as the generated entry would build it, one route
// per observation.
const testWorker = `
import { makeKV } from "__takoform/kv.js";
import { makeSQL } from "__takoform/sql-v1alpha1.js";
import { makeSQL as makeSQLV1beta1 } from "__takoform/sql-v1beta1.js";
import { makeQueue } from "__takoform/queue.js";
import { makeObjects } from "__takoform/objects.js";

async function settle(fn) {
  try {
    return { ok: true, value: await fn() };
  } catch (e) {
    return { ok: false, name: e.name, message: e.message, isError: e instanceof Error, isTypeError: e instanceof TypeError };
  }
}

export default {
  async fetch(request, hostEnv) {
    const env = { CACHE: makeKV(hostEnv.KV_GW), DB: makeSQL(hostEnv.SQL_GW), THEIRS: makeKV(hostEnv.THEIRS_GW),
      EVENTS: makeQueue(hostEnv.QUEUE_GW), MEDIA: makeObjects(hostEnv.BUCKET_GW), NOTES: makeSQLV1beta1(hostEnv.SQL_BETA_GW) };
    const url = new URL(request.url);
    const key = url.searchParams.get("key");
    switch (url.pathname) {
      case "/kv/put":
        await env.CACHE.put(key, await request.arrayBuffer());
        return new Response("stored");
      case "/kv/put-window": {
        const sent = new Uint8Array(await request.arrayBuffer());
        const big = new Uint8Array(sent.length + 6).fill(9);
        big.set(sent, 3);
        await env.CACHE.put(key, new DataView(big.buffer, 3, sent.length));
        return new Response("stored");
      }
      case "/kv/get": {
        const v = await env.CACHE.get(key);
        if (v === null) return new Response("null", { status: 404 });
        return new Response(v, { headers: { "x-type": Object.prototype.toString.call(v) } });
      }
      case "/kv/meta":
        return Response.json(await settle(async () => {
          await env.CACHE.put(key, "text é", { metadata: { a: "b" }, expirationTtlSeconds: 60 });
          const r = await env.CACHE.getWithMetadata(key);
          const plain = await env.CACHE.getWithMetadata(key + "-plain");
          return { text: new TextDecoder().decode(r.value), metadata: r.metadata, absent: plain };
        }));
      case "/kv/list":
        return Response.json(await settle(async () => {
          for (const k of ["b", "a\uFFFD", "a\u{1F600}"]) await env.CACHE.put(key + k, "v");
          const first = await env.CACHE.list({ prefix: key, limit: 2 });
          const rest = await env.CACHE.list({ prefix: key, cursor: first.cursor });
          return { first, rest };
        }));
      case "/kv/errors": {
        const pending = env.CACHE.get("\uD800");
        pending.catch(() => {});
        return Response.json({
          returnsPromise: pending instanceof Promise,
          methods: Object.keys(env.CACHE).sort(),
          loneSurrogate: await settle(() => env.CACHE.get("\uD800")),
          emptyKey: await settle(() => env.CACHE.get("")),
          longKey: await settle(() => env.CACHE.put("\u20AC".repeat(171), "v")),
          notBytes: await settle(() => env.CACHE.put("k", 42)),
          extraArgument: await settle(() => env.CACHE.get("k", "extra")),
          unknownOption: await settle(() => env.CACHE.put("k", "v", { expiration: 5 })),
          badTTL: await settle(() => env.CACHE.put("k", "v", { expirationTtlSeconds: 59 })),
          badCursor: await settle(() => env.CACHE.list({ cursor: "nope" })),
          tooLarge: await settle(() => env.CACHE.put("k", new Uint8Array(26214401))),
          bigMetadata: await settle(() => env.CACHE.put("k", "v", { metadata: { m: "x".repeat(1100) } })),
        });
      }
      case "/sql": {
        const { op, args } = await request.json();
        return Response.json(await settle(() => env.DB[op](...args)));
      }
      case "/sql-v1beta1": {
        const { op, args } = await request.json();
        return Response.json(await settle(() => env.NOTES[op](...args)));
      }
      case "/sql-v1beta1/js": {
        const q = (p) => settle(() => env.NOTES.query("SELECT ?1 AS v", [p]));
        return Response.json({
          nan: await q(NaN), infinity: await q(-Infinity), unsafe: await q(2 ** 53), safe: await q(-(2 ** 53 - 1)),
          bigint: await q(10n), boolean: await q(true), undef: await q(undefined), bytes: await q(new Uint8Array([1])),
          tagged: await q({ type: "integer", value: "1" }), loneSurrogate: await q("\uD800"),
          blob: await settle(async () => (await env.NOTES.query("SELECT ?1 AS v", [{ encoding: "base64", data: "AAECg/8=" }])).rows[0].v),
          big: await settle(async () => typeof (await env.NOTES.query("SELECT 9007199254740991 AS v")).rows[0].v),
        });
      }
      case "/queue": {
        const sent = new Uint8Array(await request.arrayBuffer());
        const big = new Uint8Array(sent.length + 2).fill(9);
        big.set(sent, 1);
        return Response.json({
          methods: Object.keys(env.EVENTS).sort(),
          send: await settle(() => env.EVENTS.send(big.subarray(1, 1 + sent.length), { delaySeconds: 0 })),
          batch: await settle(() => env.EVENTS.sendBatch([{ body: "one" }, { body: new Uint8Array([2]).buffer, delaySeconds: 5 }])),
          notBytes: await settle(() => env.EVENTS.send(42)),
          unknownOption: await settle(() => env.EVENTS.send("x", { retries: 1 })),
          tooLarge: await settle(() => env.EVENTS.send(new Uint8Array(131073))),
          tooMany: await settle(() => env.EVENTS.sendBatch(Array.from({ length: 101 }, () => ({ body: "m" })))),
        });
      }
      case "/objects": {
        const enc = new TextEncoder();
        const stream = (parts) => new ReadableStream({
          start(c) { for (const p of parts) c.enqueue(enc.encode(p)); c.close(); } });
        const failing = new ReadableStream({
          pull(c) { c.enqueue(enc.encode("partial")); c.error(new Error("source broke")); } });
        const text = async (o) => o === null ? null : { ...o, body: await new Response(o.body).text() };
        const big = new Uint8Array(5242880).fill(97);
        return Response.json({
          methods: Object.keys(env.MEDIA).sort(),
          put: await settle(() => env.MEDIA.put("docs/a.txt", stream(["hello ", "streamed ", "world"]), { contentType: "text/plain" })),
          head: await settle(() => env.MEDIA.head("docs/a.txt")),
          get: await settle(async () => text(await env.MEDIA.get("docs/a.txt"))),
          range: await settle(async () => text(await env.MEDIA.get("docs/a.txt", { range: { offset: 6, length: 8 } }))),
          absent: await settle(() => env.MEDIA.get("nope")),
          createOnly: await settle(() => env.MEDIA.put("docs/a.txt", "x", { ifNoneMatch: "*" })),
          brokenStream: await settle(() => env.MEDIA.put("docs/broken", failing)),
          afterBroken: await settle(() => env.MEDIA.head("docs/broken")),
          list: await settle(() => env.MEDIA.list({ prefix: "docs/", delimiter: "/" })),
          multipart: await settle(async () => {
            const { uploadId } = await env.MEDIA.createMultipartUpload("big.bin");
            const p1 = await env.MEDIA.uploadPart("big.bin", uploadId, 1, big);
            const p2 = await env.MEDIA.uploadPart("big.bin", uploadId, 2, stream(["end"]));
            const done = await env.MEDIA.completeMultipartUpload("big.bin", uploadId, [p1, p2]);
            const h = await env.MEDIA.head("big.bin");
            return { size: done.size, headSize: h.size, etagsAgree: done.etag === h.etag };
          }),
          badPart: await settle(() => env.MEDIA.uploadPart("big.bin", "up_none", 1, "x")),
          deleted: await settle(async () => { await env.MEDIA.delete("docs/a.txt"); return env.MEDIA.head("docs/a.txt"); }),
        });
      }
      case "/theirs":
        return Response.json(await settle(() => env.THEIRS.get("k")));
      case "/spoof": {
        const res = await hostEnv.KV_GW.fetch("http://gateway/kv/v1/value?key=spoof", {
          method: "PUT", body: "x", headers: { "Takoform-Binding": "uid-kv-globex" } });
        return new Response(String(res.status));
      }
    }
    return new Response("no route", { status: 404 });
  },
};
`

// engine is one workerd process serving the test worker on base.
type engine struct {
	base string
	st   *sqlite.Store
	gw   *gateway.Gateway
}

func startEngine(t *testing.T) *engine {
	t.Helper()
	bin := findWorkerd(t)
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "host.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ref := func(kind string) form.FormRef {
		return form.FormRef{APIVersion: edge.GroupV1alpha1, Kind: kind, DefinitionVersion: "1.0.0",
			SchemaDigest: "sha256:1111111111111111111111111111111111111111111111111111111111111111"}
	}
	err = st.Update(context.Background(), func(tx store.Tx) error {
		for _, r := range []struct{ tenant, kind, uid string }{
			{"acme", gateway.KindKV, "uid-kv"}, {"acme", gateway.KindSQL, "uid-sql"}, {"globex", gateway.KindKV, "uid-kv-globex"},
			{"acme", gateway.KindQueue, "uid-q"}, {"acme", gateway.KindBucket, "uid-b"}, {"acme", gateway.KindSQL, "uid-sql-beta"},
		} {
			group := edge.GroupV1alpha1
			if strings.HasSuffix(r.uid, "-beta") {
				group = edge.GroupV1beta1
			}
			fr := ref(r.kind)
			fr.APIVersion = group
			if err := tx.CreateResource(&store.Resource{
				Key: store.Key{Tenant: r.tenant, Space: "prod", APIVersion: group, Kind: r.kind, Name: r.uid},
				UID: r.uid, FormRef: fr, Generation: 1, Revision: 1, Spec: []byte(`{}`), Status: []byte(`{}`),
				SpecDigest: "sha256:2222222222222222222222222222222222222222222222222222222222222222",
				CreatedAt:  time.Unix(1, 0), UpdatedAt: time.Unix(1, 0),
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.New(st, filepath.Join(dir, "data"), nil)
	t.Cleanup(func() { _ = gw.Close() })
	sock := filepath.Join(dir, "gw.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gw.ForTenant("acme"), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ul) }()
	t.Cleanup(func() { _ = srv.Close() })

	mods := projection.Modules()
	var modLines []string
	for name, src := range mods {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, "w", name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "w", name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		modLines = append(modLines, fmt.Sprintf("    (name = %q, esModule = embed %q),", name, "w/"+name))
	}
	if err := os.WriteFile(filepath.Join(dir, "w", "main.js"), []byte(testWorker), 0o600); err != nil {
		t.Fatal(err)
	}
	gwService := func(name, uid string) string {
		return fmt.Sprintf(`    (name = %q, external = (address = "unix:%s", http = (injectRequestHeaders = [(name = %q, value = %q)]))),`,
			name, sock, gateway.BindingHeader, uid)
	}
	config := strings.Join([]string{
		`using Workerd = import "/workerd/workerd.capnp";`,
		`const config :Workerd.Config = (`,
		`  services = [`,
		`    (name = "main", worker = .worker),`,
		gwService("gw-kv", "uid-kv"), gwService("gw-sql", "uid-sql"), gwService("gw-theirs", "uid-kv-globex"),
		gwService("gw-queue", "uid-q"), gwService("gw-bucket", "uid-b"), gwService("gw-sql-beta", "uid-sql-beta"),
		`  ],`,
		`  sockets = [(name = "http", http = (), service = "main")],`,
		`);`,
		`const worker :Workerd.Worker = (`,
		`  modules = [`,
		`    (name = "main.js", esModule = embed "w/main.js"),`,
		strings.Join(modLines, "\n"),
		`  ],`,
		`  bindings = [(name = "KV_GW", service = "gw-kv"), (name = "SQL_GW", service = "gw-sql"), (name = "THEIRS_GW", service = "gw-theirs"), (name = "QUEUE_GW", service = "gw-queue"),` +
			` (name = "BUCKET_GW", service = "gw-bucket"), (name = "SQL_BETA_GW", service = "gw-sql-beta")],`,
		`  compatibilityDate = "2026-11-17",`,
		`);`,
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "config.capnp"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := tl.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + tl.Addr().String()
	_ = tl.Close() // lf keeps the socket listening for workerd
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.capnp"), "--socket-fd", "http=3")
	cmd.ExtraFiles = []*os.File{lf}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = lf.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("workerd output:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/ready")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workerd did not answer within 30 s: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &engine{base: base, st: st, gw: gw}
}

func (e *engine) do(t *testing.T, method, path string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func (e *engine) json(t *testing.T, method, path string, body []byte, into any) {
	t.Helper()
	status, _, b := e.do(t, method, path, body)
	if status != 200 {
		t.Fatalf("%s %s: %d %s", method, path, status, b)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, b)
	}
}

// settled is the worker's account of one projection call.
type settled struct {
	OK          bool            `json:"ok"`
	Value       json.RawMessage `json:"value"`
	Name        string          `json:"name"`
	Message     string          `json:"message"`
	IsError     bool            `json:"isError"`
	IsTypeError bool            `json:"isTypeError"`
}

var check11 = []byte{0x00, 0x01, 0x02, 0x7f, 0x7f, 0xfe, 0xff, 'T', 'A', 'K', 'O', 'F', 'O', 'R', 'M'}

func TestKVProjectionInWorkerd(t *testing.T) {
	e := startEngine(t)
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	key := "runtime-abi:kv-round-trip-" + hex.EncodeToString(token)

	if status, _, b := e.do(t, "POST", "/kv/put?key="+key, check11); status != 200 || string(b) != "stored" {
		t.Fatalf("put: %d %s", status, b)
	}
	status, hdr, b := e.do(t, "GET", "/kv/get?key="+key, nil)
	if status != 200 || !bytes.Equal(b, check11) || hdr.Get("x-type") != "[object ArrayBuffer]" {
		t.Errorf("get: %d %x (%s); want 200 and the 15 bytes %x as an ArrayBuffer", status, b, hdr.Get("x-type"), check11)
	}
	err := e.st.View(context.Background(), func(tx store.Tx) error {
		got, err := tx.KVGet("uid-kv", key, time.Now())
		if err != nil || !bytes.Equal(got.Value, check11) {
			t.Errorf("the host store holds %v (%v); want the 15 bytes", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if status, _, b := e.do(t, "GET", "/kv/get?key=absent-"+key, nil); status != 404 || string(b) != "null" {
		t.Errorf("get of an absent key: %d %s; want null", status, b)
	}
	if status, _, _ := e.do(t, "POST", "/kv/put-window?key=window", []byte{1, 2, 3}); status != 200 {
		t.Fatalf("put of a DataView window: %d", status)
	}
	if _, _, b := e.do(t, "GET", "/kv/get?key=window", nil); !bytes.Equal(b, []byte{1, 2, 3}) {
		t.Errorf("a DataView window stored %x; want exactly 010203", b)
	}

	var errs struct {
		ReturnsPromise bool     `json:"returnsPromise"`
		Methods        []string `json:"methods"`
		LoneSurrogate, EmptyKey, LongKey, NotBytes, ExtraArgument, UnknownOption,
		BadTTL, BadCursor, TooLarge, BigMetadata settled
	}
	e.json(t, "GET", "/kv/errors", nil, &errs)
	if !errs.ReturnsPromise || strings.Join(errs.Methods, ",") != "delete,get,getWithMetadata,list,put" {
		t.Errorf("projection shape: promise %v, methods %v", errs.ReturnsPromise, errs.Methods)
	}
	for name, tc := range map[string]struct {
		got  settled
		want string
	}{
		"lone surrogate key": {errs.LoneSurrogate, "invalid_key"}, "empty key": {errs.EmptyKey, "invalid_key"},
		"513-byte key": {errs.LongKey, "invalid_key"}, "a number as value": {errs.NotBytes, "invalid_value"},
		"extra argument": {errs.ExtraArgument, "TypeError"}, "unknown option": {errs.UnknownOption, "TypeError"},
		"ttl 59": {errs.BadTTL, "TypeError"}, "foreign cursor": {errs.BadCursor, "invalid_cursor"},
		"26214401 bytes": {errs.TooLarge, "value_too_large"}, "1100-byte metadata": {errs.BigMetadata, "metadata_too_large"},
	} {
		if tc.got.OK || tc.got.Name != tc.want || !tc.got.IsError || tc.got.IsTypeError != (tc.want == "TypeError") {
			t.Errorf("%s: %+v; want a rejection with an Error named %s", name, tc.got, tc.want)
		}
	}

	var meta settled
	e.json(t, "GET", "/kv/meta?key=m", nil, &meta)
	if !meta.OK || string(meta.Value) != `{"text":"text é","metadata":{"a":"b"},"absent":null}` {
		t.Errorf("getWithMetadata: %+v %s", meta, meta.Value)
	}
	var list settled
	e.json(t, "GET", "/kv/list?key=l-", nil, &list)
	want := `{"first":{"keys":[{"name":"l-a` + "\uFFFD" + `"},{"name":"l-a😀"}],"listComplete":false,"cursor":`
	if !list.OK || !strings.HasPrefix(string(list.Value), want) || !strings.HasSuffix(string(list.Value), `"rest":{"keys":[{"name":"l-b"}],"listComplete":true}}`) {
		t.Errorf("list: %+v %s", list, list.Value)
	}

	var theirs settled
	e.json(t, "GET", "/theirs", nil, &theirs)
	if theirs.OK || theirs.Name != "backend_unavailable" {
		t.Errorf("a binding naming another tenant's namespace: %+v; want backend_unavailable", theirs)
	}
	if status, _, b := e.do(t, "GET", "/spoof", nil); status != 200 || string(b) != "204" {
		t.Fatalf("spoof: %d %s", status, b)
	}
	err = e.st.View(context.Background(), func(tx store.Tx) error {
		if _, err := tx.KVGet("uid-kv-globex", "spoof", time.Now()); err == nil {
			t.Error("a binding header the worker set reached another tenant's namespace")
		}
		if _, err := tx.KVGet("uid-kv", "spoof", time.Now()); err != nil {
			t.Errorf("the injected header did not replace the worker's: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSQLProjectionInWorkerd(t *testing.T) {
	e := startEngine(t)
	run := func(op string, args ...any) settled {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"op": op, "args": args})
		var s settled
		e.json(t, "POST", "/sql", body, &s)
		return s
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "value": s} }
	for _, step := range []struct {
		op   string
		args []any
		want string
	}{
		{"execute", []any{"CREATE TABLE visits (id INTEGER PRIMARY KEY, who TEXT NOT NULL, n INTEGER, b BLOB)"}, `{"rows":[],"rowsWritten":0}`},
		{"execute", []any{"INSERT INTO visits (who, n, b) VALUES (?1, ?2, ?3)", []any{text("é😀"),
			map[string]any{"type": "integer", "value": "9223372036854775807"}, map[string]any{"type": "blob", "base64": "AAECf3/+/w=="}}},
			`{"rows":[],"rowsWritten":1,"lastInsertRowId":"1"}`},
		{"query", []any{"SELECT who, n, b, NULL AS absent, 1.5 AS r FROM visits"},
			`{"rows":[{"who":{"type":"text","value":"é😀"},"n":{"type":"integer","value":"9223372036854775807"},"b":{"type":"blob","base64":"AAECf3/+/w=="},"absent":{"type":"null"},"r":{"type":"real","value":1.5}}],"rowsWritten":0}`},
		{"transaction", []any{[]any{map[string]any{"sql": "UPDATE visits SET n = 1"}, map[string]any{"sql": "SELECT n FROM visits"}}},
			`[{"rows":[],"rowsWritten":1},{"rows":[{"n":{"type":"integer","value":"1"}}],"rowsWritten":0}]`},
	} {
		s := run(step.op, step.args...)
		if !s.OK || string(s.Value) != step.want {
			t.Errorf("%s %v: %+v %s\nwant %s", step.op, step.args[0], s, s.Value, step.want)
		}
	}
	for name, tc := range map[string]struct {
		op   string
		args []any
		want string
	}{
		"a second statement":       {"execute", []any{"SELECT 1; SELECT 2"}, "sql_error"},
		"a write through query":    {"query", []any{"DELETE FROM visits"}, "sql_error"},
		"ATTACH":                   {"execute", []any{"ATTACH 'x.db' AS x"}, "sql_error"},
		"BEGIN":                    {"execute", []any{"BEGIN"}, "sql_error"},
		"an untagged parameter":    {"execute", []any{"SELECT ?1", []any{1}}, "sql_error"},
		"params that are no array": {"execute", []any{"SELECT ?1", "x"}, "TypeError"},
		"an extra argument":        {"query", []any{"SELECT 1", []any{}, "extra"}, "TypeError"},
		"an empty transaction":     {"transaction", []any{[]any{}}, "TypeError"},
		"an unknown member":        {"transaction", []any{[]any{map[string]any{"sql": "SELECT 1", "args": []any{}}}}, "TypeError"},
	} {
		s := run(tc.op, tc.args...)
		if s.OK || s.Name != tc.want || !s.IsError {
			t.Errorf("%s: %+v; want a rejection named %s", name, s, tc.want)
		}
	}
	if s := run("query", "SELECT count(*) AS n FROM visits"); string(s.Value) != `{"rows":[{"n":{"type":"integer","value":"1"}}],"rowsWritten":0}` {
		t.Errorf("after the refusals: %s; want the one row", s.Value)
	}
}
