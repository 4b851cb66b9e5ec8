package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
)

// The Edge kinds the data plane reads (spec/host-api-v1alpha3.md §6), in
// both Edge groups (forms/edge.Groups; spec/runtime-v1.md §0.1): a
// resource's relations are followed within its own group only, as the
// two families never relate (spec/lane-v1beta1.md §6.3).
const (
	kindWorker       = "ModuleWorker"
	kindVersion      = "WorkerVersion"
	kindBundle       = "WorkerBundle"
	kindDeployment   = "WorkerDeployment"
	kindEndpoint     = "WorkerEndpoint"
	kindCustomDomain = "WorkerCustomDomain"
	kindCronTrigger  = "WorkerCronTrigger"
	kindConsumer     = "QueueConsumer"
	kindQueue        = "AtLeastOnceQueue"
	kindAssetBundle  = "StaticAssetBundle"
)

// watchedKinds are the kinds whose mutations can change desired state.
var watchedKinds = map[string]bool{
	kindWorker: true, kindVersion: true, kindBundle: true, kindDeployment: true, kindEndpoint: true, kindCustomDomain: true, kindAssetBundle: true,
	kindCronTrigger: true, kindConsumer: true, kindQueue: true,
}

// gatewayKinds maps the WorkerVersion binding lists the gateway serves to
// their engine kind (spec/runtime-v1.md §5.1–§5.4); gatewayKind picks the
// kind of a version's group.
var gatewayKinds = map[string]engine.Kind{
	"kvBindings":            engine.KindKV,
	"bucketBindings":        engine.KindObjects,
	"sqliteBindings":        engine.KindSQL,
	"queueProducerBindings": engine.KindQueue,
}

// gatewayKind is the engine kind of a binding list of a version of group:
// the v1beta1 family's sqliteBindings get its own edge.sql projection
// (spec/runtime-v1.md §5.3); every other kind is the same in both.
func gatewayKind(group, field string) (engine.Kind, bool) {
	k, ok := gatewayKinds[field]
	if ok && k == engine.KindSQL && group == edge.GroupV1beta1 {
		k = engine.KindSQLV1beta1
	}
	return k, ok
}

// desired is what should run, read from the store in one View.
type desired struct {
	// hosts maps a canonical hostname to the worker that answers it.
	hosts map[string]*route
	// tenants maps a tenant to the versions its shard should run, by UID.
	tenants map[string]map[string]*versionSpec
	// crons and consumers are the live event attachments
	// (spec/runtime-v1.md §2.5, §2.6), by UID; eventTenants the tenants
	// with one, whose shards run the dispatch worker.
	crons        []CronTrigger
	consumers    []Consumer
	eventTenants map[string]bool
}

// route is one routable worker: its deployment's weighted versions in
// stored order (spec/runtime-v1.md §9.1 (3)); none when it has no active
// deployment.
type route struct {
	tenant, worker string // worker: "space/name", for logs
	who            Worker
	versions       []weighted
}

type weighted struct {
	uid    string
	weight int64
}

// versionSpec is one version as the engine needs it, short of module
// bytes (read when a generation is built).
type versionSpec struct {
	uid, tenant, name string
	worker            Worker // the ModuleWorker the version belongs to
	manifest          string // the bundle's manifest digest
	vars              []engine.Var
	bindings          []engine.Binding
	services          []engine.Service
	// assets are its static assets (WorkerVersion.assets); nil when none.
	assets *assetsSpec
	// secrets are its sensitive variables' names in declared order, each
	// with a stamp of its stored value (never the value): a set or unset
	// changes the fingerprint.
	secrets []secretRef
	// unrunnable says why the version cannot run here ("" when it can);
	// requests routed to it get the host's 503 (spec/runtime-v1.md §9.1 (4)).
	unrunnable string
}

