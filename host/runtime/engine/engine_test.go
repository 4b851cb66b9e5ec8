package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/enginetest"
)

// TestShardServesVersions writes a two-version shard config and runs it on
// real workerd: each version answers on its own socket through its
// generated entry (relative imports, text and data modules, vars as JSON
// values), and the health worker answers the probe.
func TestShardServesVersions(t *testing.T) {
	bin := enginetest.Binary(t)
	dir := t.TempDir()
	main := `import msg from "./lib/msg.txt";
import raw from "/data.bin";
export default {
  async fetch(request, env, ctx) {
    return Response.json({ msg, bytes: new Uint8Array(raw).length, env, keys: Object.keys(env), url: request.url });
  },
};`
	sh := engine.Shard{Dir: dir, Health: filepath.Join(dir, "health.sock")}
	for i, label := range []string{"one", "two"} {
		sh.Versions = append(sh.Versions, engine.Version{
			UID: label, MainModule: "src/index.js",
			Modules: []engine.Module{
				{Name: "src/index.js", MediaType: "application/javascript+module", Data: []byte(main)},
				{Name: "src/lib/msg.txt", MediaType: "text/plain", Data: []byte("hello " + label)},
				{Name: "data.bin", MediaType: "application/octet-stream", Data: []byte{0, 1, 2, 0xff}},
				{Name: "src/index.js.map", MediaType: "application/source-map+json", Data: []byte("{}")},
			},
			Vars:   []engine.Var{{Name: "Z", Value: json.RawMessage(`[1,"x"]`)}, {Name: "A", Value: json.RawMessage(`"` + label + `"`)}},
			Socket: filepath.Join(dir, "v"+string(rune('0'+i))+".sock"),
		})
	}
	cfg, err := engine.WriteConfig(sh)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Start(bin, cfg, false, nil, nil, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(5 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx, sh.Health); err != nil {
		b, _ := os.ReadFile(cfg)
		t.Fatalf("%v\n%s", err, b)
	}
	for _, v := range sh.Versions {
		c := http.Client{Transport: engine.UnixTransport(v.Socket)}
		req, _ := http.NewRequest(http.MethodGet, "http://ep-x.workers.takoform.localhost/p?q", nil)
		req.Header.Set("X-Forwarded-Proto", "https")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got struct {
			Msg   string
			Bytes int
			Env   map[string]any
			Keys  []string
			URL   string
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("version %s answered %d %q", v.UID, resp.StatusCode, body)
		}
		if got.Msg != "hello "+v.UID || got.Bytes != 4 || got.Env["A"] != v.UID || strings.Join(got.Keys, ",") != "A,Z" || got.URL != "https://ep-x.workers.takoform.localhost/p?q" {
			t.Errorf("version %s answered %+v", v.UID, got)
		}
	}
}

// TestConfine puts a running workerd into its cgroup v1 groups with CPU
// and memory limits, and removes them when it exits
// (spec/runtime-v1.md §10.3). Skipped where this process may not create
// cgroups (not root, no cgroup v1).
func TestConfine(t *testing.T) {
	bin := enginetest.Binary(t)
	if err := engine.CgroupsV1(); err != nil {
		t.Skipf("per-shard limits are not enforceable here: %v", err)
	}
	dir := t.TempDir()
	sh := engine.Shard{Dir: dir, Health: filepath.Join(dir, "health.sock")}
	cfg, err := engine.WriteConfig(sh)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Start(bin, cfg, false, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	name := "test-" + strconv.Itoa(p.Pid())
	if err := p.Confine(name, engine.Limits{CPUMillicores: 500, MemoryBytes: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx, sh.Health); err != nil {
		t.Fatal(err)
	}
	group := filepath.Join("takoform-"+strconv.Itoa(os.Getpid()), name)
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"memory", "cpu"} {
		in := false
		for _, line := range strings.Split(string(cg), "\n") {
			f := strings.SplitN(line, ":", 3)
			if len(f) == 3 && slices.Contains(strings.Split(f[1], ","), c) && f[2] == "/"+group {
				in = true
			}
		}
		if !in {
			t.Errorf("the process is in\n%s\nwant the %s group /%s", cg, c, group)
		}
	}
	for file, want := range map[string]string{"memory/" + group + "/memory.limit_in_bytes": "268435456", "cpu/" + group + "/cpu.cfs_quota_us": "50000"} {
		b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", file))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q (%v), want %s", file, b, err, want)
		}
	}
	p.Stop(5 * time.Second)
	for _, c := range []string{"memory", "cpu"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, group)); !os.IsNotExist(err) {
			t.Errorf("the %s group outlived its process: %v", c, err)
		}
	}
}

