package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/takoform/takoform/wire"
)

// TestClientSpeaksItsLane: a client told lane v1beta1 fetches that lane's
// discovery document, checks it names that lane, and sends every route
// under that lane's API base with the lane in its User-Agent; a client
// told nothing speaks v1alpha3 (spec/lane-v1beta1.md §2.1, §2.2).
func TestClientSpeaksItsLane(t *testing.T) {
	for _, l := range wire.Lanes {
		var paths []string
		var ua string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			paths, ua = append(paths, r.URL.Path), r.Header.Get("User-Agent")
			if r.URL.Path != l.DiscoveryPath {
				http.Error(w, "no", http.StatusTeapot)
				return
			}
			base := "http://" + r.Host + l.APIBase
			doc := `{"api_versions":["` + l.Name + `"],"features":{"service_forms":true,"exact_form_ref":true,"optimistic_concurrency":true,"idempotent_lifecycle":true,"operations":true,"artifact_upload":true,"support_profiles":true},"endpoints":{"api":"` + base + `","support":"` + base + `/support"}}`
			_, _ = w.Write([]byte(doc))
		}))
		opts := Options{Lane: l}
		if l == wire.DefaultLane {
			opts = Options{}
		}
		c, err := New(context.Background(), srv.URL, opts)
		if err != nil {
			srv.Close()
			t.Fatalf("lane %s: %v", l.Name, err)
		}
		_, _ = c.SupportForms(context.Background())
		srv.Close()
		if len(paths) != 2 || paths[0] != l.DiscoveryPath || paths[1] != l.APIBase+"/support/forms" {
			t.Errorf("lane %s: requests %v", l.Name, paths)
		}
		if ua != DefaultUserAgent+" ("+l.Name+")" {
			t.Errorf("lane %s: User-Agent %q", l.Name, ua)
		}
	}
	// A document of the other lane is refused.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "http://" + r.Host + wire.V1alpha3.APIBase
		_, _ = w.Write([]byte(`{"api_versions":["` + wire.V1alpha3.Name + `"],"features":{"service_forms":true,"exact_form_ref":true,"optimistic_concurrency":true,"idempotent_lifecycle":true,"operations":true,"artifact_upload":true,"support_profiles":true},"endpoints":{"api":"` + base + `"}}`))
	}))
	defer srv.Close()
	_, err := New(context.Background(), srv.URL, Options{Lane: wire.V1beta1})
	if err == nil || !strings.Contains(err.Error(), "negotiate lane forms.takoform.com/v1beta1") || !strings.Contains(err.Error(), "api_versions") {
		t.Fatalf("a v1alpha3 document for a v1beta1 client: %v", err)
	}
}
