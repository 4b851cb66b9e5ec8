// Package client is the public Go client of the Takoform Host API lanes
// forms.takoform.com/v1alpha3 and forms.takoform.com/v1beta1 (host API
// spec/host-api-v1alpha3.md §2–§5, §8.1; spec/lane-v1beta1.md §2, §3.3).
//
// A Client speaks one lane, Options.Lane (default wire.DefaultLane,
// v1alpha3). It negotiates that lane once (New, spec/host-api-v1alpha3.md §2.1), then speaks every
// route of the endpoint table (spec/host-api-v1alpha3.md §3.3) with one keep-alive http.Client.
// It never trusts an answer it cannot check:
//
//   - every identity is validated before any HTTP call (SpaceID with
//     spaceid.Validate, names, FormRefs, fences);
//   - every body is decoded strictly (ijson), every error answer must be a
//     valid envelope of the closed taxonomy (a *wire.Error), and anything
//     else is a *ProtocolError, never "absent" (IsNotFound);
//   - every resource answer must echo the exact identity that was asked
//     for, with the ETag equal to the quoted revision (spec/host-api-v1alpha3.md §5.1);
//   - mutations carry deterministic idempotency keys (IdempotencyKey,
//     spec/host-api-v1alpha3.md §3.5); only complete retryable envelopes are retried, and a
//     transport failure on a mutation is reported as an unknown outcome
//     (*TransportError) rather than retried.
//
// Transport failures are not retried for reads either (a conservative
// choice): the lane allows automatic retries only for the four retryable
// envelope codes (spec/host-api-v1alpha3.md §3.5), and a caller that wants more can re-issue a
// read. The replays left to net/http are its re-send of a GET or HEAD
// whose reused keep-alive connection turned out to be closed, and of a
// request the server provably never received; it never re-sends a
// mutation the host may have processed (the Idempotency-Key travels under
// its lowercase name so net/http does not deem the request replayable).
//
// Response Content-Type is not inspected: every body is decoded strictly
// instead, which refuses anything that is not the expected JSON.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/takoform/takoform/wire"
)

// Defaults of Options.
const (
	DefaultUserAgent           = "takoform-go-client" // followed by " (<lane name>)"
	DefaultDiscoveryTimeout    = 10 * time.Second
	DefaultMaxIdleConnsPerHost = 64
)

// Options configure a Client. The zero value of every member selects its
// default.
type Options struct {
	// Token is the bearer credential sent as "Authorization: Bearer <token>"
	// on every request, discovery included (spec/host-api-v1alpha3.md §2.3). Empty sends no
	// Authorization header (the host then answers unauthenticated).
	Token string
	// HTTPClient, when set, is copied and used instead of the client's own;
	// its CheckRedirect is replaced by one that refuses every redirect.
	HTTPClient *http.Client
	// UserAgent is sent as User-Agent; default DefaultUserAgent and the
	// lane in parentheses ("takoform-go-client (forms.takoform.com/v1alpha3)").
	UserAgent string
	// MaxResponseBytes bounds every response body; default wire.MaxBodyBytes.
	MaxResponseBytes int64
	// MaxIdleConnsPerHost tunes the client's own transport for parallel use;
	// default DefaultMaxIdleConnsPerHost. Ignored with HTTPClient.
	MaxIdleConnsPerHost int
	// Retry is the automatic retry policy for retryable envelopes.
	Retry RetryPolicy
	// CACertificatePEM (one or more PEM CA certificates) or
	// CACertificateFile (a file of them) makes https trust exactly those
	// CAs instead of the system roots: a host with a certificate from a
	// private CA. At most one of the two; neither may be combined with
	// HTTPClient (configure its transport's RootCAs instead). Decision
	// spec/decisions/0008-deployable-host.md.
	CACertificatePEM  []byte
	CACertificateFile string
	// Poll is the operation polling policy.
	Poll PollPolicy
	// DiscoveryTimeout is the negotiation deadline, separate from any
	// resource operation deadline; default DefaultDiscoveryTimeout.
	DiscoveryTimeout time.Duration
	// KeyScope, when set, is bound into every resource mutation's
	// idempotency key (DeriveKey(IdempotencyKey(…), KeyScope)): the same
	// request repeats its key within one scope (a retry replays) but not
	// across scopes, so a later run does not replay an earlier run's
	// recorded refusal. The provider scopes each logical mutation instead
	// (WithKeyScope; spec/decisions/0006-idempotency-keys-per-mutation.md).
	KeyScope string
	// Lane is the lane the client negotiates and speaks; the zero value is
	// wire.DefaultLane (forms.takoform.com/v1alpha3). A host serving both
	// lanes answers each under its own API base (spec/lane-v1beta1.md §2.5).
	Lane wire.Lane
}

// Client speaks one negotiated lane to one origin. It is safe for
// concurrent use.
type Client struct {
	origin    origin
	lane      wire.Lane
	base      string // origin.String(), what every request URL starts with
	bearer    string // the Authorization value, "" without a token
	discovery wire.Discovery
	hc        *http.Client
	token     string
	userAgent string
	maxBody   int64
	keyScope  string
	retry     RetryPolicy
	poll      PollPolicy
	jitter    func() float64 // uniform in [0,1)
}

