package client

import (
	"errors"
	"testing"
)

// TestDiscoveryOriginMismatchIsTyped: a document advertising the API at
// another origin than the endpoint (localhost vs 127.0.0.1) is an
// *OriginMismatchError inside the *ProtocolError, naming both origins; an
// other member off the API's origin stays a plain protocol violation.
func TestDiscoveryOriginMismatchIsTyped(t *testing.T) {
	doc := discoveryDoc("https://localhost:18443", nil)
	_, err := ValidateDiscovery("https://127.0.0.1:18443", doc)
	var pe *ProtocolError
	var om *OriginMismatchError
	if !errors.As(err, &pe) || !errors.As(err, &om) {
		t.Fatalf("err %v (%T); want an *OriginMismatchError in a *ProtocolError", err, err)
	}
	if om.Member != "api" || om.Advertised != "https://localhost:18443" || om.Configured != "https://127.0.0.1:18443" || om.URL != "https://localhost:18443"+lanePath {
		t.Fatalf("%+v; want api, advertised https://localhost:18443, configured https://127.0.0.1:18443", *om)
	}
	const o = "https://127.0.0.1:18443"
	doc = discoveryDoc(o, func(d map[string]any) {
		endpoints(d)["artifacts"] = "https://localhost:18443" + lanePath + "/artifacts"
	})
	if _, err := ValidateDiscovery(o, doc); err == nil || errors.As(err, &om) {
		t.Fatalf("artifacts off the api's origin: err %v; want a plain protocol violation", err)
	}
}
