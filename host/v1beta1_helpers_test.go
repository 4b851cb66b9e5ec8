package host_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// beta is a real host serving the public v1beta1 Edge family
// (spec/lane-v1beta1.md §6.3) as `takoform host serve --forms DIR` does,
// with a client of tenant A, in one space.
type beta struct {
	t       *testing.T
	h       *hosttest.Host
	c       *client.Client
	refs    map[string]form.FormRef // kind → its one installed ref
	space   string
	catalog *form.Catalog
}

// startBeta starts a host with the v1beta1 family (o.Catalog is set
// here), skipping when the reference data is absent.
func startBeta(t *testing.T, o hosttest.Options) *beta {
	t.Helper()
	cat, err := host.LoadCatalog(os.DirFS(testref.V1beta1Dir(t)))
	if err != nil {
		t.Fatal(err)
	}
	o.Catalog = cat
	h := hosttest.Start(t, o)
	return betaOn(t, h, cat)
}

// betaOn is a client of tenant A on h, whose catalog is cat.
func betaOn(t *testing.T, h *hosttest.Host, cat *form.Catalog) *beta {
	t.Helper()
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]form.FormRef{}
	for _, in := range cat.Forms() {
		if r := in.Definition.Ref(); r.APIVersion == edgehost.GroupV1beta1 {
			refs[r.Kind] = r
		}
	}
	if len(refs) != 15 {
		t.Fatalf("the v1beta1 family installs %d Forms, want 15", len(refs))
	}
	return &beta{t: t, h: h, c: c, refs: refs, space: "rules-v1beta1", catalog: cat}
}

// as is b with a client of another credential (hosttest tokens).
func (b *beta) as(token string) *beta {
	b.t.Helper()
	c, err := client.New(context.Background(), b.h.URL, client.Options{Token: token})
	if err != nil {
		b.t.Fatal(err)
	}
	cp := *b
	cp.c = c
	return &cp
}

// rel is a relation member naming kind name in the v1beta1 group.
func rel(kind, name string) map[string]any {
	return map[string]any{"apiVersion": edgehost.GroupV1beta1, "kind": kind, "name": name}
}

func (b *beta) request(kind, name string, spec any) wire.ResourceRequest {
	b.t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		b.t.Fatal(err)
	}
	ref, ok := b.refs[kind]
	if !ok {
		b.t.Fatalf("no v1beta1 %s", kind)
	}
	return wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: kind, Form: wire.FormReference{FormRef: ref},
		Metadata: wire.Metadata{Name: name, Space: b.space}, Spec: raw}
}

// create prepares and applies a create of kind name (If-None-Match: *).
func (b *beta) create(kind, name string, spec any) (*wire.Resource, error) {
	b.t.Helper()
	return b.apply(b.request(kind, name, spec), client.Precondition{})
}

// reapply prepares and applies spec again onto res (generation fenced).
func (b *beta) reapply(res *wire.Resource) (*wire.Resource, error) {
	b.t.Helper()
	req := wire.ResourceRequest{APIVersion: res.APIVersion, Kind: res.Kind, Form: res.Form, Metadata: wire.Metadata{Name: res.Metadata.Name, Space: res.Metadata.Space}, Spec: res.Spec}
	return b.apply(req, client.Precondition{Generation: res.Metadata.Generation, UID: res.Metadata.UID})
}

func (b *beta) apply(req wire.ResourceRequest, pre client.Precondition) (*wire.Resource, error) {
	ctx := scoped()
	p, err := b.c.Prepare(ctx, req, pre.Generation)
	if err != nil {
		return nil, err
	}
	return b.c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, pre)
}

// mustCreate is create, failing the test on an error.
func (b *beta) mustCreate(kind, name string, spec any) *wire.Resource {
	b.t.Helper()
	res, err := b.create(kind, name, spec)
	if err != nil {
		b.t.Fatalf("create %s %q: %v", kind, name, err)
	}
	return res
}

func (b *beta) addr(kind, name string) client.Address {
	return client.Address{Space: b.space, Ref: b.refs[kind], Name: name}
}