// New validates endpoint (a bare origin, see ParseEndpoint), negotiates the
// lane with GET /.well-known/takoform/v1alpha3 under opts.DiscoveryTimeout
// (spec/host-api-v1alpha3.md §2.1) and returns a Client bound to that origin. Errors: a plain
// error for an invalid endpoint or token, a *wire.Error if discovery is
// refused with a valid envelope, a *ProtocolError if the discovery answer or
// document is invalid, a *TransportError if the host cannot be reached.
func New(ctx context.Context, endpoint string, opts Options) (*Client, error) {
	c, err := newClient(endpoint, opts)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, c.discoveryTimeout(opts))
	defer cancel()
	if err := c.negotiate(dctx); err != nil {
		return nil, fmt.Errorf("takoform: negotiate lane %s at %s: %w", c.lane.Name, c.origin, err)
	}
	return c, nil
}

// newClient builds a Client without negotiating.
func newClient(endpoint string, opts Options) (*Client, error) {
	o, err := parseOrigin(endpoint)
	if err != nil {
		return nil, err
	}
	if strings.ContainsFunc(opts.Token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, errors.New("takoform: the token contains whitespace or control characters")
	}
	c := &Client{
		origin:    o,
		lane:      opts.Lane,
		token:     opts.Token,
		userAgent: opts.UserAgent,
		maxBody:   opts.MaxResponseBytes,
		keyScope:  opts.KeyScope,
		retry:     opts.Retry.withDefaults(),
		poll:      opts.Poll.withDefaults(),
		jitter:    rand.Float64,
	}
	if c.lane == (wire.Lane{}) {
		c.lane = wire.DefaultLane
	} else if l, ok := wire.LaneNamed(c.lane.Name); !ok || l != c.lane {
		return nil, fmt.Errorf("takoform: lane %q is not one this client speaks; use one of wire.Lanes (%s)", c.lane.Name, strings.Join(wire.LaneNames(), ", "))
	}
	c.base = o.String()
	if c.token != "" {
		c.bearer = "Bearer " + c.token
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent + " (" + c.lane.Name + ")"
	}
	if c.maxBody <= 0 {
		c.maxBody = wire.MaxBodyBytes
	}
	roots, err := opts.rootCAs()
	if err != nil {
		return nil, err
	}
	switch {
	case opts.HTTPClient != nil && roots != nil:
		return nil, errors.New("takoform: a CA certificate option and HTTPClient were both given; set RootCAs on the HTTPClient's transport instead")
	case opts.HTTPClient != nil:
		hc := *opts.HTTPClient
		c.hc = &hc
	default:
		t := newTransport(opts.MaxIdleConnsPerHost)
		if roots != nil {
			t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		}
		c.hc = &http.Client{Transport: t}
	}
	c.hc.CheckRedirect = refuseRedirect
	return c, nil
}

func (c *Client) discoveryTimeout(opts Options) time.Duration {
	if opts.DiscoveryTimeout > 0 {
		return opts.DiscoveryTimeout
	}
	return DefaultDiscoveryTimeout
}