// fingerprint identifies what a version runs: a change of any part
// starts the shard's next generation (spec/runtime-v1.md §9.4).
func (v *versionSpec) fingerprint() string {
	assets := ""
	if v.assets != nil {
		assets = fmt.Sprint(*v.assets)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%q %q %q %q %q %q %q %q", v.uid, v.manifest, fmt.Sprint(v.vars), fmt.Sprint(v.bindings), fmt.Sprint(v.services), fmt.Sprint(v.secrets), v.unrunnable, assets))
	return hex.EncodeToString(sum[:])
}

// readOpts is what desired state depends on besides the store: whether
// the binding gateway runs, and the secrets keys (nil: none).
type readOpts struct {
	gateway bool
	keys    *secrets.Keyring
	domains *Domains // custom hostnames granted to tenants
}

// readDesired reads every routable worker (each WorkerEndpoint, and each
// WorkerCustomDomain whose tenant owns its hostname by domains,
// spec/runtime-v1.md §10.6), its active deployment and the versions it
// weights, in both Edge groups. hostname is the endpoint's host-assigned
// hostname (status.outputs.hostname). A custom hostname claimed by two
// WorkerCustomDomains is routed for neither: the claim is unique per
// tenant only (and, within a tenant, across both groups:
// spec/lane-v1beta1.md §2.5 rule 7).
func readDesired(tx store.Tx, hostname func(*store.Resource) string, o readOpts) (*desired, error) {
	d := &desired{hosts: map[string]*route{}, tenants: map[string]map[string]*versionSpec{}, eventTenants: map[string]bool{}}
	var eps, doms []*store.Resource
	for _, group := range edge.Groups() {
		e, err := tx.ResourcesOfKind(group, kindEndpoint)
		if err != nil {
			return nil, err
		}
		c, err := tx.ResourcesOfKind(group, kindCustomDomain)
		if err != nil {
			return nil, err
		}
		eps, doms = append(eps, e...), append(doms, c...)
	}
	type attach struct {
		res  *store.Resource
		host string
	}
	var all []attach
	for _, ep := range eps {
		all = append(all, attach{ep, hostname(ep)})
	}
	claims := map[string]int{} // custom hostname → WorkerCustomDomains claiming it
	var custom []attach
	for _, dom := range doms {
		spec, err := ijson.DecodeObject(dom.Spec)
		if err != nil {
			return nil, err
		}
		h, err := edge.CanonicalHostname(ijson.As[string](spec["hostname"]))
		if err != nil {
			continue
		}
		claims[h]++
		custom = append(custom, attach{dom, h})
	}
	for _, a := range custom {
		if claims[a.host] == 1 && o.domains.Owns(a.res.Tenant, a.host) {
			all = append(all, a)
		}
	}
	for _, a := range all {
		if _, taken := d.hosts[a.host]; taken {
			continue // an endpoint's name; a custom claim cannot take it
		}
		r, err := readRoute(tx, a.res, d, o)
		if err != nil {
			return nil, err
		}
		if r != nil {
			d.hosts[a.host] = r
		}
	}
	if err := readEvents(tx, d, o); err != nil {
		return nil, err
	}
	return d, nil
}

// readRoute follows an attachment to its worker and the worker's active
// deployment, adding the weighted versions to d.
func readRoute(tx store.Tx, att *store.Resource, d *desired, o readOpts) (*route, error) {
	workerUID, err := pinTarget(tx, att.UID, "/worker")
	if err != nil || workerUID == "" {
		return nil, err
	}
	w, err := present(tx.ResourceByUID(workerUID))
	if err != nil || w == nil || w.APIVersion != att.APIVersion || w.Kind != kindWorker {
		return nil, err
	}
	r := &route{tenant: w.Tenant, worker: w.Space + "/" + w.Name, who: workerOf(w)}
	r.versions, err = deployed(tx, d, w, o)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// deployed is the weighted versions of the worker's active deployment,
// in stored order (none without one), each added to d. A version of
// another group than the worker's counts as absent ("" UID).
func deployed(tx store.Tx, d *desired, w *store.Resource, o readOpts) ([]weighted, error) {
	dep, err := deploymentOf(tx, w)
	if err != nil || dep == nil {
		return nil, err
	}
	pins, err := tx.Pins(dep.UID)
	if err != nil {
		return nil, err
	}
	spec, err := ijson.DecodeObject(dep.Spec)
	if err != nil {
		return nil, err
	}
	var out []weighted
	for i, v := range ijson.As[[]any](spec["versions"]) {
		uid := pointerTarget(pins, fmt.Sprintf("/versions/%d/workerVersion", i))
		weight, err := ijson.As[json.Number](ijson.As[map[string]any](v)["weight"]).Int64()
		if err != nil {
			return nil, fmt.Errorf("deployment %s/%s versions/%d: weight: %w", dep.Space, dep.Name, i, err)
		}
		ver, err := present(tx.ResourceByUID(uid))
		if err != nil {
			return nil, err
		}
		if ver == nil || ver.APIVersion != w.APIVersion || ver.Kind != kindVersion {
			out = append(out, weighted{weight: weight})
			continue
		}
		out = append(out, weighted{uid: uid, weight: weight})
		if err := addVersion(tx, d, ver, o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// deploymentOf is the worker's active deployment (the one deployment of
// its group whose /worker pins it), nil when none.
func deploymentOf(tx store.Tx, w *store.Resource) (*store.Resource, error) {
	pins, err := tx.PinsTo(w.UID)
	if err != nil {
		return nil, err
	}
	for _, p := range pins {
		if p.Pointer != "/worker" {
			continue
		}
		src, err := present(tx.ResourceByUID(p.SourceUID))
		if err != nil {
			return nil, err
		}
		if src != nil && src.APIVersion == w.APIVersion && src.Kind == kindDeployment {
			return src, nil
		}
	}
	return nil, nil
}

// addVersion reads version ver into d (once).
func addVersion(tx store.Tx, d *desired, ver *store.Resource, o readOpts) error {
	uid := ver.UID
	t := d.tenants[ver.Tenant]
	if t == nil {
		t = map[string]*versionSpec{}
		d.tenants[ver.Tenant] = t
	}
	if t[uid] != nil {
		return nil
	}
	v, targets, err := readVersion(tx, ver, o)
	if err != nil {
		return err
	}
	t[uid] = v // before its service targets: a binding cycle ends here
	for i, worker := range targets {
		tw, err := present(tx.ResourceByUID(worker))
		if err != nil {
			return err
		}
		if tw == nil || tw.APIVersion != ver.APIVersion || tw.Kind != kindWorker {
			continue // no target: the service call answers as for a worker with no deployment
		}
		ws, err := deployed(tx, d, tw, o)
		if err != nil {
			return err
		}
		for _, w := range ws {
			v.services[i].Targets = append(v.services[i].Targets, engine.ServiceTarget{Version: w.uid, Weight: w.weight})
		}
	}
	return nil
}

// readVersion reads a WorkerVersion's bundle digest, vars and bindings,
// and the worker UID each service binding targets (in services order; the
// caller fills in their deployments' versions).
func readVersion(tx store.Tx, ver *store.Resource, o readOpts) (*versionSpec, []string, error) {
	spec, err := ijson.DecodeObject(ver.Spec)
	if err != nil {
		return nil, nil, err
	}
	pins, err := tx.Pins(ver.UID)
	if err != nil {
		return nil, nil, err
	}
	v := &versionSpec{uid: ver.UID, tenant: ver.Tenant, name: ver.Space + "/" + ver.Name}
	if w, err := present(tx.ResourceByUID(pointerTarget(pins, "/worker"))); err != nil {
		return nil, nil, err
	} else if w != nil {
		v.worker = workerOf(w)
	}
	if b, err := present(tx.ResourceByUID(pointerTarget(pins, "/bundle"))); err != nil {
		return nil, nil, err
	} else if b != nil {
		bs, err := ijson.DecodeObject(b.Spec)
		if err != nil {
			return nil, nil, err
		}
		v.manifest = ijson.As[string](bs["manifestDigest"])
	}
	if v.manifest == "" {
		v.unrunnable = "its bundle is gone"
	}
	if err := readAssets(tx, v, ver.APIVersion, spec, pins); err != nil {
		return nil, nil, err
	}
	vars := ijson.As[map[string]any](spec["vars"])
	for _, k := range sortedKeys(vars) {
		raw, err := ijson.CanonicalValue(vars[k])
		if err != nil {
			return nil, nil, fmt.Errorf("version %s var %s: %w", v.name, k, err)
		}
		v.vars = append(v.vars, engine.Var{Name: k, Value: raw})
	}
	if err := readSecrets(tx, v, ver, ijson.As[[]any](spec["requiredSensitiveVars"]), o.keys); err != nil {
		return nil, nil, err
	}
	var targets []string
	for i, b := range ijson.As[[]any](spec["serviceBindings"]) {
		name := ijson.As[string](ijson.As[map[string]any](b)["name"])
		v.services = append(v.services, engine.Service{Name: name})
		targets = append(targets, pointerTarget(pins, fmt.Sprintf("/serviceBindings/%d/resource", i)))
	}
	for _, bl := range edge.BindingLists {
		list := ijson.As[[]any](spec[bl.Field])
		kind, ok := gatewayKind(ver.APIVersion, bl.Field)
		if bl.Field == "serviceBindings" {
			continue
		}
		if len(list) > 0 && !ok && v.unrunnable == "" {
			v.unrunnable = bl.Field + " are not runnable yet"
		}
		if len(list) > 0 && ok && !o.gateway && v.unrunnable == "" {
			v.unrunnable = bl.Field + " need the binding gateway, which this host does not run yet"
		}
		for i, b := range list {
			name := ijson.As[string](ijson.As[map[string]any](b)["name"])
			uid := pointerTarget(pins, fmt.Sprintf("/%s/%d/resource", bl.Field, i))
			if !ok {
				continue
			}
			if err := sameGroup(tx, v, ver.APIVersion, name, uid); err != nil {
				return nil, nil, err
			}
			v.bindings = append(v.bindings, engine.Binding{Name: name, Kind: kind, UID: uid})
		}
	}
	return v, targets, nil
}

// assetsSpec is a version's WorkerVersion.assets as the shard serves it
// (spec/lane-v1beta1.md §6.4): its bundle's manifest digest and the two
// serving choices.
type assetsSpec struct {
	manifest       string
	runWorkerFirst bool
	spa            bool // notFoundHandling single_page_application
}

// readAssets reads v's assets (none when spec has no "assets"): the
// StaticAssetBundle its /assets/bundle pins, in v's own group. A bundle
// gone (the relation refuses its delete, so only a store repair does
// that) makes v not runnable: serving it without its assets would answer
// the worker's 404 where an asset belongs (spec/runtime-v1.md §9.2).
func readAssets(tx store.Tx, v *versionSpec, group string, spec map[string]any, pins []store.Pin) error {
	a, ok := spec["assets"].(map[string]any)
	if !ok {
		return nil
	}
	v.assets = &assetsSpec{runWorkerFirst: ijson.As[bool](a["runWorkerFirst"]), spa: ijson.As[string](a["notFoundHandling"]) == "single_page_application"}
	b, err := present(tx.ResourceByUID(pointerTarget(pins, "/assets/bundle")))
	if err != nil {
		return err
	}
	if b != nil && b.Kind == kindAssetBundle && b.APIVersion == group {
		bs, err := ijson.DecodeObject(b.Spec)
		if err != nil {
			return err
		}
		v.assets.manifest = ijson.As[string](bs["manifestDigest"])
	}
	if v.assets.manifest == "" && v.unrunnable == "" {
		v.unrunnable = "its static asset bundle (assets.bundle) is gone"
	}
	return nil
}

// sameGroup makes v not runnable when its binding name names a resource
// of another group than group (families never relate; the gateway would
// serve it under the other family's contract). A target gone meanwhile
// is left to the gateway, which refuses it per call.
func sameGroup(tx store.Tx, v *versionSpec, group, name, uid string) error {
	res, err := present(tx.ResourceByUID(uid))
	if err != nil || res == nil || res.APIVersion == group || v.unrunnable != "" {
		return err
	}
	v.unrunnable = fmt.Sprintf("binding %s names a resource of %s; a version of %s binds resources of its own group only", name, res.APIVersion, group)
	return nil
}

// workerOf is a ModuleWorker resource's identity.
func workerOf(w *store.Resource) Worker {
	return Worker{Tenant: w.Tenant, Space: w.Space, Name: w.Name, Group: w.APIVersion, UID: w.UID}
}

// pinTarget is the target UID of source's pin at pointer, "" when none.
func pinTarget(tx store.Tx, source, pointer string) (string, error) {
	pins, err := tx.Pins(source)
	return pointerTarget(pins, pointer), err
}

func pointerTarget(pins []store.Pin, pointer string) string {
	for _, p := range pins {
		if p.Pointer == pointer {
			return p.TargetUID
		}
	}
	return ""
}

// present turns store.ErrNotFound into nil, nil.
func present(r *store.Resource, err error) (*store.Resource, error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return r, err
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// secretRef is one sensitive variable of a version: its name and a stamp
// of the stored sealed value (its key id and a digest of the sealed
// bytes, whose nonce is fresh at every set).
type secretRef struct{ name, stamp string }

// readSecrets notes the version's sensitive variables (spec/runtime-v1.md
// §3.2): each declared name needs a stored value for the version's worker
// that opens with this host's keys, else the version is not runnable and
// the reason names the first name missing (never a value). The values
// themselves are opened again when a generation starts (shard.start).
func readSecrets(tx store.Tx, v *versionSpec, ver *store.Resource, names []any, keys *secrets.Keyring) error {
	if len(names) == 0 {
		return nil
	}
	rows, err := tx.SecretsOf(v.worker.UID)
	if err != nil {
		return err
	}
	byName := map[string]*store.Secret{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	for _, n := range names {
		name := ijson.As[string](n)
		r := byName[name]
		if v.unrunnable != "" {
			return nil
		}
		switch {
		case keys == nil:
			v.unrunnable = "it requires sensitive variable " + name + " and this host has no secrets key (--secrets-key)"
		case r == nil:
			worker := "<its worker>"
			if w, err := present(tx.ResourceByUID(v.worker.UID)); err != nil {
				return err
			} else if w != nil {
				worker = w.Name
			}
			v.unrunnable = fmt.Sprintf("sensitive variable %s has no value (takoform secret set --space %s --worker %s %s)", name, ver.Space, worker, name)
		default:
			if _, err := keys.Open(r); err != nil {
				v.unrunnable = "sensitive variable " + name + " does not open with this host's secrets key (set it again; handbook/secrets.md)"
				continue
			}
			sum := sha256.Sum256(r.Sealed)
			v.secrets = append(v.secrets, secretRef{name: name, stamp: r.KeyID + ":" + hex.EncodeToString(sum[:8])})
		}
	}
	return nil
}
