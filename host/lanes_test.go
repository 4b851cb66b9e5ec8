package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// laneClient negotiates lane l with h as tenant A, principal 1.
func laneClient(t *testing.T, h *hosttest.Host, l wire.Lane) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1, Lane: l})
	if err != nil {
		t.Fatalf("lane %s: %v", l.Name, err)
	}
	return c
}

// mustCode is wantCode that stops t on a mismatch.
func mustCode(t *testing.T, what string, err error, code wire.Code) {
	t.Helper()
	if wantCode(t, what, err, code) == nil {
		t.FailNow()
	}
}

// TestLaneTable: the lanes are the two of spec/lane-v1beta1.md §0, each
// binding the Edge group the host binds it to.
func TestLaneTable(t *testing.T) {
	if wire.V1alpha3.EdgeGroup != edge.Group || wire.V1beta1.EdgeGroup != edgehost.GroupV1beta1 || wire.DefaultLane != wire.V1alpha3 {
		t.Fatalf("lane table: %+v %+v", wire.V1alpha3, wire.V1beta1)
	}
	for _, l := range wire.Lanes {
		if got, ok := wire.LaneNamed(l.Version()); !ok || got != l {
			t.Errorf("LaneNamed(%q) = %v, %v", l.Version(), got, ok)
		}
		if !strings.HasSuffix(l.DiscoveryPath, "/"+l.Version()) || l.APIBase != "/apis/"+l.Name {
			t.Errorf("lane %+v", l)
		}
	}
	if _, ok := wire.LaneNamed("v1alpha2"); ok {
		t.Error("a lane we do not serve was found")
	}
}

// TestDiscoveryPerLane: each lane's discovery document names that lane
// only, under one origin, and a client negotiates either
// (spec/lane-v1beta1.md §2.1); a client refuses a lane it does not know.
func TestDiscoveryPerLane(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	for _, l := range wire.Lanes {
		d := laneClient(t, h, l).Discovery()
		if len(d.APIVersions) != 1 || d.APIVersions[0] != l.Name || d.Endpoints.API != h.URL+l.APIBase || d.Endpoints.Support != h.URL+l.APIBase+"/support" {
			t.Errorf("lane %s: discovery %+v", l.Name, d)
		}
		// The other lane's client refuses this document.
		other := wire.V1beta1
		if l == wire.V1beta1 {
			other = wire.V1alpha3
		}
		doc, _ := json.Marshal(d)
		if _, err := client.ValidateLaneDiscovery(h.URL, other, doc); err == nil {
			t.Errorf("lane %s's document passes as lane %s's", l.Name, other.Name)
		}
	}
	_, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1, Lane: wire.Lane{Name: "forms.takoform.com/v1alpha2"}})
	if err == nil || !strings.Contains(err.Error(), "v1alpha3, v1beta1") {
		t.Fatalf("an unknown lane: %v", err)
	}
}