// TestSweepCgroups removes the groups of a host process that no longer
// exists and keeps those of a live one.
func TestSweepCgroups(t *testing.T) {
	if err := engine.CgroupsV1(); err != nil {
		t.Skipf("cgroups are not writable here: %v", err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join("/sys/fs/cgroup/memory", "takoform-"+strconv.Itoa(cmd.Process.Pid))
	alive := filepath.Join("/sys/fs/cgroup/memory", "takoform-1")
	for _, d := range []string{filepath.Join(dead, "s1-g1"), filepath.Join(alive, "s9-g9")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = os.Remove(filepath.Join(alive, "s9-g9"))
		_ = os.Remove(alive)
	})
	if _, err := engine.SweepCgroups(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead host's group %s survived the sweep: %v", dead, err)
	}
	if _, err := os.Stat(filepath.Join(alive, "s9-g9")); err != nil {
		t.Errorf("the live process's group was swept: %v", err)
	}
}

// TestShardRefusesBuiltins: a running version reaches no engine built-in
// (spec/runtime-v1.md §1.1, §10.7). Its fetch imports, dynamically, every
// name of engine.BuiltinModules and every node:, cloudflare: and workerd:
// specifier found in the binary's bytes: each must reject (a stub, or no
// such module), so a binary bump that adds a built-in fails here until
// BuiltinModules lists it. The version's own modules still load.
func TestShardRefusesBuiltins(t *testing.T) {
	bin := enginetest.Binary(t)
	raw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Clone(engine.BuiltinModules)
	for _, prefix := range []string{"node:", "cloudflare:", "workerd:"} {
		rest := raw
		for {
			i := bytes.Index(rest, []byte(prefix))
			if i < 0 {
				break
			}
			j := i + len(prefix)
			for j < len(rest) && strings.IndexByte("abcdefghijklmnopqrstuvwxyz0123456789_/.-", rest[j]) >= 0 {
				j++
			}
			if j > i+len(prefix) {
				names = append(names, string(rest[i:j]))
			}
			rest = rest[j:]
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	dir := t.TempDir()
	main := `import own from "./util.txt";
export default {
  async fetch(request) {
    const out = { own };
    for (const name of await request.json()) {
      try { const m = await import(name); out[name] = m.default === globalThis.process ? "the process global" : "reached"; } catch (e) { out[name] = "refused: " + e.message; }
    }
    return Response.json(out);
  },
};`
	sh := engine.Shard{Dir: dir, Health: filepath.Join(dir, "health.sock"), Versions: []engine.Version{{
		UID: "one", MainModule: "index.js", Socket: filepath.Join(dir, "v.sock"),
		Modules: []engine.Module{
			{Name: "index.js", MediaType: "application/javascript+module", Data: []byte(main)},
			{Name: "util.txt", MediaType: "text/plain", Data: []byte("the bundle's own util")},
		},
	}}}
	cfg, err := engine.WriteConfig(sh)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Start(bin, cfg, false, nil, nil, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(5 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx, sh.Health); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(names)
	if err != nil {
		t.Fatal(err)
	}
	c := http.Client{Transport: engine.UnixTransport(sh.Versions[0].Socket)}
	resp, err := c.Post("http://x/", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got["own"] != "the bundle's own util" {
		t.Errorf("the bundle's module util.txt answered %q", got["own"])
	}
	for _, name := range names {
		if slices.Contains(engine.UnrefusableBuiltins, name) {
			if got[name] != "the process global" {
				t.Errorf("import(%q): %q, want the process global (engine.UnrefusableBuiltins)", name, got[name])
			}
			continue
		}
		if !strings.HasPrefix(got[name], "refused: ") {
			t.Errorf("import(%q): %q, want it refused", name, got[name])
		}
	}
	for _, name := range engine.BuiltinModules {
		if !strings.Contains(got[name], "engine built-in") {
			t.Errorf("import(%q): %q, want the host's refusal", name, got[name])
		}
	}
	t.Logf("%d specifiers refused, %d of them built-ins the host stubs", len(names), len(engine.BuiltinModules))
}
