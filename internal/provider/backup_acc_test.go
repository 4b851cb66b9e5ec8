package provider_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccBackupRestorePlansEmpty applies the worker stack, backs the
// host's file up while other creates commit, stops the host, serves the
// copy, and finds the existing OpenTofu state planning empty against it
// (every resource, UID, generation and bundle blob came through); every
// create acknowledged before the backup began is in the copy. The provider
// reaches whichever host serves through TAKOFORM_ENDPOINT.
func TestAccBackupRestorePlansEmpty(t *testing.T) {
	const space = "prod"
	h := accHost(t, hosttest.Options{})
	t.Setenv("TAKOFORM_ENDPOINT", h.URL)
	cfg := fmt.Sprintf(`
terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}

provider "takoform" {
  token = %q
  space = %q
}
`, hosttest.TokenA1, space) + defaultStack(t).hcl()
	restored := h
	var acked []string
	backup := func() {
		c, ref := hostClient(t, h), edgeRef(t, "EdgeKVNamespace")
		var mu sync.Mutex
		var done []string
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					name := fmt.Sprintf("load-%d-%d", w, i)
					if _, err := applyKV(c, ref, "load", name); err != nil {
						t.Errorf("create under load: %v", err)
						return
					}
					mu.Lock()
					done = append(done, name)
					mu.Unlock()
				}
			})
		}
		for n := 0; n < 20; time.Sleep(10 * time.Millisecond) { // some load before the backup starts
			mu.Lock()
			n = len(done)
			mu.Unlock()
		}
		mu.Lock()
		acked = append([]string(nil), done...)
		mu.Unlock()
		out := filepath.Join(t.TempDir(), "backup.db")
		err := sqlite.Backup(context.Background(), h.Path, out)
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		h.Stop()
		restored = accHost(t, hosttest.Options{Path: out})
		t.Setenv("TAKOFORM_ENDPOINT", restored.URL)
		rc := hostClient(t, restored)
		for _, name := range acked {
			if _, err := rc.Read(context.Background(), client.Address{Space: "load", Ref: ref, Name: name}); err != nil {
				t.Fatalf("%s, acknowledged before the backup, is not in the copy: %v", name, err)
			}
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg},
			{PreConfig: backup, Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
		CheckDestroy: func(st *terraform.State) error { return checkGone(t, restored, space)(st) },
	})
	t.Logf("%d creates acknowledged before the backup began, all in the copy", len(acked))
}