// TestResourceRoutesAnswerTheLaneSet: the built-in family installs both
// editions, edge.forms.takoform.com/v1alpha1 on lane v1alpha3 and
// edge.forms.takoform.com/v1beta1 on lane v1beta1; each lane answers its
// own edition and refuses the other's FormRef form_unknown naming where it
// is installed, on every route that names a FormRef (spec/lane-v1beta1.md
// §2.5 rules 1, 3); each lane's support routes list exactly its edition,
// and edge.kv@1.0.0 answers each lane with its own edition's digest.
func TestResourceRoutesAnswerTheLaneSet(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	ctx := context.Background()
	clients := map[wire.Lane]*client.Client{}
	for _, l := range wire.Lanes {
		clients[l] = laneClient(t, h, l)
	}
	kvDigest := map[wire.Lane]string{}
	for _, l := range wire.Lanes {
		other := wire.V1beta1
		if l == wire.V1beta1 {
			other = wire.V1alpha3
		}
		ref, ok := builtinRef(t, l.EdgeGroup, "EdgeKVNamespace")
		if !ok {
			t.Fatalf("the built-in family has no EdgeKVNamespace of group %s", l.EdgeGroup)
		}
		if _, err := clients[l].Forms(ctx, "lanes", ref); err != nil {
			t.Fatalf("lane %s: %v", l.Name, err)
		}
		_, err := clients[other].Forms(ctx, "lanes", ref)
		mustCode(t, "forms on lane "+other.Name, err, wire.FormUnknown)
		if !strings.Contains(err.Error(), "installed on "+l.APIBase) {
			t.Errorf("the refusal does not say where the form is answered: %v", err)
		}
		_, err = clients[other].Read(ctx, client.Address{Space: "lanes", Ref: ref, Name: "cache"})
		mustCode(t, "read on lane "+other.Name, err, wire.FormUnknown)
		req := wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: ref.Kind, Form: wire.FormReference{FormRef: ref}, Metadata: wire.Metadata{Name: "cache", Space: "lanes"}, Spec: json.RawMessage(`{}`)}
		_, err = clients[other].Prepare(ctx, req, "")
		mustCode(t, "prepare on lane "+other.Name, err, wire.FormUnknown)
		profiles, err := clients[l].SupportForms(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[wire.Lane]int{wire.V1alpha3: 12, wire.V1beta1: 15}[l]
		if len(profiles.Profiles) != want {
			t.Errorf("lane %s lists %d support profiles, want the %d Forms of %s", l.Name, len(profiles.Profiles), want, l.EdgeGroup)
		}
		for _, p := range profiles.Profiles {
			if p.FormRef == nil || p.FormRef.APIVersion != l.EdgeGroup {
				t.Errorf("lane %s lists a profile of another group: %+v", l.Name, p.FormRef)
			}
		}
		kv, err := clients[l].SupportInterface(ctx, "edge.kv", "1.0.0")
		if err != nil || kv.InterfaceRef == nil {
			t.Fatalf("lane %s: edge.kv@1.0.0: %+v, %v", l.Name, kv, err)
		}
		kvDigest[l] = kv.InterfaceRef.SchemaDigest
	}
	if kvDigest[wire.V1alpha3] == kvDigest[wire.V1beta1] {
		t.Errorf("both lanes answer edge.kv@1.0.0 with %s; each edition has its own (spec/lane-v1beta1.md §7.3)", kvDigest[wire.V1alpha3])
	}
}

func builtinRef(t *testing.T, group, kind string) (form.FormRef, bool) {
	t.Helper()
	cat, _, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range cat.Forms() {
		if r := in.Definition.Ref(); r.Kind == kind && r.APIVersion == group {
			return r, true
		}
	}
	return form.FormRef{}, false
}

// TestFourReferenceFamiliesOneHost: the command line of
// spec/lane-v1beta1.md §2.5 starts (it was refused with 36 problems when
// one catalog held everything) and each lane answers its own contracts:
// edge.kv@1.0.0 is 58c8e9af… on lane v1alpha3 and 231cfe2a… on lane
// v1beta1 (§8.1); ModuleWorker 0.2.0 of each Edge group only on its lane,
// the probe's second group on both (§14).
func TestFourReferenceFamiliesOneHost(t *testing.T) {
	dirs := []string{testref.Dir(t), testref.ConformanceDir(t), testref.V1beta1Dir(t), testref.V1beta1ConformanceDir(t)}
	cat, lanes, err := host.LoadFamilies(host.FamilySources(dirs, dirFS))
	if err != nil {
		t.Fatal(err)
	}
	h := hosttest.Start(t, hosttest.Options{Catalog: cat, Lanes: lanes, Probe: true})
	ctx := context.Background()
	kv := map[wire.Lane]string{wire.V1alpha3: "sha256:58c8e9af", wire.V1beta1: "sha256:231cfe2a"}
	forms := map[wire.Lane]int{wire.V1alpha3: 12 + 1 + 1, wire.V1beta1: 15 + 1 + 1}
	for _, l := range wire.Lanes {
		c := laneClient(t, h, l)
		p, err := c.SupportInterface(ctx, "edge.kv", "1.0.0")
		if err != nil || !strings.HasPrefix(p.InterfaceRef.SchemaDigest, kv[l]) {
			t.Errorf("lane %s: edge.kv@1.0.0 is %+v, %v; want %s…", l.Name, p, err, kv[l])
		}
		profiles, err := c.SupportForms(ctx)
		if err != nil || len(profiles.Profiles) != forms[l] {
			t.Fatalf("lane %s: %d support profiles, %v; want %d", l.Name, len(profiles.Profiles), err, forms[l])
		}
		seen := map[string]bool{}
		for _, p := range profiles.Profiles {
			r := p.FormRef
			if r.APIVersion != l.EdgeGroup && r.APIVersion != host.ProbeSecondGroupRef.APIVersion {
				t.Errorf("lane %s answers %s", l.Name, r)
			}
			seen[r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion] = true
		}
		if !seen[l.EdgeGroup+" ModuleWorker 0.2.0"] || !seen[host.ProbeSecondGroupRef.APIVersion+" EdgeKVNamespace 0.1.0"] {
			t.Errorf("lane %s lacks ModuleWorker 0.2.0 or the probe's second group: %v", l.Name, seen)
		}
		if _, err := c.Forms(ctx, "lanes", host.ProbeSecondGroupRef); err != nil {
			t.Errorf("lane %s: the probe's second group: %v", l.Name, err)
		}
	}
}

