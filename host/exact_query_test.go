package host_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestExactQueryRefusals: the exact query's refusals on the read and
// forms routes, each with its code, host code and message; a query
// written other than plainly (an escaped key, an empty pair, another
// order) is still read.
func TestExactQueryRefusals(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	c, err := client.New(t.Context(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	ref := kvRequest(t, c, "q").Form.FormRef
	tail := "&group=" + url.QueryEscape(ref.APIVersion) + "&kind=" + ref.Kind + "&definitionVersion=" + ref.DefinitionVersion + "&schemaDigest=" + url.QueryEscape(ref.SchemaDigest)
	read := wire.V1alpha3.APIBase + "/resources/" + ref.APIVersion + "/" + ref.Kind + "/x?"
	forms := wire.V1alpha3.APIBase + "/forms?"
	for _, tc := range []struct {
		target, code, hostCode, message string
	}{
		{read + "space=%zz" + tail, "invalid_argument", "query_encoding", `the query string is not valid URL encoding: invalid URL escape "%zz"; percent-encode each value`},
		{forms + "space=s;x" + tail, "invalid_argument", "query_encoding", `the query string is not valid URL encoding: invalid semicolon separator in query; percent-encode each value`},
		{read + "space=s" + tail + "&x=1&packageDigest=p", "invalid_argument", "query_unknown_key", `query key(s) packageDigest, x are not part of the exact query (space, group, kind, definitionVersion, schemaDigest)`},
		{read + "space=s" + tail + "&kind=" + ref.Kind, "invalid_argument", "query_key_count", `query key kind must appear exactly once`},
		{forms + "space=s&space=s" + tail, "invalid_argument", "query_key_count", `query key space must appear exactly once`},
		{read + "space=s&group=g&kind=K&definitionVersion=1", "invalid_argument", "query_key_count", `query key schemaDigest must appear exactly once`},
		{read + "space=s&group=other.example%2Fv1&kind=" + ref.Kind + "&definitionVersion=1.0.0&schemaDigest=d", "invalid_argument", "",
			"the query names other.example/v1 " + ref.Kind + " but the path names " + ref.APIVersion + " " + ref.Kind + "; they must be equal"},
		{read + "sp%61ce=s" + tail, "resource_not_found", "", ref.Kind + ` "x" does not exist in space "s" under form ` + ref.String()},
		{read + "space=s&" + tail + "&", "resource_not_found", "", ref.Kind + ` "x" does not exist in space "s" under form ` + ref.String()},
		{read + tail[1:] + "&space=s", "resource_not_found", "", ref.Kind + ` "x" does not exist in space "s" under form ` + ref.String()},
	} {
		req, _ := http.NewRequest(http.MethodGet, h.URL+tc.target, nil)
		req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		e := envelopeOf(t, resp)
		resp.Body.Close()
		if string(e.Code) != tc.code || e.HostCode != tc.hostCode || e.Message != tc.message {
			t.Errorf("GET %s: %s %s %q; want %s %s %q", tc.target, e.Code, e.HostCode, e.Message, tc.code, tc.hostCode, tc.message)
		}
	}
}
