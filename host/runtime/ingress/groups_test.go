package ingress_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
)

// groupSource answers {answer: label} and, through its KV binding CACHE,
// stores (PUT /kv?key=) and reads (GET /kv?key=) bytes; with SQL, POST
// /sql counts a visit in the migrated table visits and POST /schema
// tries a schema change, answering the error's name.
func groupSource(label string, sql bool) []byte {
	routes := ""
	if sql {
		routes = `
    if (url.pathname === "/sql") {
      await env.DB.execute("INSERT INTO visits (n) VALUES (?1)", [1]);
      const r = await env.DB.query("SELECT count(*) AS c, typeof(count(*)) AS t FROM visits");
      return Response.json(r);
    }
    if (url.pathname === "/schema") {
      try { await env.DB.execute("CREATE TABLE t (x)"); return new Response("created"); } catch (e) { return new Response(e.name); }
    }`
	}
	return fmt.Appendf(nil, `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/kv") {
      const key = url.searchParams.get("key");
      if (request.method === "PUT") {
        await env.CACHE.put(key, await request.arrayBuffer());
        return new Response("stored");
      }
      const v = await env.CACHE.get(key);
      return v === null ? new Response("absent", { status: 404 }) : new Response(v);
    }%s
    console.log("answered by", %q);
    return Response.json({ answer: %q });
  },
};
`, routes, label, label)
}