// kvDoc of group group.
func kvDocOf(group string) []byte {
	return []byte(strings.Replace(kvDoc, "forms.example.com/v1alpha1", group, 1))
}

// TestFamilyMixingEdgeGroupsRefused: a directory holding Forms of both
// Edge groups is refused at start naming one file of each
// (spec/lane-v1beta1.md §2.5 rule 1); two directories, one per group,
// install each on its lane, and SplitLanes places a catalog of both
// groups the same way.
func TestFamilyMixingEdgeGroupsRefused(t *testing.T) {
	mixed := fstest.MapFS{"a/definition.json": {Data: kvDocOf(wire.V1alpha3.EdgeGroup)}, "b/definition.json": {Data: kvDocOf(wire.V1beta1.EdgeGroup)}}
	_, _, err := host.LoadFamilies([]host.FamilySource{{Name: "mixed", FS: mixed}})
	if err == nil || !strings.Contains(err.Error(), "mixed/b/definition.json: is a Form of group edge.forms.takoform.com/v1beta1, but mixed/a/definition.json in the same family is of group edge.forms.takoform.com/v1alpha1") {
		t.Fatalf("a family of both Edge groups: %v", err)
	}
	// Two families, one per Edge group: each on its lane.
	cat, lanes, err := host.LoadFamilies([]host.FamilySource{
		{Name: "alpha", FS: fstest.MapFS{"a/definition.json": {Data: kvDocOf(wire.V1alpha3.EdgeGroup)}}},
		{Name: "beta", FS: fstest.MapFS{"b/definition.json": {Data: kvDocOf(wire.V1beta1.EdgeGroup)}}},
		{Name: "other", FS: fstest.MapFS{"c/definition.json": {Data: []byte(kvDoc)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() != 3 || lanes[wire.V1alpha3.Name].Len() != 2 || lanes[wire.V1beta1.Name].Len() != 2 {
		t.Fatalf("host-wide %d forms, lanes %d and %d; want 3, 2 and 2", cat.Len(), lanes[wire.V1alpha3.Name].Len(), lanes[wire.V1beta1.Name].Len())
	}
	// A Config without Lanes whose catalog holds both Edge groups is split
	// the same way: each Edge Form on its lane, the third group on both.
	split, err := host.SplitLanes(cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range wire.Lanes {
		if split[l.Name].Len() != 2 || len(split[l.Name].Versions(l.EdgeGroup, "EdgeKVNamespace")) != 1 || len(split[l.Name].Versions("forms.example.com/v1alpha1", "EdgeKVNamespace")) != 1 {
			t.Errorf("SplitLanes placed %d forms on lane %s, want its Edge group's and the third group's", split[l.Name].Len(), l.Name)
		}
	}
}

// TestContractsUniquePerLane: one name@version per lane, not per host,
// and a digest reference must resolve within each lane the Form is
// installed on; the refusal names the Form's file, the pointer and both
// digests (spec/lane-v1beta1.md §2.5 rule 2). A family of a third group
// is on every lane, so what it brings meets the v1beta1 family there.
func TestContractsUniquePerLane(t *testing.T) {
	alpha, beta := testref.Dir(t), testref.V1beta1Dir(t)
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join(alpha, p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Lane v1alpha3's edge.kv@1.0.0 brought beside the v1beta1 family's.
	third := fstest.MapFS{"kv/definition.json": {Data: []byte(kvDoc)}, "edge.kv/definition.json": {Data: read("interfaces/candidates/v1alpha1/edge.kv/definition.json")}}
	_, _, err := host.LoadFamilies([]host.FamilySource{{Name: "third", FS: third}, {Name: beta, FS: dirFS(beta)}})
	if err == nil || !strings.Contains(err.Error(), "interface edge.kv@1.0.0 is also defined by third/edge.kv/definition.json; lane forms.takoform.com/v1beta1 installs one document per identity line and version") {
		t.Fatalf("two edge.kv@1.0.0 on lane v1beta1: %v", err)
	}
	// A third-group Form providing lane v1alpha3's edge.kv@1.0.0: on lane
	// v1beta1 the name resolves to another digest.
	kvForm := strings.Replace(string(read("forms/candidates/edge/v1alpha1/edge-kv-namespace/definition.json")), wire.V1alpha3.EdgeGroup, "forms.example.com/v1alpha1", 1)
	third = fstest.MapFS{"kv/definition.json": {Data: []byte(kvForm)}}
	_, _, err = host.LoadFamilies([]host.FamilySource{{Name: "third", FS: third}, {Name: beta, FS: dirFS(beta)}})
	want := "third/kv/definition.json /providedInterfaces/0: on lane forms.takoform.com/v1beta1: interface edge.kv@1.0.0 is named with digest sha256:58c8e9af"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "digests to sha256:231cfe2a") {
		t.Fatalf("a reference resolving to another digest on lane v1beta1: want %q and both digests, got\n%v", want, err)
	}
	// Installed beside lane v1alpha3's own family instead, it resolves.
	// (On lane v1beta1, where it is installed too, no edge.kv is installed:
	// nothing to resolve against.)
	if _, _, err := host.LoadFamilies([]host.FamilySource{{Name: "third", FS: third}, {Name: alpha, FS: dirFS(alpha)}}); err != nil {
		t.Fatalf("the reference resolves on lane v1alpha3, yet: %v", err)
	}
	// Both Edge families: each lane holds its own edge.kv@1.0.0.
	if _, _, err := host.LoadFamilies(host.FamilySources([]string{alpha, beta}, dirFS)); err != nil {
		t.Fatal(err)
	}
}

// stores runs fn on SQLite and, where the harness provides one, on
// PostgreSQL.
func stores(t *testing.T, fn func(t *testing.T, data string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.URL(t)) })
}

// raw sends one request with tenant A, principal 1's token.
func raw(t *testing.T, h *hosttest.Host, method, path string, headers map[string]string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, h.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	req.Header.Set("Content-Type", wire.ContentTypeJSON)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func codeOf(body []byte) string {
	var env struct {
		Error struct {
			Code     string `json:"code"`
			HostCode string `json:"hostCode"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	return env.Error.Code + "/" + env.Error.HostCode
}

// TestHandlesReplayAndReviewAreLaneBound: on a Form installed on both
// lanes, an operation id answers only on the lane whose mutation created
// it, an upload id only on the lane that started it, an Idempotency-Key
// is one namespace per lane, and a prepareDigest minted on one lane is
// refused on the other (spec/lane-v1beta1.md §2.5 rules 4–5), on both
// stores. The resource itself is one: each lane reads it (rule 6).
func TestHandlesReplayAndReviewAreLaneBound(t *testing.T) {
	stores(t, func(t *testing.T, data string) {
		other, err := form.Parse([]byte(kvDoc))
		if err != nil {
			t.Fatal(err)
		}
		cat, err := (*form.Catalog)(nil).AddForm(other, "")
		if err != nil {
			t.Fatal(err)
		}
		h := hosttest.Start(t, hosttest.Options{Catalog: cat, Data: data, SyncBudget: time.Millisecond, ProvisioningDelay: time.Hour})
		ctx := context.Background()
		ref := other.Ref()
		alpha, beta := laneClient(t, h, wire.V1alpha3), laneClient(t, h, wire.V1beta1)
		space := "lanes"
		req := wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: ref.Kind, Form: wire.FormReference{FormRef: ref}, Metadata: wire.Metadata{Name: "kv", Space: space}, Spec: json.RawMessage(`{}`)}
		prepA, err := alpha.Prepare(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		prepB, err := beta.Prepare(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		if prepA.Review.PrepareDigest == prepB.Review.PrepareDigest {
			t.Fatal("both lanes minted one prepareDigest")
		}
		apply := func(lane wire.Lane, digest, key string) (int, []byte) {
			body, _ := json.Marshal(wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: req.Spec, Review: wire.Review{PrepareDigest: digest}})
			return raw(t, h, http.MethodPut, lane.APIBase+"/resources/"+ref.APIVersion+"/"+ref.Kind+"/kv", map[string]string{"If-None-Match": "*", wire.HeaderIdempotency: key}, body)
		}
		// Lane v1alpha3's digest spent on lane v1beta1: refused.
		if st, b := apply(wire.V1beta1, prepA.Review.PrepareDigest, "k-review"); st != 400 || codeOf(b) != "invalid_argument/prepare_binding_mismatch" {
			t.Fatalf("a v1alpha3 prepareDigest on lane v1beta1: %d %s", st, b)
		}
		// The same key on lane v1alpha3 is not that refusal's replay.
		st, created := apply(wire.V1alpha3, prepA.Review.PrepareDigest, "k-review")
		if st != 202 {
			t.Fatalf("the create on lane v1alpha3: %d %s", st, created)
		}
		var accepted wire.OperationEnvelope
		if err := json.Unmarshal(created, &accepted); err != nil {
			t.Fatal(err)
		}
		id := accepted.Operation.ID
		if _, err := alpha.Operation(ctx, id); err != nil {
			t.Fatalf("the operation on its lane: %v", err)
		}
		_, err = beta.Operation(ctx, id)
		mustCode(t, "the operation on the other lane", err, wire.OperationNotFound)
		st, b := raw(t, h, http.MethodPost, wire.V1beta1.APIBase+"/operations/"+id+"/cancel", map[string]string{wire.HeaderIdempotency: "k-cancel"}, nil)
		if st != 404 || !strings.HasPrefix(codeOf(b), "operation_not_found") {
			t.Fatalf("cancel on the other lane: %d %s", st, b)
		}
		// Replay on lane v1alpha3 answers the recorded 202 again.
		if st, again := apply(wire.V1alpha3, prepA.Review.PrepareDigest, "k-review"); st != 202 || !bytes.Equal(again, created) {
			t.Fatalf("the replay on lane v1alpha3: %d %s, want the recorded %s", st, again, created)
		}
		// The key on lane v1beta1 replays lane v1beta1's recorded refusal,
		// not lane v1alpha3's 202.
		if st, again := apply(wire.V1beta1, prepA.Review.PrepareDigest, "k-review"); st != 400 {
			t.Fatalf("the key on lane v1beta1 again: %d %s", st, again)
		}
		// One resource plane: lane v1beta1 sees the pending create as the
		// same address, busy with lane v1alpha3's operation.
		if st, b := apply(wire.V1beta1, prepB.Review.PrepareDigest, "k-beta"); st != 409 || !strings.HasPrefix(codeOf(b), "resource_busy") || !strings.Contains(string(b), "in progress on lane "+wire.V1alpha3.Name) {
			t.Fatalf("a create of the same address on lane v1beta1: %d %s", st, b)
		}

		// Uploads.
		mod := []byte("export default {}\n")
		m, _, err := artifact.Build("index.js", []artifact.ModuleFile{{Name: "index.js", Data: mod}})
		if err != nil {
			t.Fatal(err)
		}
		digest, err := artifact.Digest(m)
		if err != nil {
			t.Fatal(err)
		}
		up, err := alpha.StartUpload(ctx, *m)
		if err != nil {
			t.Fatal(err)
		}
		err = beta.PutBlob(ctx, up.UploadID, ijson.SumDigest(mod), mod)
		mustCode(t, "a blob PUT on the other lane", err, wire.ArtifactMissing)
		_, err = beta.CommitUpload(ctx, up.UploadID, digest)
		mustCode(t, "commit on the other lane", err, wire.ArtifactMissing)
		if err := alpha.PutBlob(ctx, up.UploadID, ijson.SumDigest(mod), mod); err != nil {
			t.Fatal(err)
		}
		if _, err := alpha.CommitUpload(ctx, up.UploadID, digest); err != nil {
			t.Fatal(err)
		}
		// Holdings are the tenant's on both lanes.
		if _, err := beta.Manifest(ctx, digest); err != nil {
			t.Fatalf("a manifest committed on lane v1alpha3, read on lane v1beta1: %v", err)
		}
	})
}

// TestConfigLanesChecked: host.New refuses lane sets that name no lane it
// serves, or that install what the host-wide catalog lacks (execution
// reads that catalog).
func TestConfigLanesChecked(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	builtin, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	other, err := form.Parse([]byte(kvDoc))
	if err != nil {
		t.Fatal(err)
	}
	extra, err := builtin.AddForm(other, "")
	if err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]struct {
		cfg  host.Config
		want string
	}{
		"a version word":        {host.Config{Catalog: builtin, Lanes: host.LaneSets{"v1alpha3": builtin}}, `names ["v1alpha3"], not a lane this host serves`},
		"a form the host lacks": {host.Config{Catalog: builtin, Lanes: host.LaneSets{wire.V1beta1.Name: extra}}, "installs form forms.example.com/v1alpha1 EdgeKVNamespace 1.0.0"},
	} {
		c.cfg.Store = h.Store
		if _, err := host.New(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", what, err, c.want)
		}
	}
}

// TestEveryRouteOnEveryLane: each lane answers the 21 routes of its own
// endpoint table (the reference data's operations-v1alpha3.json and
// operations-v1beta1.json, spec/lane-v1beta1.md §3.3) at its discovery
// path and API base: each method and path, its segments filled with
// values no resource has, reaches a route of the lane (whatever it then
// refuses), never the unknown-route answer. HEAD answers carry no body,
// so the blob HEAD route is left to the conformance checks of both lanes.
func TestEveryRouteOnEveryLane(t *testing.T) {
	tables := map[wire.Lane]string{
		wire.V1alpha3: filepath.Join(testref.Dir(t), "spec/host-api/operations-v1alpha3.json"),
		wire.V1beta1:  filepath.Join(testref.V1beta1Dir(t), "spec/host-api/operations-v1beta1.json"),
	}
	fill := strings.NewReplacer("{formGroup}", "forms.example.com", "{formVersion}", "v1alpha1", "{kind}", "Thing", "{name}", "absent",
		"{id}", "op_000000000000000000000000", "{uploadId}", "up_000000000000000000000000", "{sha256}", "sha256:"+strings.Repeat("0", 64),
		"{manifestDigest}", "sha256:"+strings.Repeat("0", 64), "{definitionVersion}", "1.0.0", "{version}", "1.0.0")
	h := hosttest.Start(t, hosttest.Options{})
	for l, file := range tables {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var table struct {
			APIGroup      string `json:"apiGroup"`
			DiscoveryPath string `json:"discoveryPath"`
			Operations    []struct{ Method, Path string }
		}
		if err := json.Unmarshal(b, &table); err != nil {
			t.Fatal(err)
		}
		if table.APIGroup != l.Name || table.DiscoveryPath != l.DiscoveryPath || len(table.Operations) != 21 {
			t.Fatalf("%s: the table is lane %s at %s with %d routes; ours is %+v", file, table.APIGroup, table.DiscoveryPath, len(table.Operations), l)
		}
		for _, op := range table.Operations {
			if !strings.HasPrefix(op.Path, l.APIBase+"/") {
				t.Errorf("%s %s is not under %s", op.Method, op.Path, l.APIBase)
			}
			if op.Method == http.MethodHead {
				continue
			}
			st, body := raw(t, h, op.Method, fill.Replace(op.Path), map[string]string{wire.HeaderIdempotency: "k"}, nil)
			if strings.HasSuffix(codeOf(body), "/unknown_route") || st == http.StatusMethodNotAllowed {
				t.Errorf("lane %s: %s %s is no route: %d %s", l.Version(), op.Method, op.Path, st, body)
			}
		}
	}
}

// TestSplitLanesOfTheBuiltinCatalog: a Config given the built-in
// family's catalog (BuiltinFamilies) without lane sets serves what `host
// serve` serves: SplitLanes places
// every Form, Interface and Binding as LoadFamilies does for --forms
// builtin, each edition's contracts on its own lane only.
func TestSplitLanesOfTheBuiltinCatalog(t *testing.T) {
	cat, want, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	// BuiltinCatalog is the v1alpha1 edition alone: lane v1alpha3 only.
	alpha, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if sets, err := host.SplitLanes(alpha); err != nil || len(sets) != 1 || sets[wire.V1alpha3.Name].Len() != 12 {
		t.Fatalf("BuiltinCatalog's lanes: %v, %v; want its 12 Forms on lane v1alpha3 only", sets, err)
	}
	got, err := host.SplitLanes(cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range wire.Lanes {
		g, w := got[l.Name], want[l.Name]
		if g.Len() != w.Len() || len(g.Interfaces()) != len(w.Interfaces()) || len(g.Bindings()) != len(w.Bindings()) {
			t.Fatalf("lane %s: split %d/%d/%d, installed %d/%d/%d (forms/interfaces/bindings)", l.Name, g.Len(), len(g.Interfaces()), len(g.Bindings()), w.Len(), len(w.Interfaces()), len(w.Bindings()))
		}
		for _, in := range w.Forms() {
			if _, ok := g.Form(in.Definition.Ref()); !ok {
				t.Errorf("lane %s: split lacks %s", l.Name, in.Definition.Ref())
			}
		}
		for _, d := range w.Interfaces() {
			if _, ok := g.Interface(d.Ref()); !ok {
				t.Errorf("lane %s: split lacks interface %s", l.Name, d.Ref())
			}
		}
		for _, d := range w.Bindings() {
			if _, ok := g.Binding(d.Ref()); !ok {
				t.Errorf("lane %s: split lacks binding %s", l.Name, d.Ref())
			}
		}
	}
}

// TestSplitLanesRefusesTwoDocumentsOfOneVersion: an Interface no Edge Form
// names goes to every lane, so a second edge.kv@1.0.0 beside the built-in
// catalog would give each lane two documents of one name@version; SplitLanes
// refuses naming both digests and LoadFamilies as the way to install it.
func TestSplitLanesRefusesTwoDocumentsOfOneVersion(t *testing.T) {
	cat, _, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(edge.Family(), "interfaces/edge.kv/definition.json")
	if err != nil {
		t.Fatal(err)
	}
	other, err := form.ParseInterface(bytes.Replace(data, []byte(`"title": "`), []byte(`"title": "Another `), 1))
	if err != nil {
		t.Fatal(err)
	}
	_, err = host.SplitLanes(cat.AddInterface(other))
	if err == nil || !strings.Contains(err.Error(), "interface edge.kv@1.0.0 twice") || !strings.Contains(err.Error(), other.Ref().SchemaDigest) ||
		!strings.Contains(err.Error(), "host.LoadFamilies") {
		t.Fatalf("a second edge.kv@1.0.0 no Form names: %v", err)
	}
}
