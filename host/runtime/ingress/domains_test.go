package ingress_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestCustomDomainsNeedOwnership: a WorkerCustomDomain outside .localhost
// is routed only for a tenant the operator's list grants it, and a
// hostname two tenants claim is routed for neither (spec/runtime-v1.md
// §10.6); a .localhost custom domain needs no grant.
func TestCustomDomainsNeedOwnership(t *testing.T) {
	domains, err := runtime.ParseDomains(strings.NewReader("tenant-a *.example.com\n"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log, Runtime: func(c *runtime.Config) { c.Domains = domains }})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(front.Close)
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	domain := func(c *client.Client, label, hostname string) {
		t.Helper()
		w := deployWorkerAs(t, e, c, label)
		if _, err := e.Create(ctx, c, "WorkerCustomDomain", e.Name("domain"), map[string]any{"worker": conformance.Rel("ModuleWorker", w), "hostname": hostname}); err != nil {
			t.Fatalf("create the custom domain %s: %v", hostname, err)
		}
	}
	domain(e.A1, "granted", "app.example.com")
	domain(e.A1, "local", "app.dev.localhost")
	domain(e.A1, "ungranted", "app.example.org")
	waitFor(t, front, "app.example.com", "granted")
	waitFor(t, front, "app.dev.localhost", "local")
	if status, _, _ := get(t, front, "app.example.org", "/"); status != http.StatusNotFound {
		t.Errorf("a custom domain no grant covers answered %d, want the host's 404", status)
	}
	domain(e.B, "rival", "app.example.com")
	for i := 0; ; i++ {
		status, _, _ := get(t, front, "app.example.com", "/")
		if status == http.StatusNotFound {
			break
		}
		if i == 600 {
			t.Fatalf("a hostname claimed by two tenants still answers %d, want the host's 404", status)
		}
		sleep()
	}
}

// deployWorkerAs deploys workerSource(label) as the tenant of c, with one
// version and deployment and no endpoint, and returns the worker's name.
func deployWorkerAs(t *testing.T, e *conformance.Env, c *client.Client, label string) string {
	t.Helper()
	worker, _, _ := deployApp(t, e, c, workerSource(label), nil, false)
	return worker
}
