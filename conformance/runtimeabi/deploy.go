package runtimeabi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/wire"
)

// The names of the conformance deployment (spec/runtime-v1.md §8.1).
// QueueName is exact: check 18 compares a batch's queue with it.
const (
	CacheName = "abi-cache"
	QueueName = "runtime-abi-conformance"
	// ProbeCron is the cron trigger's expression: every minute (check 17
	// compares the invocation's cron with it).
	ProbeCron   = "* * * * *"
	PeerWorker  = "abi-peer"
	ProbeWorker = "abi-probe"
	// SensitiveVar is the probe's one required sensitive variable.
	SensitiveVar = "API_SIGNING_TOKEN_NAME"
)

// SecretSetter sets a worker's sensitive variable on the host
// (spec/runtime-v1.md §3.2): the host's own sealed path, outside the lane.
type SecretSetter func(ctx context.Context, space, worker, name, value string) error

// DeployOptions adjust Deploy; the zero value deploys our probe and peer
// in a fresh space.
type DeployOptions struct {
	// Space is where the deployment is created; default a fresh
	// "runtime-abi <hex>" so runs never collide.
	Space string
	// Secret sets the probe's sensitive variable. Nil, the probe declares
	// API_SIGNING_TOKEN_NAME as a plain var instead (same env names, no
	// sensitive path exercised), and Deployment.StandIn says so.
	Secret SecretSetter
	// Probe and Peer replace our bundles' sources (tests deploy broken
	// variants to show each check can fail); nil takes ProbeSource and
	// PeerSource.
	Probe, Peer []byte
}

// Deployment is a created conformance deployment.
type Deployment struct {
	Space string
	// URL is the WorkerEndpoint's url output: the run's worker base URL W.
	URL string
	// Hostname is the WorkerEndpoint's hostname output.
	Hostname string
	// StandIn, when set, says how this deployment departs from
	// spec/runtime-v1.md §8.1 (a report prints it).
	StandIn string
	// CronTriggerUID and QueueUID are the UIDs of the cron trigger and the
	// queue (checks 17 and 18), for a host's own checks of its store.
	CronTriggerUID, QueueUID string
}

