package provider_test

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccEdgeAsync drives the worker app against a host that answers
// every mutation 202 with an operation (provisioning takes longer than
// the synchronous budget): create, update and destroy converge through
// operation polling.
func TestAccEdgeAsync(t *testing.T) {
	t.Parallel() // mostly waits on the host's provisioning delay: runs beside the others
	h := accHost(t, hosttest.Options{ProvisioningDelay: 2 * time.Second, SyncBudget: 500 * time.Millisecond})
	s := defaultStack(t)
	cfg1 := providerBlock(h, "prod") + s.hcl()
	s.retention, s.cron = 7200, "15 4 * * *"
	cfg2 := providerBlock(h, "prod") + s.hcl()
	// a create and an update whose deadlines pass before the host settles:
	// recorded as pending, settled by the next refresh
	s.retention = 10800
	s.extra = `
resource "takoform_edge_kv_namespace" "late" {
  name           = "late"
  create_timeout = "1s"
}
`
	s.queueTimeout = "1s"
	cfg3 := providerBlock(h, "prod") + s.hcl()
	// pending again, and changed once more before any refresh can settle it:
	// the update first waits for the pending operation, then applies
	s.retention = 14400
	cfg5 := providerBlock(h, "prod") + s.hcl()
	s.retention, s.queueTimeout = 21600, ""
	cfg6 := providerBlock(h, "prod") + s.hcl()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg1, Check: resource.ComposeAggregateTestCheckFunc(
				checkReady(t, h, "prod", "ModuleWorker", "app"),
				resource.TestCheckResourceAttr("takoform_worker_endpoint.app", "ready", "true"),
				resource.TestCheckNoResourceAttr("takoform_worker_endpoint.app", "pending_operation_id"),
			)},
			{Config: cfg2, ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("takoform_at_least_once_queue.jobs", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("takoform_worker_cron_trigger.nightly", plancheck.ResourceActionUpdate),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			}, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "message_retention_seconds", "7200"),
				resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "generation", "2"),
				resource.TestCheckResourceAttr("takoform_worker_cron_trigger.nightly", "cron", "15 4 * * *"),
			)},
			{Config: cfg3, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttrSet("takoform_edge_kv_namespace.late", "pending_operation_id"),
				resource.TestCheckNoResourceAttr("takoform_edge_kv_namespace.late", "uid"),
				resource.TestCheckNoResourceAttr("takoform_edge_kv_namespace.late", "outputs_json"),
				resource.TestCheckResourceAttrSet("takoform_at_least_once_queue.jobs", "pending_operation_id"),
				resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "generation", "2"),
			)},
			{PreConfig: func() { time.Sleep(3 * time.Second) }, Config: cfg3,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr("takoform_edge_kv_namespace.late", "pending_operation_id"),
					resource.TestCheckResourceAttrSet("takoform_edge_kv_namespace.late", "uid"),
					resource.TestCheckResourceAttr("takoform_edge_kv_namespace.late", "ready", "true"),
					resource.TestCheckNoResourceAttr("takoform_at_least_once_queue.jobs", "pending_operation_id"),
					resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "generation", "3"),
					resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "message_retention_seconds", "10800"),
				)},
			{Config: cfg5, Check: resource.TestCheckResourceAttrSet("takoform_at_least_once_queue.jobs", "pending_operation_id")},
			{Config: cfg6, ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("takoform_at_least_once_queue.jobs", plancheck.ResourceActionUpdate)},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			}, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckNoResourceAttr("takoform_at_least_once_queue.jobs", "pending_operation_id"),
				resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "generation", "5"),
				resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "message_retention_seconds", "21600"),
			)},
		},
		CheckDestroy: checkGone(t, h, "prod"),
	})
}
