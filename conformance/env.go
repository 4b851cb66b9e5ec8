package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/wire"
)

// EdgeGroup is the Form group the checks exercise on lane v1alpha3 (on
// another lane, Env.Group: that lane's Edge group); the exact FormRefs are
// read from the host's support profiles, so any installed definition of
// the Edge family (ours or the reference one) is checked.
const EdgeGroup = edge.Group

// Credentials are the three callers every run needs.
type Credentials struct {
	A1 string // tenant A, principal 1
	A2 string // tenant A, principal 2
	B  string // tenant B
}

// Env is what every check runs against.
type Env struct {
	Endpoint string
	Creds    Credentials
	A1       *client.Client
	A2       *client.Client
	B        *client.Client
	// Space is unique to this run so runs never collide.
	Space string
	// Probe says the host honours the test-only Takoform-Conformance-Probe
	// header; checks that need it skip otherwise.
	Probe bool
	// Lane is the lane the run speaks (client.Options.Lane of NewEnvOptions,
	// default wire.DefaultLane) and Group that lane's Edge group, the one
	// the checks exercise (spec/lane-v1beta1.md §2.5 rule 1, §14).
	Lane  wire.Lane
	Group string
	refs  map[string]form.FormRef
	http  *http.Client
	seq   atomic.Int64
}

// NewEnv negotiates with the host for each credential and learns the
// exact FormRefs it serves for the Edge kinds.
func NewEnv(ctx context.Context, endpoint string, creds Credentials, probe bool) (*Env, error) {
	return NewEnvOptions(ctx, endpoint, creds, probe, client.Options{})
}

// NewEnvOptions is NewEnv with base client Options for every credential
// (its Token is replaced by each credential's): a private CA
// (CACertificatePEM/CACertificateFile), which the run's own raw requests
// trust too. Errors: a bad CA, then NewEnv's.
func NewEnvOptions(ctx context.Context, endpoint string, creds Credentials, probe bool, base client.Options) (*Env, error) {
	roots, err := base.RootCAs()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{}
	if roots != nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		hc.Transport = t
	}
	lane := base.Lane
	if lane == (wire.Lane{}) {
		lane = wire.DefaultLane
	}
	e := &Env{Endpoint: strings.TrimRight(endpoint, "/"), Creds: creds, Probe: probe, Lane: lane, Group: lane.EdgeGroup, refs: map[string]form.FormRef{}, http: hc}
	for _, c := range []struct {
		dst   **client.Client
		token string
	}{{&e.A1, creds.A1}, {&e.A2, creds.A2}, {&e.B, creds.B}} {
		if *c.dst, err = client.New(ctx, e.Endpoint, withToken(base, c.token)); err != nil {
			return nil, fmt.Errorf("negotiate with %s: %w", e.Endpoint, err)
		}
	}
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return nil, fmt.Errorf("read support profiles: %w", err)
	}
	// Where a kind has several definition versions installed, the family's
	// own line wins: the definition version most Edge kinds share.
	count := map[string]int{}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.APIVersion == e.Group {
			count[p.FormRef.DefinitionVersion]++
		}
	}
	family := ""
	for dv, n := range count {
		if n > count[family] || (n == count[family] && dv < family) {
			family = dv
		}
	}
	for _, p := range profiles.Profiles {
		if p.FormRef == nil || p.FormRef.APIVersion != e.Group {
			continue
		}
		if have, ok := e.refs[p.FormRef.Kind]; ok && have.DefinitionVersion == family {
			continue
		}
		e.refs[p.FormRef.Kind] = *p.FormRef
	}
	e.Space = "conformance " + randomHex(4)
	return e, nil
}

// Ref is the exact FormRef the host serves for an Edge kind.
func (e *Env) Ref(kind string) (form.FormRef, error) {
	r, ok := e.refs[kind]
	if !ok {
		return form.FormRef{}, skipf("the host serves no %s %s on lane %s", e.Group, kind, e.Lane.Name)
	}
	return r, nil
}

// Name returns a fresh resource name.
func (e *Env) Name(prefix string) string {
	return fmt.Sprintf("%s-%d-%s", prefix, e.seq.Add(1), randomHex(3))
}

// Rel is a relation value naming an Edge resource of group EdgeGroup
// (lane v1alpha3).
func Rel(kind, name string) map[string]any {
	return map[string]any{"apiVersion": EdgeGroup, "kind": kind, "name": name}
}

// Rel is a relation value naming an Edge resource of the run's lane.
func (e *Env) Rel(kind, name string) map[string]any {
	return map[string]any{"apiVersion": e.Group, "kind": kind, "name": name}
}

// Request builds a resource request in the run's space.
func (e *Env) Request(kind, name string, spec any) (wire.ResourceRequest, error) {
	ref, err := e.Ref(kind)
	if err != nil {
		return wire.ResourceRequest{}, err
	}
	return e.RequestIn(e.Space, ref, name, spec), nil
}

// RequestIn builds a resource request for an exact ref and space.
func (e *Env) RequestIn(space string, ref form.FormRef, name string, spec any) wire.ResourceRequest {
	b, _ := json.Marshal(spec)
	return wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: ref.Kind, Form: wire.FormReference{FormRef: ref},
		Metadata: wire.Metadata{Name: name, Space: space}, Spec: b}
}