// newTransport clones the default transport with a connection pool sized
// for parallel use of one origin.
func newTransport(perHost int) *http.Transport {
	if perHost <= 0 {
		perHost = DefaultMaxIdleConnsPerHost
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = perHost
	t.MaxIdleConns = max(t.MaxIdleConns, perHost)
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// Lane returns the lane the client speaks (Options.Lane, or
// wire.DefaultLane).
func (c *Client) Lane() wire.Lane { return c.lane }

// Endpoint returns the negotiated origin, scheme://host[:port].
func (c *Client) Endpoint() string { return c.origin.String() }

// Discovery returns the validated discovery document.
func (c *Client) Discovery() wire.Discovery {
	d := c.discovery
	d.APIVersions = append([]string(nil), d.APIVersions...)
	d.Features = make(map[string]bool, len(c.discovery.Features))
	for k, v := range c.discovery.Features {
		d.Features[k] = v
	}
	return d
}

// redirectError is what CheckRedirect answers: redirects are refused so the
// bearer token never leaves the negotiated origin (spec/host-api-v1alpha3.md §2.1).
type redirectError struct {
	status   int
	location string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("HTTP %d redirect to %s refused", e.status, e.location)
}

func refuseRedirect(req *http.Request, _ []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	return &redirectError{status: status, location: req.URL.Redacted()}
}

// request is one HTTP exchange of a route.
type request struct {
	op       string // route name, e.g. "read"
	method   string
	path     string // escaped path below the origin
	query    string // encoded query, "" for none
	header   http.Header
	body     []byte
	ctype    string
	mutation bool   // may change host state: a lost answer leaves the outcome unknown
	key      string // Idempotency-Key, "" for none
}

// idempotencyHeader is the Idempotency-Key header's lowercase name
// (roundTrip).
var idempotencyHeader = strings.ToLower(wire.HeaderIdempotency)

func (r *request) url(base string) string {
	u := base + r.path
	if r.query != "" {
		u += "?" + r.query
	}
	return u
}

// response is a complete HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// send performs r, retrying only complete retryable envelopes (spec/host-api-v1alpha3.md
// §3.5). A 2xx answer is returned as is; any other answer becomes a
// *wire.Error or a *ProtocolError.
func (c *Client) send(ctx context.Context, r *request) (*response, error) {
	w := &waits{ctx: ctx, delay: c.retry.delay, jitter: c.jitter}
	var last error // the host's own answer says why we stopped
	resp, ok := repeat(ctx, w, c.retry.Attempts, func() (*response, error) {
		resp, err := c.roundTrip(ctx, r)
		if err != nil {
			last = err
			return nil, backoff.Permanent(err)
		}
		if resp.status >= 200 && resp.status < 300 {
			return resp, nil
		}
		herr, retryable, err := c.hostError(r, resp)
		if err != nil {
			last = err
			return nil, backoff.Permanent(err)
		}
		last, w.retryAfter = herr, resp.header.Get("Retry-After")
		if !retryable {
			return nil, backoff.Permanent(herr)
		}
		return nil, herr
	})
	if !ok {
		return nil, last
	}
	return resp, nil
}

// roundTrip performs one attempt and reads the whole (bounded) body.
func (c *Client) roundTrip(ctx context.Context, r *request) (*response, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	u := r.url(c.base)
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("takoform: %s: build request: %w", r.op, err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	// The fixed headers share one backing array (one allocation, not one
	// per header); each value is its own one-element slice.
	vals := [...]string{c.bearer, c.userAgent, wire.ContentTypeJSON, r.ctype, r.key}
	h := vals[:]
	set := func(name string, i int) { req.Header[name] = h[i : i+1 : i+1] }
	if c.bearer != "" {
		set("Authorization", 0)
	}
	set("User-Agent", 1)
	set("Accept", 2)
	if r.ctype != "" {
		set("Content-Type", 3)
	}
	if r.key != "" {
		// Stored under the lowercase name on purpose: net/http treats a
		// request whose header map holds the canonical "Idempotency-Key"
		// as replayable and silently re-sends it when a reused keep-alive
		// connection fails after the request was written. A mutation
		// whose answer was lost must surface as an unknown outcome instead
		// (spec/host-api-v1alpha3.md §3.5). Header names are case-insensitive on the wire.
		set(idempotencyHeader, 4)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var rd *redirectError
		if errors.As(err, &rd) {
			return nil, c.protocolError(r, rd.status, "the host answered with a redirect to "+rd.location+"; redirects are refused so the token stays with the negotiated origin", nil)
		}
		return nil, &TransportError{Op: r.op, Method: r.method, URL: u, Mutation: r.mutation, IdempotencyKey: r.key, Err: err}
	}
	defer resp.Body.Close()
	data, err := readAll(io.LimitReader(resp.Body, c.maxBody+1), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, &TransportError{Op: r.op, Method: r.method, URL: u, Mutation: r.mutation, IdempotencyKey: r.key, Err: fmt.Errorf("read the answer: %w", err)}
	}
	if int64(len(data)) > c.maxBody {
		return nil, c.protocolError(r, resp.StatusCode, fmt.Sprintf("the answer body exceeds the %d-byte limit", c.maxBody), nil)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// readAll is io.ReadAll of r into a buffer first sized for the declared
// Content-Length n (when 0 < n <= limit; one byte more, for the read
// that finds the end), so an answer is read without regrowing the buffer.
// 0 is taken for unknown, as a hand-built http.Response leaves it.
func readAll(r io.Reader, n, limit int64) ([]byte, error) {
	size := int64(512) // io.ReadAll's start
	if n > 0 && n <= limit {
		size = n + 1
	}
	b := make([]byte, 0, size)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // more capacity, as io.ReadAll adds it
		}
	}
}

// expectStatus refuses a 2xx status the route never answers.
func (c *Client) expectStatus(r *request, resp *response, allowed ...int) error {
	for _, s := range allowed {
		if resp.status == s {
			return nil
		}
	}
	return c.protocolError(r, resp.status, fmt.Sprintf("HTTP %d is not an answer of %s (want one of %v)", resp.status, r.op, allowed), nil)
}

// expectEmpty refuses a body on an answer that must be empty (204, blob PUT).
func (c *Client) expectEmpty(r *request, resp *response) error {
	if len(resp.body) != 0 {
		return c.protocolError(r, resp.status, fmt.Sprintf("HTTP %d must have an empty body; it carried %d bytes", resp.status, len(resp.body)), nil)
	}
	return nil
}

// negotiate fetches and validates the discovery document (spec/host-api-v1alpha3.md §2.1).
func (c *Client) negotiate(ctx context.Context) error {
	r := &request{op: "discovery", method: http.MethodGet, path: c.lane.DiscoveryPath}
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	if err := c.expectStatus(r, resp, http.StatusOK); err != nil {
		return err
	}
	d, err := checkDiscovery(c.origin, c.lane, resp.body)
	if err != nil {
		return c.protocolError(r, resp.status, "the discovery document is invalid", err)
	}
	c.discovery = *d
	return nil
}
