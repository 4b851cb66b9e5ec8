package provider_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestAccInterruptedApplyConverges (decision 0017 rules 6–7, spec/host-api-v1alpha3.md §4
// "Client resumption"): the host holds every mutation longer than its
// synchronous budget, and both creates' deadlines (create_timeout 1s) pass
// while it does. The apply records pending_operation_id for each.
//   - late: the next apply, while the operation still runs, plans nothing
//     (absence is not deletion); once the host commits, the next apply
//     settles state from the operation with an empty plan — one create
//     request in all, one resource.
//   - cancelled: its operation is cancelled between runs; the next refresh
//     lets the exact read decide (absent), so the apply creates it again.
func TestAccInterruptedApplyConverges(t *testing.T) {
	t.Parallel() // mostly waits on the host's provisioning delay: runs beside the others
	h := accHost(t, hosttest.Options{ProvisioningDelay: 6 * time.Second, SyncBudget: 200 * time.Millisecond})
	log := &refLog{next: h.Server}
	front := httptest.NewServer(log)
	t.Cleanup(front.Close)
	cfg := providerBlock(&hosttest.Host{URL: front.URL}, "prod") + `
resource "takoform_edge_kv_namespace" "late" {
  name           = "late"
  create_timeout = "1s"
}

resource "takoform_edge_kv_namespace" "cancelled" {
  name           = "cancelled"
  create_timeout = "1s"
}
`
	const late, cancelled = "takoform_edge_kv_namespace.late", "takoform_edge_kv_namespace.cancelled"
	c, ref := hostClient(t, h), edgeRef(t, "EdgeKVNamespace")
	ops := map[string]string{}
	pending := func(addr string) resource.TestCheckFunc {
		return func(st *terraform.State) error {
			a := st.RootModule().Resources[addr].Primary.Attributes
			switch {
			case a["pending_operation_id"] == "":
				return fmt.Errorf("%s records no pending operation", addr)
			case ops[addr] != "" && ops[addr] != a["pending_operation_id"]:
				return fmt.Errorf("%s's pending operation changed from %s to %s", addr, ops[addr], a["pending_operation_id"])
			case a["uid"] != "":
				return fmt.Errorf("%s records uid %s before the host committed it", addr, a["uid"])
			}
			ops[addr] = a["pending_operation_id"]
			return nil
		}
	}
	settled := func(name string) resource.TestCheckFunc {
		return func(st *terraform.State) error {
			res, err := c.Read(context.Background(), client.Address{Space: "prod", Ref: ref, Name: name})
			if err != nil {
				return err
			}
			a := st.RootModule().Resources["takoform_edge_kv_namespace."+name].Primary.Attributes
			if a["uid"] != res.Metadata.UID || a["pending_operation_id"] != "" || a["ready"] != "true" {
				return fmt.Errorf("%s: state uid %q pending %q ready %q; the host holds uid %s", name, a["uid"], a["pending_operation_id"], a["ready"], res.Metadata.UID)
			}
			return nil
		}
	}
	creates := func(name string, want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			if n := log.count("PUT " + name + "@"); n != want {
				return fmt.Errorf("the provider sent %d create requests for %s; want %d", n, name, want)
			}
			return nil
		}
	}
	waitCommitted := func(names ...string) func() {
		return func() {
			for _, name := range names {
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
					_, err := c.Read(context.Background(), client.Address{Space: "prod", Ref: ref, Name: name})
					if err == nil {
						break
					}
					if !client.IsNotFound(err) || time.Now().After(deadline) {
						t.Fatalf("waiting for %s: %v", name, err)
					}
				}
			}
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg, Check: resource.ComposeAggregateTestCheckFunc(pending(late), pending(cancelled))},
			{
				PreConfig: func() {
					op, err := c.CancelOperation(context.Background(), ops[cancelled])
					if err != nil || !op.Done || op.Error == nil || op.Error.Code != wire.OperationCancelled {
						t.Fatalf("cancel %s: %+v, %v", ops[cancelled], op, err)
					}
					delete(ops, cancelled)
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(late, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(cancelled, plancheck.ResourceActionCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(pending(late), pending(cancelled), creates("late", 1)),
			},
			{PreConfig: waitCommitted("late", "cancelled"), Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            resource.ComposeAggregateTestCheckFunc(settled("late"), settled("cancelled"), creates("late", 1), creates("cancelled", 2)),
			},
		},
		CheckDestroy: checkGone(t, h, "prod"),
	})
}

// count is how many recorded requests start with prefix.
func (l *refLog) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.seen {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}