// read reads kind name, failing the test on an error.
func (b *beta) read(kind, name string) *wire.Resource {
	b.t.Helper()
	res, err := b.c.Read(context.Background(), b.addr(kind, name))
	if err != nil {
		b.t.Fatalf("read %s %q: %v", kind, name, err)
	}
	return res
}

// del deletes kind name under its current generation.
func (b *beta) del(kind, name string) error {
	b.t.Helper()
	res := b.read(kind, name)
	return b.c.DeleteAndWait(scoped(), b.addr(kind, name), client.Precondition{Generation: res.Metadata.Generation, UID: res.Metadata.UID})
}

// scoped is a context giving the call's mutation a fresh idempotency key
// scope, as the provider gives each logical mutation: a repeated request
// executes again instead of replaying the earlier answer.
func scoped() context.Context {
	var n [8]byte
	_, _ = rand.Read(n[:])
	return client.WithKeyScope(context.Background(), hex.EncodeToString(n[:]))
}

// file is one file of a StaticAssetBundle or MigrationBundle to upload.
type file struct {
	path, mediaType string
	data            []byte
}

// upload uploads and commits a files manifest of kind (in the order
// given) and returns its digest.
func (b *beta) upload(kind string, files ...file) string {
	b.t.Helper()
	m, blobs := filesManifest(kind, files...)
	d, err := b.c.UploadArtifact(context.Background(), m, blobs)
	if err != nil {
		b.t.Fatalf("upload %s: %v", kind, err)
	}
	return d
}

func filesManifest(kind string, files ...file) (wire.Manifest, map[string][]byte) {
	m := wire.Manifest{APIVersion: wire.ArtifactsAPI, Kind: kind, Files: []wire.ManifestFile{}}
	blobs := map[string][]byte{}
	for _, f := range files {
		d := ijson.SumDigest(f.data)
		m.Files = append(m.Files, wire.ManifestFile{Path: f.path, MediaType: f.mediaType, Size: int64(len(f.data)), Digest: d})
		blobs[d] = f.data
	}
	return m, blobs
}

// workerBundle uploads a one-module WorkerBundle exporting handlers and
// returns its digest.
func (b *beta) workerBundle(handlers ...string) string {
	b.t.Helper()
	src := []byte("export default {\n")
	for _, h := range handlers {
		src = append(src, "  async "+h+"() { return new Response(\""+h+"\"); },\n"...)
	}
	src = append(src, "};\n"...)
	m, blobs, err := artifact.Build("index.js", []artifact.ModuleFile{{Name: "index.js", MediaType: artifact.MediaTypeJavaScriptModule, Data: src}})
	if err != nil {
		b.t.Fatal(err)
	}
	d, err := b.c.UploadArtifact(context.Background(), *m, blobs)
	if err != nil {
		b.t.Fatalf("upload the WorkerBundle: %v", err)
	}
	return d
}

// readyOf is res's Ready condition.
func readyOf(t *testing.T, res *wire.Resource) wire.Condition {
	t.Helper()
	for _, c := range res.Status.Conditions {
		if c.Type == "Ready" {
			return c
		}
	}
	t.Fatalf("%s %q has no Ready condition: %+v", res.Kind, res.Metadata.Name, res.Status.Conditions)
	return wire.Condition{}
}

// wantReady fails unless res's Ready condition has status and reason.
func wantReady(t *testing.T, what string, res *wire.Resource, status, reason string) wire.Condition {
	t.Helper()
	c := readyOf(t, res)
	if c.Status != status || c.Reason != reason {
		t.Errorf("%s: Ready=%s/%s (%s), want %s/%s", what, c.Status, c.Reason, c.HostReason, status, reason)
	}
	return c
}

// wantCode fails unless err is the host's refusal with code (and its
// taxonomy status).
func wantCode(t *testing.T, what string, err error, code wire.Code) *wire.Error {
	t.Helper()
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != code || we.Status() != wire.Taxonomy[code].Status {
		t.Errorf("%s: got %v, want %s (%d)", what, err, code, wire.Taxonomy[code].Status)
		return nil
	}
	return we
}
