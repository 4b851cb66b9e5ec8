package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
)

// desiredFixture is a real SQLite store for readDesired.
type desiredFixture struct {
	t  *testing.T
	st *sqlite.Store
}

func newDesiredFixture(t *testing.T) *desiredFixture {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "host.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &desiredFixture{t: t, st: st}
}

// add stores a resource of tenant acme with uid (also its name) and its
// pins, each "pointer=targetUID" (the target's group and kind read back).
func (f *desiredFixture) add(group, kind, uid, spec string, pins ...string) {
	f.t.Helper()
	err := f.st.Update(context.Background(), func(tx store.Tx) error {
		r := &store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: group, Kind: kind, Name: uid}, UID: uid,
			FormRef:    form.FormRef{APIVersion: group, Kind: kind, DefinitionVersion: "0.1.0", SchemaDigest: "sha256:" + strings.Repeat("1", 64)},
			Generation: 1, Revision: 1, Spec: []byte(spec), SpecDigest: "sha256:" + strings.Repeat("2", 64), Status: []byte(`{}`),
			CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(1, 0)}
		if err := tx.CreateResource(r); err != nil {
			return err
		}
		var ps []store.Pin
		for _, p := range pins {
			ptr, target, _ := strings.Cut(p, "=")
			tr, err := tx.ResourceByUID(target)
			if err != nil {
				return fmt.Errorf("pin %s: %w", p, err)
			}
			ps = append(ps, store.Pin{SourceUID: uid, Pointer: ptr, RelationPointer: ptr, TargetAPIVersion: tr.APIVersion,
				TargetKind: tr.Kind, TargetName: tr.Name, TargetUID: tr.UID, TargetFormRef: tr.FormRef})
		}
		return tx.ReplacePins(uid, ps)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *desiredFixture) read() *desired { return f.readWith(readOpts{gateway: true}) }

