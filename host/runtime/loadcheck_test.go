package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
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
