package client

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// origin is a scheme, host and effective port (RFC 6454).
type origin struct {
	scheme   string // "http" or "https"
	host     string // hostname or IP literal, without brackets or port
	port     string // effective port in canonical decimal
	explicit bool   // the port was written out
}

func (o origin) String() string {
	h := o.host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if o.explicit {
		h += ":" + o.port
	}
	return o.scheme + "://" + h
}

// same compares scheme, host (ASCII case-insensitively) and effective port.
func (o origin) same(p origin) bool {
	return o.scheme == p.scheme && strings.EqualFold(o.host, p.host) && o.port == p.port
}

// ParseEndpoint checks a configured endpoint and returns its canonical
// origin "scheme://host[:port]" (spec/host-api-v1alpha3.md §2.1). The endpoint must be a bare
// origin: http or https, a host, an optional port 1..65535, and no path
// (not even "/"), query, fragment, userinfo or percent-encoding. Plain
// http is accepted only for a loopback host: 127.0.0.0/8, ::1 or
// localhost.
func ParseEndpoint(endpoint string) (string, error) {
	o, err := parseOrigin(endpoint)
	if err != nil {
		return "", err
	}
	return o.String(), nil
}

func parseOrigin(endpoint string) (origin, error) {
	shown := endpoint
	if i := strings.LastIndex(shown, "@"); i >= 0 {
		if j := strings.Index(shown, "://"); j >= 0 && j < i {
			shown = shown[:j+3] + "…@" + shown[i+1:] // never echo credentials
		}
	}
	bad := func(why string) (origin, error) {
		return origin{}, fmt.Errorf("takoform: endpoint %q: %s; want a bare origin scheme://host[:port]", shown, why)
	}
	for _, c := range []struct{ ch, what string }{{"@", "it carries userinfo"}, {"?", "it carries a query"}, {"#", "it carries a fragment"}, {"%", "it carries percent-encoding"}, {"\\", "it carries a backslash"}} {
		if strings.Contains(endpoint, c.ch) {
			return bad(c.what)
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return bad(err.Error())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("the scheme must be http or https")
	}
	if u.Opaque != "" || u.Host == "" {
		return bad("it is not an absolute URL with a host")
	}
	if u.Path != "" || u.RawPath != "" {
		return bad("it has a path (remove everything after the host and port, even a trailing /)")
	}
	o, err := originOf(u)
	if err != nil {
		return bad(err.Error())
	}
	if o.scheme == "http" && !loopback(o.host) {
		return bad("plain http is allowed only for a loopback host (127.0.0.0/8, ::1, localhost); use https")
	}
	return o, nil
}

// originOf extracts the origin of an absolute URL.
func originOf(u *url.URL) (origin, error) {
	o := origin{scheme: u.Scheme, host: u.Hostname()}
	if o.host == "" {
		return origin{}, errors.New("the host is empty")
	}
	if strings.HasSuffix(u.Host, ":") {
		return origin{}, errors.New("the port is empty")
	}
	switch p := u.Port(); {
	case p != "":
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return origin{}, fmt.Errorf("port %q is not in 1..65535", p)
		}
		o.port, o.explicit = strconv.Itoa(n), true
	case o.scheme == "https":
		o.port = "443"
	default:
		o.port = "80"
	}
	return o, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return false
	}
	if a == netip.IPv6Loopback() {
		return true
	}
	a = a.Unmap()
	return a.Is4() && a.As4()[0] == 127
}

// ValidateDiscovery checks a discovery document (host-discovery-v1alpha3,
// spec/host-api-v1alpha3.md §2.1) fetched from the configured endpoint (see ParseEndpoint):
// strict I-JSON, closed, no null member; api_versions exactly
// ["forms.takoform.com/v1alpha3"]; the seven wire.RequiredFeatures true and
// any other feature a boolean; endpoints.api present; every advertised
// non-issuer endpoint an absolute http(s) URL of the configured origin and
// of api's origin (scheme, host, effective port), with no userinfo, query,
// fragment or '%', and the exact lane path; oidc_issuer an absolute https
// URL without userinfo, query or fragment. It returns the decoded document
// or a *ProtocolError naming the first violation (an invalid endpoint is
// the plain error of ParseEndpoint).
func ValidateDiscovery(endpoint string, doc []byte) (*wire.Discovery, error) {
	return ValidateLaneDiscovery(endpoint, wire.DefaultLane, doc)
}

// ValidateLaneDiscovery is ValidateDiscovery for the discovery document
// of lane (spec/lane-v1beta1.md §2.1): api_versions exactly [lane.Name]
// and every endpoint under lane.APIBase.
func ValidateLaneDiscovery(endpoint string, lane wire.Lane, doc []byte) (*wire.Discovery, error) {
	o, err := parseOrigin(endpoint)
	if err != nil {
		return nil, err
	}
	d, err := checkDiscovery(o, lane, doc)
	if err != nil {
		return nil, &ProtocolError{Op: "discovery", Reason: "the discovery document is invalid", Err: err}
	}
	return d, nil
}