func (f *desiredFixture) readWith(o readOpts) *desired {
	f.t.Helper()
	var d *desired
	err := f.st.View(context.Background(), func(tx store.Tx) error {
		var err error
		d, err = readDesired(tx, func(r *store.Resource) string { return "ep-" + r.UID + ".localhost" }, o)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// app adds a worker w with bundle, a version binding lists (a spec
// fragment and its pins), a deployment and an endpoint, all in group.
func (f *desiredFixture) app(group, w, bindings string, pins ...string) {
	f.add(group, "ModuleWorker", w, `{}`)
	f.add(group, "WorkerBundle", w+"-b", `{"manifestDigest":"sha256:`+strings.Repeat("3", 64)+`"}`)
	f.add(group, "WorkerVersion", w+"-v", `{"handlers":["fetch"]`+bindings+`}`, append([]string{"/worker=" + w, "/bundle=" + w + "-b"}, pins...)...)
	f.add(group, "WorkerDeployment", w+"-d", `{"versions":[{"weight":10000}]}`, "/worker="+w, "/versions/0/workerVersion="+w+"-v")
	f.add(group, "WorkerEndpoint", w+"-e", `{}`, "/worker="+w)
}

// TestDesiredReadsBothGroupsEachWithinItself: endpoints of both Edge
// groups route; a v1beta1 version's sqliteBindings get the v1beta1
// edge.sql projection; a binding naming a resource of the other group
// makes the version not runnable (the families never relate); a
// version's assets carry its bundle's manifest and serving choices, and
// a bundle gone or of the other group makes it not runnable.
func TestDesiredReadsBothGroupsEachWithinItself(t *testing.T) {
	f := newDesiredFixture(t)
	f.add(edge.GroupV1alpha1, "SQLiteDatabase", "db-alpha", `{}`)
	f.add(edge.GroupV1beta1, "SQLiteDatabase", "db-beta", `{}`)
	f.app(edge.GroupV1alpha1, "alpha", `,"sqliteBindings":[{"name":"DB"}]`, "/sqliteBindings/0/resource=db-alpha")
	f.app(edge.GroupV1beta1, "beta", `,"sqliteBindings":[{"name":"DB"}]`, "/sqliteBindings/0/resource=db-beta")
	f.app(edge.GroupV1beta1, "mixed", `,"sqliteBindings":[{"name":"DB"}]`, "/sqliteBindings/0/resource=db-alpha")
	site := "sha256:" + strings.Repeat("4", 64)
	f.add(edge.GroupV1beta1, "StaticAssetBundle", "site", `{"manifestDigest":"`+site+`"}`)
	f.add(edge.GroupV1alpha1, "StaticAssetBundle", "site-alpha", `{"manifestDigest":"`+site+`"}`)
	assets := `,"assets":{"bundle":{},"runWorkerFirst":true,"notFoundHandling":"single_page_application"},"sqliteBindings":[{"name":"DB"}]`
	f.app(edge.GroupV1beta1, "assets", assets, "/sqliteBindings/0/resource=db-beta", "/assets/bundle=site")
	f.app(edge.GroupV1beta1, "nobundle", assets, "/sqliteBindings/0/resource=db-beta")
	f.app(edge.GroupV1beta1, "otherbundle", assets, "/sqliteBindings/0/resource=db-beta", "/assets/bundle=site-alpha")
	d := f.read()
	for w, want := range map[string]struct {
		group string
		kind  engine.Kind
		why   string
	}{
		"alpha":       {edge.GroupV1alpha1, engine.KindSQL, ""},
		"beta":        {edge.GroupV1beta1, engine.KindSQLV1beta1, ""},
		"mixed":       {edge.GroupV1beta1, engine.KindSQLV1beta1, "binding DB names a resource of " + edge.GroupV1alpha1},
		"assets":      {edge.GroupV1beta1, engine.KindSQLV1beta1, ""},
		"nobundle":    {edge.GroupV1beta1, engine.KindSQLV1beta1, "its static asset bundle (assets.bundle) is gone"},
		"otherbundle": {edge.GroupV1beta1, engine.KindSQLV1beta1, "its static asset bundle (assets.bundle) is gone"},
	} {
		r := d.hosts["ep-"+w+"-e.localhost"]
		if r == nil || r.who.Group != want.group || len(r.versions) != 1 {
			t.Errorf("%s: route %+v; want one version of %s", w, r, want.group)
			continue
		}
		v := d.tenants["acme"][r.versions[0].uid]
		if v == nil || len(v.bindings) != 1 || v.bindings[0].Kind != want.kind || !strings.HasPrefix(v.unrunnable, want.why) || (want.why == "") != (v.unrunnable == "") {
			t.Errorf("%s: version %+v; want a %s binding, unrunnable %q", w, v, want.kind, want.why)
		}
		if w == "assets" && (v == nil || v.assets == nil || *v.assets != assetsSpec{manifest: site, runWorkerFirst: true, spa: true}) {
			t.Errorf("assets: version %+v; want its assets read", v)
		}
	}
}

// TestDesiredCustomHostnameClaimedTwice: a hostname claimed once routes;
// claimed by WorkerCustomDomains of both groups of one tenant (which the
// control plane refuses, spec/lane-v1beta1.md §2.5 rule 7) it routes for
// neither.
func TestDesiredCustomHostnameClaimedTwice(t *testing.T) {
	f := newDesiredFixture(t)
	f.app(edge.GroupV1alpha1, "alpha", "")
	f.app(edge.GroupV1beta1, "beta", "")
	f.add(edge.GroupV1beta1, "WorkerCustomDomain", "dom-beta", `{"hostname":"app.localhost"}`, "/worker=beta")
	if r := f.read().hosts["app.localhost"]; r == nil || r.who.Group != edge.GroupV1beta1 {
		t.Fatalf("a hostname claimed once: %+v", r)
	}
	f.add(edge.GroupV1alpha1, "WorkerCustomDomain", "dom-alpha", `{"hostname":"app.localhost"}`, "/worker=alpha")
	if r := f.read().hosts["app.localhost"]; r != nil {
		t.Errorf("a hostname claimed in both groups routes to %+v", r.who)
	}
}

// TestDesiredEventsPassOverAnUnattachedTrigger: a cron trigger whose
// /worker names a worker of the other group (so no worker of its own is
// attached) is passed over; the triggers and consumers read after it
// still run.
func TestDesiredEventsPassOverAnUnattachedTrigger(t *testing.T) {
	f := newDesiredFixture(t)
	f.app(edge.GroupV1alpha1, "alpha", "")
	f.app(edge.GroupV1beta1, "beta", "")
	f.add(edge.GroupV1beta1, "Queue", "jobs", `{}`)
	f.add(edge.GroupV1beta1, kindCronTrigger, "a-unattached", `{"cron":"* * * * *"}`, "/worker=alpha")
	f.add(edge.GroupV1beta1, kindCronTrigger, "b-attached", `{"cron":"*/5 * * * *"}`, "/worker=beta")
	f.add(edge.GroupV1beta1, kindConsumer, "c-consumer", `{"maxBatchSize":10,"maxBatchTimeoutSeconds":5,"maxConcurrency":1,"maxRetries":3,"retryDelaySeconds":0}`,
		"/worker=beta", "/queue=jobs")
	crons, consumers := f.read().crons, f.read().consumers
	if len(crons) != 1 || crons[0].UID != "b-attached" || crons[0].Cron != "*/5 * * * *" {
		t.Errorf("crons %+v; want b-attached alone", crons)
	}
	if len(consumers) != 1 || consumers[0].UID != "c-consumer" || consumers[0].Queue != "jobs" || consumers[0].MaxBatchSize != 10 {
		t.Errorf("consumers %+v; want c-consumer of jobs", consumers)
	}
}
