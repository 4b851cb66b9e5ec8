package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/servetest"
	"github.com/takoform/takoform/wire"
)

// secretWorker answers what it sees of env.API_TOKEN: its type and the
// SHA-256 of its UTF-8 bytes (never the value), and env's names.
var secretWorker = []byte(`export default {
  async fetch(request, env) {
    const v = env.API_TOKEN;
    let sha256 = null;
    if (typeof v === "string") {
      const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(v)));
      sha256 = Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
    }
    return Response.json({ type: typeof v, sha256, keys: Object.keys(env) });
  },
};
`)

type secretAnswer struct {
	Type   string   `json:"type"`
	SHA256 string   `json:"sha256"`
	Keys   []string `json:"keys"`
}

// secretCLI runs the takoform command line with stdin and returns its
// exit code, stdout and stderr.
func secretCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.RunIO(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestSecretEndToEnd drives `takoform secret` against a real `host serve`
// (SQLite file, default secrets key file beside it) running a worker on
// real workerd that requires API_TOKEN (spec/runtime-v1.md §3.2): before
// a value the worker answers the host's 503 and the log names the
// missing variable; set from stdin, the worker sees exactly the value (its
// SHA-256 compared) as a string in env; list shows the name, never the
// value; a new value from --from-file reaches the worker; unset brings
// the 503 back; refusals name what is wrong. Finally the value's bytes
// are nowhere: not in the store file or its WAL, the key-less runtime
// directory, the host's log, any CLI output, nor the Host API's answers
// for the worker and its version.
func TestSecretEndToEnd(t *testing.T) {
	bin := enginetest.Binary(t)
	runtimeDir := t.TempDir()
	h := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--workerd", bin, "--ingress", "127.0.0.1:0", "--runtime-dir", runtimeDir)
	var ingressURL string
	for deadline := time.Now().Add(20 * time.Second); ingressURL == ""; time.Sleep(20 * time.Millisecond) {
		if m := regexp.MustCompile(`worker ingress on (http://\S+)`).FindStringSubmatch(h.Output()); m != nil {
			ingressURL = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the host never printed its ingress; stdout:\n%s", h.Output())
		}
	}
	if fi, err := os.Stat(h.Data + ".secrets-key"); err != nil || fi.Size() != 32 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the default secrets key file: %v %v, want 32 bytes, mode 0600", fi, err)
	}
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: "tok", A2: "tok", B: "tok"}, false)
	if err != nil {
		t.Fatal(err)
	}
	create := func(kind, prefix string, spec any) *wire.Resource {
		t.Helper()
		r, err := e.Create(ctx, e.A1, kind, e.Name(prefix), spec)
		if err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		return r
	}
	worker := create("ModuleWorker", "worker", map[string]any{})
	digest, err := e.UploadBundle(ctx, e.A1, secretWorker)
	if err != nil {
		t.Fatal(err)
	}
	bundle := create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	version := create("WorkerVersion", "version", map[string]any{
		"worker": conformance.Rel("ModuleWorker", worker.Metadata.Name), "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name),
		"handlers": []any{"fetch"}, "vars": map[string]any{"GREETING": "hi"}, "requiredSensitiveVars": []any{"API_TOKEN"},
	})
	create("WorkerDeployment", "deploy", map[string]any{
		"worker": conformance.Rel("ModuleWorker", worker.Metadata.Name), "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", version.Metadata.Name)}},
	})
	endpoint := create("WorkerEndpoint", "endpoint", map[string]any{"worker": conformance.Rel("ModuleWorker", worker.Metadata.Name)})
	var outputs struct{ Hostname string }
	if err := json.Unmarshal(endpoint.Status.Outputs, &outputs); err != nil {
		t.Fatal(err)
	}
	get := func() (int, string) {
		req, err := http.NewRequest(http.MethodGet, ingressURL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = outputs.Hostname
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor := func(what string, ok func(int, string) bool) string {
		t.Helper()
		var status int
		var body string
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if status, body = get(); ok(status, body) {
				return body
			}
		}
		t.Fatalf("the worker never answered %s; last %d %q", what, status, body)
		return ""
	}
	answers := func(want string) func(int, string) bool {
		return func(status int, body string) bool {
			var a secretAnswer
			return status == http.StatusOK && json.Unmarshal([]byte(body), &a) == nil && a.SHA256 == sha(want)
		}
	}
	unavailable := func(status int, _ string) bool { return status == http.StatusServiceUnavailable }
	args := func(verb string, more ...string) []string {
		return append([]string{"secret", verb, "--endpoint", h.URL, "--token", "tok", "--space", e.Space, "--worker", worker.Metadata.Name}, more...)
	}

	var outputsSeen strings.Builder
	run := func(stdin string, a ...string) (int, string, string) {
		t.Helper()
		code, out, errOut := secretCLI(t, stdin, a...)
		outputsSeen.WriteString(out + errOut)
		return code, out, errOut
	}

	// No value yet: the host's 503, and the log names the variable.
	waitFor("the host's 503 without a value", unavailable)
	h.WaitLog(t, "sensitive variable API_TOKEN has no value")

	value := "tk-" + rand.Text() + "-distinctive"
	code, out, errOut := run(value+"\n", args("set", "API_TOKEN")...)
	if code != 0 || !strings.Contains(out, "API_TOKEN set") {
		t.Fatalf("secret set: exit %d\n%s%s", code, out, errOut)
	}
	body := waitFor("the secret's value", answers(value))
	var a secretAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || a.Type != "string" || strings.Join(a.Keys, ",") != "API_TOKEN,GREETING" {
		t.Errorf("the worker saw %q, want API_TOKEN a string and env exactly API_TOKEN,GREETING", body)
	}

	code, out, errOut = run("", args("list")...)
	if code != 0 || !regexp.MustCompile(`(?m)^API_TOKEN\s+yes\s+\d{4}-\d\d-\d\dT\S+Z\s+`+regexp.QuoteMeta(version.Metadata.Name)+`$`).MatchString(out) {
		t.Errorf("secret list: exit %d\n%s%s", code, out, errOut)
	}

	// A second value, from a file byte for byte (a trailing newline kept).
	second := "second-" + rand.Text() + "\n"
	file := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(file, []byte(second), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run("", args("set", "API_TOKEN", "--from-file", file)...); code != 0 {
		t.Fatalf("secret set --from-file: exit %d\n%s%s", code, out, errOut)
	}
	waitFor("the second value", answers(second))

	// Refusals, each naming what is wrong; none changes anything.
	for _, c := range []struct {
		stdin string
		args  []string
		code  int
		want  string
	}{
		{value, args("set", "API_TOKEN", value), 2, "ps and shell history"},
		{value, args("set", "api_token"), 2, "not a sensitive variable name"},
		{"", args("set", "API_TOKEN"), 2, "empty"},
		{"\n", args("set", "API_TOKEN"), 2, "empty"},
		{strings.Repeat("x", wire.MaxSecretBytes+1), args("set", "API_TOKEN"), 2, "over 5120 bytes"},
		{value, []string{"secret", "set", "--endpoint", h.URL, "--token", "tok", "--space", e.Space, "--worker", "nobody", "API_TOKEN"}, 1, `no ModuleWorker "nobody"`},
		{value, []string{"secret", "set", "--endpoint", h.URL, "--token", "wrong", "--space", e.Space, "--worker", worker.Metadata.Name, "API_TOKEN"}, 1, "unauthenticated"},
	} {
		code, out, errOut := run(c.stdin, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d naming %q", c.args[1:], code, errOut, c.code, c.want)
		}
		_ = out
	}
	waitFor("the second value after the refusals", answers(second))
	// The host checks values itself (a client other than ours).
	hc, err := client.New(ctx, h.URL, client.Options{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	w := client.Worker{Space: e.Space, Group: worker.APIVersion, Name: worker.Metadata.Name}
	for _, bad := range []string{"", strings.Repeat("x", wire.MaxSecretBytes+1), "a\x00b"} {
		if _, err := hc.SetSecret(ctx, w, "API_TOKEN", []byte(bad)); !isCode(err, wire.InvalidArgument) {
			t.Errorf("the host took a %d-byte value it must refuse: %v", len(bad), err)
		}
	}
	if _, err := hc.SetSecret(ctx, w, "API_TOKEN", []byte("\xff")); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("the client sent a value that is not UTF-8 (JSON would have replaced its bytes): %v", err)
	}

	code, out, errOut = run("", args("unset", "API_TOKEN")...)
	if code != 0 || !strings.Contains(out, "API_TOKEN has no value") || !strings.Contains(errOut, version.Metadata.Name) {
		t.Fatalf("secret unset: exit %d\n%s%s", code, out, errOut)
	}
	waitFor("the host's 503 after unset", unavailable)
	code, out, _ = run("", args("list")...)
	if code != 0 || !regexp.MustCompile(`(?m)^API_TOKEN\s+no\s+-\s+`).MatchString(out) {
		t.Errorf("secret list after unset: exit %d\n%s", code, out)
	}

	// The value's bytes are nowhere a secret must not be.
	var reps strings.Builder
	for _, r := range []*wire.Resource{worker, version} {
		ref, _ := e.Ref(r.Kind)
		got, err := e.A1.Read(ctx, client.Address{Space: e.Space, Ref: ref, Name: r.Metadata.Name})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		reps.Write(b)
	}
	places := map[string]string{"the host's log": h.Log(), "the CLI's output": outputsSeen.String(), "the Host API's answers": reps.String()}
	for _, f := range []string{h.Data, h.Data + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		places[f] = string(b)
	}
	if err := filepath.Walk(runtimeDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			places[p] = string(b)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for where, text := range places {
		for _, v := range []string{value, strings.TrimSuffix(second, "\n")} {
			if strings.Contains(text, v) {
				t.Errorf("a secret value's bytes are in %s", where)
			}
		}
	}
	// The search finds what the files do hold: the worker's name and UID.
	if !strings.Contains(places[h.Data]+places[h.Data+"-wal"], worker.Metadata.UID) || !strings.Contains(places["the CLI's output"], "API_TOKEN") {
		t.Errorf("the search does not find the worker's UID in the store or API_TOKEN in the CLI's output: it proves nothing")
	}
}

func isCode(err error, c wire.Code) bool {
	var we *wire.Error
	for e := err; e != nil; {
		if x, ok := e.(*wire.Error); ok {
			we = x
			break
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return we != nil && we.Code == c
}