func checkDiscovery(o origin, lane wire.Lane, doc []byte) (*wire.Discovery, error) {
	var d wire.Discovery
	if err := ijson.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	tree, err := ijson.Decode(doc)
	if err != nil {
		return nil, err
	}
	if p, ok := firstNull(tree, ""); ok {
		return nil, fmt.Errorf("member %s is null", p)
	}
	if m := missingMembers(tree, "/api_versions", "/features", "/endpoints", "/endpoints/api"); len(m) > 0 {
		return nil, fmt.Errorf("required member %s is absent", m[0])
	}
	if len(d.APIVersions) != 1 || d.APIVersions[0] != lane.Name {
		return nil, fmt.Errorf("api_versions is %q; want exactly [%q]", d.APIVersions, lane.Name)
	}
	for _, f := range wire.RequiredFeatures {
		if v, ok := d.Features[f]; !ok || !v {
			return nil, fmt.Errorf("required feature %q is absent or false", f)
		}
	}
	api, err := checkEndpoint("api", d.Endpoints.API, lane.APIBase, o, nil)
	if err != nil {
		return nil, err
	}
	for _, e := range []struct{ name, value string }{
		{"artifacts", d.Endpoints.Artifacts}, {"operations", d.Endpoints.Operations}, {"support", d.Endpoints.Support},
	} {
		if _, present := lookup(tree, "/endpoints/"+e.name); !present {
			continue
		}
		if _, err := checkEndpoint(e.name, e.value, lane.APIBase+"/"+e.name, o, &api); err != nil {
			return nil, err
		}
	}
	if _, present := lookup(tree, "/endpoints/oidc_issuer"); present {
		if err := checkIssuer(d.Endpoints.OIDCIssuer); err != nil {
			return nil, err
		}
	}
	return &d, nil
}

// checkEndpoint checks one advertised non-issuer endpoint and returns its
// origin.
func checkEndpoint(member, raw, wantPath string, configured origin, api *origin) (origin, error) {
	bad := func(format string, args ...any) (origin, error) {
		return origin{}, fmt.Errorf("endpoints.%s %q: %s", member, raw, fmt.Sprintf(format, args...))
	}
	if !strings.HasPrefix(raw, "https://") && !strings.HasPrefix(raw, "http://") {
		return bad("not an absolute http(s) URL")
	}
	if strings.Contains(raw, "%") {
		return bad("carries '%%'; advertised endpoints carry no percent-encoding")
	}
	if strings.ContainsAny(raw, "?#") {
		return bad("carries a query or fragment")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("%v", err)
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return bad("carries userinfo")
	}
	p, err := originOf(u)
	if err != nil {
		return bad("%v", err)
	}
	if !p.same(configured) {
		if api == nil { // the host's own origin; a later member off it is the host's inconsistency
			return origin{}, &OriginMismatchError{Member: member, URL: raw, Advertised: p.String(), Configured: configured.String()}
		}
		return bad("origin %s is not the configured endpoint %s", p, configured)
	}
	if api != nil && !p.same(*api) {
		return bad("origin %s is not the api endpoint's origin %s", p, *api)
	}
	if got := u.EscapedPath(); got != wantPath {
		return bad("path %q is not the lane path %q", got, wantPath)
	}
	return p, nil
}

// OriginMismatchError is a discovery document whose advertised API
// endpoint (endpoints.<Member>, URL; Member is "api") lies at another origin than the endpoint the
// client was given: the host's public origin (host serve --public-url)
// and the client's endpoint name one host two ways (e.g. localhost and
// 127.0.0.1), and the client refuses to follow the advertised origin
// (spec/host-api-v1alpha3.md §2.1). Advertised and Configured are origins
// "scheme://host[:port]". It reaches callers wrapped in a *ProtocolError.
type OriginMismatchError struct {
	Member, URL            string
	Advertised, Configured string
}

func (e *OriginMismatchError) Error() string {
	return fmt.Sprintf("endpoints.%s %q: origin %s is not the configured endpoint %s", e.Member, e.URL, e.Advertised, e.Configured)
}

// checkIssuer checks endpoints.oidc_issuer: absolute https, no userinfo,
// query or fragment.
func checkIssuer(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case !strings.HasPrefix(raw, "https://") || err != nil || u.Host == "":
		return fmt.Errorf("endpoints.oidc_issuer %q is not an absolute https URL", raw)
	case u.User != nil || strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("endpoints.oidc_issuer %q carries userinfo, a query or a fragment", raw)
	}
	return nil
}