// Deploy creates the deployment spec/runtime-v1.md §8.1 describes through
// the Host API as c's tenant, in its order: the KV namespace and the queue,
// the peer and its deployment, the probe's sensitive variable (when a
// SecretSetter is given), the probe version binding CACHE, EVENTS and
// PEER, its deployment, then the cron trigger, the queue consumer and the
// endpoint. Every resource is on the v1alpha1 family the host serves
// (its FormRefs read from the host's support profiles). Errors name the
// resource that failed.
func Deploy(ctx context.Context, c *client.Client, o DeployOptions) (*Deployment, error) {
	refs, err := edgeRefs(ctx, c)
	if err != nil {
		return nil, err
	}
	if o.Space == "" {
		o.Space = "runtime-abi " + randomHex(4)
	}
	if o.Probe == nil {
		o.Probe = ProbeSource
	}
	if o.Peer == nil {
		o.Peer = PeerSource
	}
	d := &Deployment{Space: o.Space}
	create := func(kind, name string, spec map[string]any) (*wire.Resource, error) {
		ref, ok := refs[kind]
		if !ok {
			return nil, fmt.Errorf("the host serves no %s %s: the conformance deployment needs it (spec/runtime-v1.md §8.1)", edge.Group, kind)
		}
		b, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		req := wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: kind, Form: wire.FormReference{FormRef: ref},
			Metadata: wire.Metadata{Name: name, Space: o.Space}, Spec: b}
		p, err := c.Prepare(ctx, req, "")
		if err != nil {
			return nil, fmt.Errorf("prepare %s %q: %w", kind, name, err)
		}
		res, err := c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: kind, Form: req.Form, Metadata: req.Metadata,
			Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
		if err != nil {
			return nil, fmt.Errorf("create %s %q: %w", kind, name, err)
		}
		return res, nil
	}
	worker := func(name string) error {
		_, err := create("ModuleWorker", name, map[string]any{})
		return err
	}
	version := func(worker, bundle string, source []byte, spec map[string]any) error {
		m, blobs, err := artifact.Build("index.js", []artifact.ModuleFile{{Name: "index.js", MediaType: artifact.MediaTypeJavaScriptModule, Data: source}})
		if err != nil {
			return fmt.Errorf("build the %s bundle: %w", worker, err)
		}
		digest, err := c.UploadArtifact(ctx, *m, blobs)
		if err != nil {
			return fmt.Errorf("upload the %s bundle: %w", worker, err)
		}
		if _, err := create("WorkerBundle", bundle, map[string]any{"manifestDigest": digest}); err != nil {
			return err
		}
		spec["worker"], spec["bundle"] = rel("ModuleWorker", worker), rel("WorkerBundle", bundle)
		if _, err := create("WorkerVersion", worker+"-v1", spec); err != nil {
			return err
		}
		_, err = create("WorkerDeployment", worker, map[string]any{"worker": rel("ModuleWorker", worker),
			"versions": []any{map[string]any{"weight": 10000, "workerVersion": rel("WorkerVersion", worker+"-v1")}}})
		return err
	}
	if _, err := create("EdgeKVNamespace", CacheName, map[string]any{}); err != nil {
		return nil, err
	}
	q, err := create("AtLeastOnceQueue", QueueName, map[string]any{"messageRetentionSeconds": 3600, "deliveryDelaySeconds": 0})
	if err != nil {
		return nil, err
	}
	d.QueueUID = q.Metadata.UID
	if err := worker(PeerWorker); err != nil {
		return nil, err
	}
	if err := version(PeerWorker, "abi-peer-bundle", o.Peer, map[string]any{"handlers": []any{"fetch"}}); err != nil {
		return nil, err
	}
	probe := map[string]any{
		"handlers":              []any{"fetch", "scheduled", "queue"},
		"vars":                  map[string]any{"LOG_LEVEL": "debug"},
		"kvBindings":            []any{map[string]any{"name": "CACHE", "resource": rel("EdgeKVNamespace", CacheName)}},
		"queueProducerBindings": []any{map[string]any{"name": "EVENTS", "resource": rel("AtLeastOnceQueue", QueueName)}},
		"serviceBindings":       []any{map[string]any{"name": "PEER", "resource": rel("ModuleWorker", PeerWorker)}},
	}
	if o.Secret != nil {
		probe["requiredSensitiveVars"] = []any{SensitiveVar}
	} else {
		probe["vars"].(map[string]any)[SensitiveVar] = "stand-in"
		d.StandIn = SensitiveVar + " is a plain var, not a sensitive variable: no way to set a secret on this host was given (spec/runtime-v1.md §3.2)"
	}
	if err := worker(ProbeWorker); err != nil {
		return nil, err
	}
	if o.Secret != nil {
		// The secret before the first request (spec/runtime-v1.md §8.1).
		if err := o.Secret(ctx, o.Space, ProbeWorker, SensitiveVar, "runtime-abi-"+randomHex(8)); err != nil {
			return nil, fmt.Errorf("set the probe's sensitive variable %s: %w", SensitiveVar, err)
		}
	}
	if err := version(ProbeWorker, "abi-probe-bundle", o.Probe, probe); err != nil {
		return nil, err
	}
	cron, err := create("WorkerCronTrigger", "abi-cron", map[string]any{"worker": rel("ModuleWorker", ProbeWorker), "cron": ProbeCron})
	if err != nil {
		return nil, err
	}
	d.CronTriggerUID = cron.Metadata.UID
	if _, err := create("QueueConsumer", "abi-consumer", map[string]any{"worker": rel("ModuleWorker", ProbeWorker), "queue": rel("AtLeastOnceQueue", QueueName),
		"maxBatchSize": 10, "maxBatchTimeoutSeconds": 1, "maxConcurrency": 1, "maxRetries": 3, "retryDelaySeconds": 5}); err != nil {
		return nil, err
	}
	ep, err := create("WorkerEndpoint", "abi-endpoint", map[string]any{"worker": rel("ModuleWorker", ProbeWorker)})
	if err != nil {
		return nil, err
	}
	var out struct{ Hostname, URL string }
	if err := json.Unmarshal(ep.Status.Outputs, &out); err != nil || out.URL == "" {
		return nil, fmt.Errorf("the WorkerEndpoint's outputs %s carry no url (spec/host-api-v1alpha3.md §6.5)", ep.Status.Outputs)
	}
	d.URL, d.Hostname = out.URL, out.Hostname
	return d, nil
}

// edgeRefs maps each Edge kind the host serves to its exact FormRef on the
// v1alpha1 family (edge.Group); where a kind has several definition
// versions, the one most Edge kinds share.
func edgeRefs(ctx context.Context, c *client.Client) (map[string]form.FormRef, error) {
	profiles, err := c.SupportForms(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the host's support profiles: %w", err)
	}
	count := map[string]int{}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.APIVersion == edge.Group {
			count[p.FormRef.DefinitionVersion]++
		}
	}
	family := ""
	for dv, n := range count {
		if n > count[family] || (n == count[family] && dv < family) {
			family = dv
		}
	}
	refs := map[string]form.FormRef{}
	for _, p := range profiles.Profiles {
		if p.FormRef == nil || p.FormRef.APIVersion != edge.Group {
			continue
		}
		if have, ok := refs[p.FormRef.Kind]; ok && have.DefinitionVersion == family {
			continue
		}
		refs[p.FormRef.Kind] = *p.FormRef
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("the host serves no %s Forms: the runtime checks deploy on that family (spec/runtime-v1.md §8.1)", edge.Group)
	}
	return refs, nil
}

// rel is a relation value naming an Edge resource in the same space.
func rel(kind, name string) map[string]any {
	return map[string]any{"apiVersion": edge.Group, "kind": kind, "name": name}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SecretsThrough is the SecretSetter of a host that serves the secret
// route of spec/runtime-v1.md §3.2 (ours: `takoform secret`): it sets the
// value through c, on the worker of the v1alpha1 family.
func SecretsThrough(c *client.Client) SecretSetter {
	return func(ctx context.Context, space, worker, name, value string) error {
		_, err := c.SetSecret(ctx, client.Worker{Space: space, Group: edge.Group, Name: worker}, name, []byte(value))
		return err
	}
}