// Create prepares and applies a create as c, waiting out an operation.
func (e *Env) Create(ctx context.Context, c *client.Client, kind, name string, spec any) (*wire.Resource, error) {
	req, err := e.Request(kind, name, spec)
	if err != nil {
		return nil, err
	}
	return e.Apply(ctx, c, req, nil)
}

// Apply prepares req and applies it: a create when cur is nil, else an
// update fenced on cur's generation and uid.
func (e *Env) Apply(ctx context.Context, c *client.Client, req wire.ResourceRequest, cur *wire.Resource) (*wire.Resource, error) {
	gen, pre := "", client.Precondition{}
	if cur != nil {
		gen = cur.Metadata.Generation
		pre = client.Precondition{Generation: gen, UID: cur.Metadata.UID}
	}
	p, err := c.Prepare(ctx, req, gen)
	if err != nil {
		return nil, err
	}
	return c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, pre)
}

// Update applies a new spec to res.
func (e *Env) Update(ctx context.Context, c *client.Client, res *wire.Resource, spec any) (*wire.Resource, error) {
	return e.Apply(ctx, c, e.RequestIn(res.Metadata.Space, res.Form.FormRef, res.Metadata.Name, spec), res)
}

// Addr is the exact address of a resource.
func Addr(res *wire.Resource) client.Address {
	return client.Address{Space: res.Metadata.Space, Ref: res.Form.FormRef, Name: res.Metadata.Name}
}

// Delete deletes res fenced on its generation, waiting out an operation.
func (e *Env) Delete(ctx context.Context, c *client.Client, res *wire.Resource) error {
	return c.DeleteAndWait(ctx, Addr(res), client.Precondition{Generation: res.Metadata.Generation, UID: res.Metadata.UID})
}

// Raw is an HTTP answer as it came.
type Raw struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a raw request (path under the API base when it starts with
// "/resources", "/forms", …; absolute paths when it starts with "/.well-known"
// or "/apis") with the token, the headers and the body.
func (e *Env) Do(ctx context.Context, token, method, path string, headers map[string]string, body []byte) (*Raw, error) {
	if !strings.HasPrefix(path, "/apis/") && !strings.HasPrefix(path, "/.well-known/") {
		path = e.Lane.APIBase + path
	}
	req, err := http.NewRequestWithContext(ctx, method, e.Endpoint+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", wire.ContentTypeJSON)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxBodyBytes))
	if err != nil {
		return nil, err
	}
	return &Raw{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Envelope decodes an error answer and checks it against the taxonomy.
func (r *Raw) Envelope() (wire.ErrorBody, error) {
	if r.Status >= 200 && r.Status < 300 {
		return wire.ErrorBody{}, fmt.Errorf("answered HTTP %d (success) instead of an error: %s", r.Status, abbreviate(r.Body))
	}
	var env wire.ErrorEnvelope
	if err := json.Unmarshal(r.Body, &env); err != nil {
		return wire.ErrorBody{}, fmt.Errorf("HTTP %d body is not an error envelope: %s", r.Status, abbreviate(r.Body))
	}
	if err := wire.CheckEnvelope(r.Status, env.Error); err != nil {
		return env.Error, fmt.Errorf("protocol-invalid error answer: %w", err)
	}
	return env.Error, nil
}

// ExpectCode checks a raw answer is the error envelope for code.
func (r *Raw) ExpectCode(code wire.Code) error {
	body, err := r.Envelope()
	if err != nil {
		return err
	}
	if body.Code != code {
		return fmt.Errorf("answered %s (HTTP %d: %s), want %s", body.Code, r.Status, body.Message, code)
	}
	return nil
}

// ExpectCode checks a client error is the host's refusal with code.
func ExpectCode(err error, code wire.Code) error {
	if err == nil {
		return fmt.Errorf("the host accepted it; want %s", code)
	}
	var we *wire.Error
	if !errors.As(err, &we) {
		return fmt.Errorf("want refusal %s, got %v", code, err)
	}
	if we.Code != code {
		return fmt.Errorf("refused with %s (%s), want %s", we.Code, we.Message, code)
	}
	return nil
}

func abbreviate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ResourcePath is the raw path of a resource (two group segments).
func ResourcePath(ref form.FormRef, name, suffix string) string {
	return "/resources/" + ref.APIVersion + "/" + ref.Kind + "/" + name + suffix
}

// ExactQuery is the exact query of a space and ref.
func ExactQuery(space string, ref form.FormRef) string {
	q := make([]string, 0, 5)
	for _, kv := range [][2]string{{"space", space}, {"group", ref.APIVersion}, {"kind", ref.Kind}, {"definitionVersion", ref.DefinitionVersion}, {"schemaDigest", ref.SchemaDigest}} {
		q = append(q, kv[0]+"="+queryEscape(kv[1]))
	}
	return "?" + strings.Join(q, "&")
}

func queryEscape(s string) string { return url.QueryEscape(s) }

func withToken(o client.Options, token string) client.Options {
	o.Token = token
	return o
}
