package provider_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// mutationLog sits in front of the host and records every resource PUT and
// DELETE as "METHOD Kind/name STATUS"; after each one it reads the
// ModuleWorker app and records any moment it is not Ready=True.
type mutationLog struct {
	next    http.Handler
	observe func() string // "" while the worker is Ready=True
	mu      sync.Mutex
	steps   []string
	notRdy  []string
}

func (l *mutationLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusWriter{ResponseWriter: w, status: 200}
	l.next.ServeHTTP(rec, r)
	prefix := wire.V1alpha3.APIBase + "/resources/"
	if (r.Method != http.MethodPut && r.Method != http.MethodDelete) || !strings.HasPrefix(r.URL.Path, prefix) {
		return
	}
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/") // group, version, kind, name
	if len(segs) != 4 {
		return
	}
	line := fmt.Sprintf("%s %s/%s %d", r.Method, segs[2], segs[3], rec.status)
	seen := l.observe()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, line)
	if seen != "" {
		l.notRdy = append(l.notRdy, line+": "+seen)
	}
}

func (l *mutationLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps, l.notRdy = nil, nil
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// TestAccEdgeRollout rolls a new revision out through the deployment:
// the module source changes, the bundle and version get new derived names
// (create_before_destroy), and the apply runs new bundle → new version →
// deployment update → old version delete → old bundle delete with the
// ModuleWorker Ready=True throughout.
func TestAccEdgeRollout(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	c := hostClient(t, h)
	workerRef := edgeRef(t, "ModuleWorker")
	log := &mutationLog{next: h.Server, observe: func() string {
		res, err := c.Read(context.Background(), client.Address{Space: "prod", Ref: workerRef, Name: "app"})
		if err != nil {
			if client.IsNotFound(err) {
				return ""
			}
			return err.Error()
		}
		for _, cd := range res.Status.Conditions {
			if cd.Type == "Ready" && cd.Status != "True" {
				return fmt.Sprintf("Ready=%s %s", cd.Status, cd.Reason)
			}
		}
		return ""
	}}
	front := httptest.NewServer(log)
	defer front.Close()
	proxied := &hosttest.Host{URL: front.URL}

	s := defaultStack(t)
	cfg1 := providerBlock(proxied, "prod") + s.hcl()
	dir2 := t.TempDir()
	writeModules(t, dir2, "v2")
	s.dir = dir2
	cfg2 := providerBlock(proxied, "prod") + s.hcl()

	var old map[string]string
	remember := func(st *terraform.State) error {
		old = map[string]string{}
		for _, a := range []string{"takoform_worker_bundle.app", "takoform_worker_version.app"} {
			old[a] = st.RootModule().Resources[a].Primary.Attributes["name"]
		}
		return nil
	}
	timeline := func(st *terraform.State) error {
		name := func(a string) string { return st.RootModule().Resources[a].Primary.Attributes["name"] }
		nb, nv := name("takoform_worker_bundle.app"), name("takoform_worker_version.app")
		if nb == old["takoform_worker_bundle.app"] || nv == old["takoform_worker_version.app"] {
			return fmt.Errorf("the revisions kept their names: bundle %s, version %s", nb, nv)
		}
		want := []string{
			"PUT WorkerBundle/" + nb + " 201",
			"PUT WorkerVersion/" + nv + " 201",
			"PUT WorkerDeployment/app 200",
			"DELETE WorkerVersion/" + old["takoform_worker_version.app"] + " 204",
			"DELETE WorkerBundle/" + old["takoform_worker_bundle.app"] + " 204",
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		t.Logf("rollout timeline:\n  %s", strings.Join(log.steps, "\n  "))
		if strings.Join(log.steps, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("timeline:\n  %s\nwant:\n  %s", strings.Join(log.steps, "\n  "), strings.Join(want, "\n  "))
		}
		if len(log.notRdy) > 0 {
			return fmt.Errorf("the worker was observed not ready: %s", strings.Join(log.notRdy, "; "))
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg1, Check: resource.ComposeAggregateTestCheckFunc(remember, checkReady(t, h, "prod", "ModuleWorker", "app"))},
			{
				PreConfig: log.reset,
				Config:    cfg2,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("takoform_worker_bundle.app", plancheck.ResourceActionCreateBeforeDestroy),
						plancheck.ExpectResourceAction("takoform_worker_version.app", plancheck.ResourceActionCreateBeforeDestroy),
						plancheck.ExpectResourceAction("takoform_worker_deployment.app", plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(timeline,
					checkReady(t, h, "prod", "ModuleWorker", "app"),
					resource.TestCheckResourceAttr("takoform_worker_deployment.app", "ready", "true")),
			},
		},
	})
}
