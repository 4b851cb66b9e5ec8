package secrets_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

func code(err error) wire.Code {
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return ""
}

// TestSecretRoute: the host's secret route (spec/runtime-v1.md §3.2) on
// a real host and SQLite store: absent from discovery; bearer tokens as
// the Host API (none: unauthenticated); a token reaches only its own
// tenant's workers (another tenant's worker is not found, and its list
// stays empty); bad spaces, names and groups are refused; answers never
// carry the value; a worker deleted and created again under its name
// inherits nothing.
func TestSecretRoute(t *testing.T) {
	keys, err := secrets.NewKeyring(newKey(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) {
		c.Secrets = &secrets.Service{Store: c.Store, Keys: keys}
	}})
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	w := client.Worker{Space: e.Space, Group: worker.APIVersion, Name: worker.Metadata.Name}
	value := "route-" + newText()

	resp, err := http.Get(h.URL + wire.V1alpha3.DiscoveryPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(doc), "secret") {
		t.Errorf("discovery names the secret route: %s", doc)
	}
	req, _ := http.NewRequest(http.MethodGet, h.URL+wire.SecretsBase+"/workers/"+worker.APIVersion+"/"+worker.Metadata.Name+"?space="+strings.ReplaceAll(e.Space, " ", "%20"), nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the route without a token: %v %v, want 401", resp.Status, err)
	}

	info, err := e.A1.SetSecret(ctx, w, "API_TOKEN", []byte(value))
	if err != nil || !info.Set || info.Name != "API_TOKEN" {
		t.Fatalf("SetSecret = %+v, %v", info, err)
	}
	l, err := e.A2.ListSecrets(ctx, w) // another principal of the tenant
	if err != nil || len(l.Secrets) != 1 || !l.Secrets[0].Set || l.Worker.UID != worker.Metadata.UID {
		t.Fatalf("ListSecrets = %+v, %v", l, err)
	}
	if _, err := e.B.SetSecret(ctx, w, "API_TOKEN", []byte("evil")); code(err) != wire.ResourceNotFound {
		t.Errorf("another tenant set a value on this worker: %v", err)
	}
	if _, err := e.B.ListSecrets(ctx, w); code(err) != wire.ResourceNotFound {
		t.Errorf("another tenant listed this worker: %v", err)
	}
	if _, err := e.B.UnsetSecret(ctx, w, "API_TOKEN"); code(err) != wire.ResourceNotFound {
		t.Errorf("another tenant unset this worker's value: %v", err)
	}
	for what, c := range map[string]struct {
		w    client.Worker
		name string
		want wire.Code
	}{
		"a lower-case name": {w, "api_token", wire.InvalidArgument},
		"another group":     {client.Worker{Space: w.Space, Group: "example.com/v1", Name: w.Name}, "API_TOKEN", wire.InvalidArgument},
		"an unknown worker": {client.Worker{Space: w.Space, Group: w.Group, Name: "nobody"}, "API_TOKEN", wire.ResourceNotFound},
		"another space":     {client.Worker{Space: "elsewhere", Group: w.Group, Name: w.Name}, "API_TOKEN", wire.ResourceNotFound},
	} {
		if _, err := e.A1.SetSecret(ctx, c.w, c.name, []byte("x")); code(err) != c.want || (err != nil && strings.Contains(err.Error(), "x\"")) {
			t.Errorf("%s: %v, want %s", what, err, c.want)
		}
	}
	l, err = e.A1.ListSecrets(ctx, w)
	if err != nil || len(l.Secrets) != 1 {
		t.Fatalf("after the refusals: %+v, %v", l, err)
	}

	if err := e.Delete(ctx, e.A1, worker); err != nil {
		t.Fatal(err)
	}
	again, err := e.Create(ctx, e.A1, "ModuleWorker", worker.Metadata.Name, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	l, err = e.A1.ListSecrets(ctx, w)
	if err != nil || len(l.Secrets) != 0 || l.Worker.UID != again.Metadata.UID {
		t.Errorf("the worker created again under its name lists %+v, %v; want no value", l, err)
	}
}

func newText() string { return rand.Text() }
