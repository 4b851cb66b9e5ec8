package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// loadCase is a bundle the static parser and the engine judge apart: the
// hostCode each refuses it with ("" accepts), fetch declared.
type loadCase struct {
	name, source   string
	engine, static string
}

var loadCases = []loadCase{
	{"default export built at run time", `const h = {}; h["fe" + "tch"] = () => new Response("x"); export default h;`, "", "handler_not_exported"},
	{"fetch that is not callable", `export default { fetch: 1 };`, "handler_not_exported", ""},
	{"engine built-in import", `import * as fs from "node:fs"; export default { fetch() { return new Response("x"); } };`, "module_not_found", ""},
	{"evaluation throws", `throw new Error("not today"); export default { fetch() { return new Response("x"); } };`, "module_syntax_error", ""},
}

// TestVersionLoadCheck applies, imports and (on a host whose mutations
// answer 202) commits WorkerVersions of bundles the static parser judges
// wrongly: with workerd the engine decides (spec/runtime-v1.md §1.3,
// §1.4), without it the static check does, and a refusal is
// invalid_argument with the load code as hostCode, storing nothing.
// Prepare never loads.
func TestVersionLoadCheck(t *testing.T) {
	bin := enginetest.Binary(t)
	for _, hc := range []struct {
		name    string
		workerd string
		async   bool
	}{{"engine", bin, false}, {"engine, 202", bin, true}, {"no engine", hosttest.NoWorkerd, false}} {
		t.Run(hc.name, func(t *testing.T) {
			o := hosttest.Options{Workerd: hc.workerd}
			if hc.async {
				o.SyncBudget, o.ProvisioningDelay = time.Millisecond, 50*time.Millisecond
			}
			h := hosttest.Start(t, o)
			ctx := context.Background()
			e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
			if err != nil {
				t.Fatal(err)
			}
			worker, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range loadCases {
				want := c.static
				if hc.workerd != hosttest.NoWorkerd {
					want = c.engine
				}
				digest, err := e.UploadBundle(ctx, e.A1, []byte(c.source))
				if err != nil {
					t.Fatal(err)
				}
				bundle, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest})
				if err != nil {
					t.Fatal(err)
				}
				spec := map[string]any{"worker": conformance.Rel("ModuleWorker", worker.Metadata.Name),
					"bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"}}
				req, err := e.Request("WorkerVersion", e.Name("version"), spec)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.A1.Prepare(ctx, req, ""); err != nil {
					t.Errorf("%s: prepare: %v, want no load check at prepare", c.name, err)
				}
				_, err = e.Apply(ctx, e.A1, req, nil)
				if err := refusedWith(err, want); err != nil {
					t.Errorf("%s: apply: %v", c.name, err)
				}
				if want != "" {
					ref, _ := e.Ref("WorkerVersion")
					if _, err := e.A1.Read(ctx, client.Address{Space: e.Space, Ref: ref, Name: req.Metadata.Name}); !client.IsNotFound(err) {
						t.Errorf("%s: the refused version was stored (read: %v)", c.name, err)
					}
				}
				imp, err := e.Request("WorkerVersion", e.Name("imported"), spec)
				if err != nil {
					t.Fatal(err)
				}
				_, err = e.A1.ImportAndWait(ctx, wire.ImportRequest{APIVersion: imp.APIVersion, Kind: imp.Kind, Form: imp.Form, Metadata: imp.Metadata,
					Spec: imp.Spec, NativeID: "load-check/" + imp.Metadata.Name}, client.Precondition{})
				if err := refusedWith(err, want); err != nil {
					t.Errorf("%s: import: %v", c.name, err)
				}
			}
		})
	}
}

// refusedWith is nil when err is what a load check with verdict want
// answers: success for "", else invalid_argument with hostCode want.
func refusedWith(err error, want string) error {
	var we *wire.Error
	var of *client.OperationFailedError
	switch {
	case errors.As(err, &of):
		we = of.Err
	case errors.As(err, &we):
	}
	switch {
	case want == "" && err != nil:
		return fmt.Errorf("refused (%w), want it accepted", err)
	case want == "":
		return nil
	case we == nil:
		return fmt.Errorf("answered %v, want invalid_argument with hostCode %s", err, want)
	case we.Code != wire.InvalidArgument || we.HostCode != want:
		return fmt.Errorf("refused %s/%s (%s), want invalid_argument with hostCode %s", we.Code, we.HostCode, we.Message, want)
	}
	return nil
}