// TestBothEdgeGroupsRunSideBySide: a v1beta1 ModuleWorker with bundle,
// version, deployment and endpoint answers at its URL with its own code
// beside the v1alpha1 worker of the SAME name in the same space, each
// binding a KV namespace of its own group (the families never relate:
// a key stored through one is absent through the other), the v1beta1 one
// also a v1beta1 SQLiteDatabase whose schema came from a migration and
// which refuses a schema change at runtime; tail follows each worker by
// its group.
//
// The v1alpha1 app is created through the Host API on lane v1alpha3.
// This host does not serve lane v1beta1 over HTTP yet, and one catalog
// cannot install both families (their Interfaces share name@version), so
// the v1beta1 app is written into the same store directly: a copy of the
// v1alpha1 resources under the v1beta1 group and FormRefs (the forms of
// forms/edge.FamilyV1beta1), with new UIDs, its relations pinned within
// the group, and a bundle uploaded through the Host API. The data plane
// reads only the store, so it sees them as the lane would write them.
func TestBothEdgeGroupsRunSideBySide(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := e.Create(ctx, e.A1, "EdgeKVNamespace", e.Name("kv"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	worker, alphaHost, _ := deployApp(t, e, e.A1, groupSource("alpha", false), map[string]any{
		"kvBindings": []any{map[string]any{"name": "CACHE", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}},
	}, true)
	betaDigest, err := e.UploadBundle(ctx, e.A1, groupSource("beta", true))
	if err != nil {
		t.Fatal(err)
	}
	uids := copyIntoV1beta1(t, h, betaDigest)
	ledger, err := h.Gateway.ApplyMigrations(ctx, uids["SQLiteDatabase"], []gateway.MigrationFile{
		{Path: "0001_visits.sql", Digest: "sha256:01", SQL: "CREATE TABLE visits (n INTEGER NOT NULL);"},
	})
	if err != nil || len(ledger) != 1 {
		t.Fatalf("migrate: %v %v", ledger, err)
	}
	h.Runtime.Notify(store.Key{Tenant: "tenant-a", APIVersion: edge.GroupV1beta1, Kind: "WorkerEndpoint"})
	betaHost := edgehost.New().EndpointHostname(&store.Resource{Key: store.Key{Tenant: "tenant-a"}, UID: uids["WorkerEndpoint"]})

	waitFor(t, front, alphaHost, "alpha")
	waitFor(t, front, betaHost, "beta")
	if a, _ := h.Runtime.WorkerOf(betaHost); a.Group != edge.GroupV1beta1 || a.Name != worker {
		t.Errorf("the v1beta1 endpoint routes to %+v; want %s of %s", a, worker, edge.GroupV1beta1)
	}
	if a, _ := h.Runtime.WorkerOf(alphaHost); a.Group != edge.GroupV1alpha1 || a.Name != worker {
		t.Errorf("the v1alpha1 endpoint routes to %+v; want %s of %s", a, worker, edge.GroupV1alpha1)
	}

	if status, body := do(t, front, http.MethodPut, betaHost, "/kv?key=k", []byte("from beta")); status != 200 || body != "stored" {
		t.Fatalf("put through the v1beta1 worker: %d %s", status, body)
	}
	if status, body := do(t, front, http.MethodGet, betaHost, "/kv?key=k", nil); status != 200 || body != "from beta" {
		t.Errorf("get through the v1beta1 worker: %d %s", status, body)
	}
	if status, body := do(t, front, http.MethodGet, alphaHost, "/kv?key=k", nil); status != 404 {
		t.Errorf("get through the v1alpha1 worker of a key stored in the v1beta1 namespace: %d %s; want absent", status, body)
	}
	// the v1beta1 key limit (467 bytes) holds for the v1beta1 binding only
	long := strings.Repeat("k", gateway.MaxKVKeyBytesV1beta1+1)
	if status, _ := do(t, front, http.MethodPut, betaHost, "/kv?key="+long, []byte("x")); status != 500 {
		t.Errorf("a 468-byte key through the v1beta1 worker: %d; want the uncaught invalid_key (500)", status)
	}
	if status, _ := do(t, front, http.MethodPut, alphaHost, "/kv?key="+long, []byte("x")); status != 200 {
		t.Errorf("a 468-byte key through the v1alpha1 worker: %d; want stored", status)
	}

	for i := 1; i <= 2; i++ {
		status, body := do(t, front, http.MethodPost, betaHost, "/sql", nil)
		if want := fmt.Sprintf(`{"rows":[{"c":%d,"t":"integer"}],"rowsWritten":0}`, i); status != 200 || body != want {
			t.Errorf("v1beta1 SQL visit %d: %d %s; want %s", i, status, body, want)
		}
	}
	if status, body := do(t, front, http.MethodPost, betaHost, "/schema", nil); status != 200 || body != "sql_error" {
		t.Errorf("a schema change at runtime: %d %s; want sql_error", status, body)
	}

	tailCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	records := make(chan runtime.TailRecord, 16)
	for _, group := range []string{edge.GroupV1beta1, edge.GroupV1alpha1} {
		stream, err := h.Runtime.Tail(tailCtx, "tenant-a", e.Space, worker, group)
		if err != nil {
			t.Fatalf("tail of %s: %v", group, err)
		}
		go func() { _ = stream(func(r runtime.TailRecord) error { records <- r; return nil }) }()
	}
	waitFor(t, front, betaHost, "beta")
	select {
	case r := <-records:
		if r.Worker.Group != edge.GroupV1beta1 || !strings.Contains(r.Message, "beta") {
			t.Errorf("the record of a v1beta1 request: %+v", r)
		}
	case <-tailCtx.Done():
		t.Fatal("no tail record of the v1beta1 worker")
	}
}

// copyIntoV1beta1 copies every v1alpha1 resource of the (fresh) host into
// the v1beta1 group under the same names, with new UIDs, the v1beta1
// family's FormRefs and relations, pinned within the group; the bundle's
// manifest becomes betaDigest, and the version also binds a new v1beta1
// SQLiteDatabase as DB. It returns the new UIDs by kind.
func copyIntoV1beta1(t *testing.T, h *hosttest.Host, betaDigest string) map[string]string {
	t.Helper()
	fam, findings := form.LoadFamily(edge.FamilyV1beta1())
	if len(findings) > 0 {
		t.Fatalf("the v1beta1 family: %v", findings)
	}
	refs := map[string]form.FormRef{}
	for _, f := range fam.Forms {
		refs[f.Definition.Ref().Kind] = f.Definition.Ref()
	}
	alpha, beta := []byte(edge.GroupV1alpha1), []byte(edge.GroupV1beta1)
	newUIDs := map[string]string{} // old UID → new
	byKind := map[string]string{}
	err := h.Store.Update(context.Background(), func(tx store.Tx) error {
		var olds []*store.Resource
		for _, kind := range []string{"EdgeKVNamespace", "ModuleWorker", "WorkerBundle", "WorkerVersion", "WorkerDeployment", "WorkerEndpoint"} {
			rs, err := tx.ResourcesOfKind(edge.GroupV1alpha1, kind)
			if err != nil {
				return err
			}
			if len(rs) != 1 {
				return fmt.Errorf("%d %s resources; want 1", len(rs), kind)
			}
			olds = append(olds, rs[0])
			newUIDs[rs[0].UID] = rs[0].UID + "-v1beta1"
			byKind[kind] = newUIDs[rs[0].UID]
		}
		db := *olds[0]
		db.Kind, db.Name, db.UID, db.Spec = "SQLiteDatabase", "notes", "sqlite-notes-v1beta1", []byte(`{}`)
		db.APIVersion, db.FormRef = edge.GroupV1beta1, refs["SQLiteDatabase"]
		if err := tx.CreateResource(&db); err != nil {
			return err
		}
		byKind["SQLiteDatabase"] = db.UID
		for _, old := range olds {
			r := *old
			r.APIVersion, r.FormRef, r.UID = edge.GroupV1beta1, refs[old.Kind], newUIDs[old.UID]
			r.Spec = bytes.ReplaceAll(old.Spec, alpha, beta)
			var spec map[string]any
			if err := json.Unmarshal(r.Spec, &spec); err != nil {
				return err
			}
			switch old.Kind {
			case "WorkerBundle":
				spec["manifestDigest"] = betaDigest
			case "WorkerVersion":
				spec["sqliteBindings"] = []any{map[string]any{"name": "DB", "resource": map[string]any{"apiVersion": edge.GroupV1beta1, "kind": "SQLiteDatabase", "name": db.Name}}}
			}
			var err error
			if r.Spec, err = json.Marshal(spec); err != nil {
				return err
			}
			if err := tx.CreateResource(&r); err != nil {
				return fmt.Errorf("create the v1beta1 %s: %w", r.Kind, err)
			}
			pins, err := tx.Pins(old.UID)
			if err != nil {
				return err
			}
			for i := range pins {
				p := &pins[i]
				p.SourceUID, p.TargetUID, p.TargetAPIVersion = r.UID, newUIDs[p.TargetUID], edge.GroupV1beta1
				p.TargetFormRef = refs[p.TargetKind]
			}
			if old.Kind == "WorkerVersion" {
				pins = append(pins, store.Pin{SourceUID: r.UID, Pointer: "/sqliteBindings/0/resource", RelationPointer: "/sqliteBindings/*/resource",
					TargetAPIVersion: edge.GroupV1beta1, TargetKind: "SQLiteDatabase", TargetName: db.Name, TargetUID: db.UID, TargetFormRef: refs["SQLiteDatabase"]})
			}
			if err := tx.ReplacePins(r.UID, pins); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byKind
}