// TestLoadCheckOffTheWriter: the engine loads a new version's bundle
// before the mutation's write transaction (host.Preloader), so the store's
// one writer is free while workerd runs; the check inside the transaction
// then finds the verdict cached (repo decision 0052).
func TestLoadCheckOffTheWriter(t *testing.T) {
	bin := enginetest.Binary(t)
	type call struct {
		digest      string
		underWriter bool
	}
	var mu sync.Mutex
	var calls []call
	h := hosttest.Start(t, hosttest.Options{Configure: func(cfg *host.Config) {
		check, st := runtime.LoadCheck(bin, nil), cfg.Store
		cfg.LoadCheck = func(ctx context.Context, b artifact.LoadBundle) ([]string, error) {
			// A write waits while the writer runs the mutation's transaction.
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := st.Update(wctx, func(store.Tx) error { return nil })
			cancel()
			mu.Lock()
			calls = append(calls, call{b.Digest, errors.Is(err, context.DeadlineExceeded)})
			mu.Unlock()
			return check(ctx, b)
		}
	}})
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	digest, err := e.UploadBundle(ctx, e.A1, []byte(loadCases[0].source))
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), map[string]any{"worker": conformance.Rel("ModuleWorker", worker.Metadata.Name),
		"bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"}}); err != nil {
		t.Fatalf("the engine accepts what the static parser refuses: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 || calls[0] != (call{digest, false}) || calls[1] != (call{digest, true}) {
		t.Errorf("load checks %+v, want one of %s with the writer free (before the transaction), then one inside it", calls, digest)
	}
}

// TestLoadCheckKeepsVerdicts: a verdict is kept by manifest digest, so a
// second check of the same bundle does not run the engine (here: gone),
// while another bundle needs it, and its failure is no verdict.
func TestLoadCheckKeepsVerdicts(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "workerd")
	if err := os.Symlink(enginetest.Binary(t), bin); err != nil {
		t.Fatal(err)
	}
	check := runtime.LoadCheck(bin, nil)
	b := artifact.LoadBundle{Digest: "sha256:one", MainModule: "w.js", Modules: []artifact.LoadModule{{Name: "w.js", MediaType: artifact.MediaTypeJavaScriptModule, Data: []byte(`export default { fetch() {} };`)}}}
	bad := artifact.LoadBundle{Digest: "sha256:two", MainModule: "w.js", Modules: []artifact.LoadModule{{Name: "w.js", MediaType: artifact.MediaTypeJavaScriptModule, Data: []byte(`export default {`)}}}
	ctx := context.Background()
	if hs, err := check(ctx, b); err != nil || !slices.Equal(hs, []string{"fetch"}) {
		t.Fatalf("first check: %v, %v", hs, err)
	}
	if _, err := check(ctx, bad); !isLoadCode(err, artifact.LoadModuleSyntaxError) {
		t.Fatalf("first check of the broken bundle: %v", err)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if hs, err := check(ctx, b); err != nil || !slices.Equal(hs, []string{"fetch"}) {
		t.Errorf("second check without the engine: %v, %v; want the kept verdict", hs, err)
	}
	if _, err := check(ctx, bad); !isLoadCode(err, artifact.LoadModuleSyntaxError) {
		t.Errorf("second check of the broken bundle: %v; want the kept refusal", err)
	}
	other := b
	other.Digest = "sha256:three"
	var le *artifact.LoadError
	if _, err := check(ctx, other); err == nil || errors.As(err, &le) {
		t.Errorf("a new bundle without the engine: %v; want an error that is no verdict", err)
	}
}

func isLoadCode(err error, code string) bool {
	var le *artifact.LoadError
	return errors.As(err, &le) && le.Code == code
}
