package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/internal/hosttest"
)

// canary is a second pinned version of the app beside the derived one.
const canary = `
resource "takoform_worker_version" "canary" {
  name      = "app-canary"
  worker    = takoform_module_worker.app.name
  bundle    = takoform_worker_bundle.app.name
  handlers  = ["fetch", "scheduled", "queue"]
  vars_json = jsonencode({ GREETING = "canary" })
  lifecycle {
    create_before_destroy = true
  }
}
`

// deployment renders the app's deployment over the given version
// references and weights (pairs), replacing the stack's own.
func weighted(pairs ...any) string {
	out := "[\n"
	for i := 0; i < len(pairs); i += 2 {
		out += fmt.Sprintf("    { worker_version = %s.name, weight = %d },\n", pairs[i], pairs[i+1])
	}
	return out + "  ]"
}

// TestAccEdgeUpdateInPlace changes every mutable field in place — queue
// retention and delay, consumer batch settings, the cron schedule,
// deployment versions and weights — each planned as an Update and
// converging to an empty plan.
func TestAccEdgeUpdateInPlace(t *testing.T) {
	t.Parallel() // runs beside the waiting ones
	h := accHost(t, hosttest.Options{})
	base := defaultStack(t)
	cfg := func(s stack) string { return providerBlock(h, "prod") + s.hcl() }
	update := func(s stack, addrs ...string) resource.TestStep {
		var checks []plancheck.PlanCheck
		for _, a := range addrs {
			checks = append(checks, plancheck.ExpectResourceAction(a, plancheck.ResourceActionUpdate))
		}
		return resource.TestStep{Config: cfg(s), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks,
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}}
	}
	s := base
	var rev string
	steps := []resource.TestStep{{Config: cfg(s), Check: resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "delivery_delay_seconds", "0")}}

	s.retention, s.delay = 172800, 120
	steps = append(steps, update(s, "takoform_at_least_once_queue.jobs"))
	steps[len(steps)-1].Check = resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "message_retention_seconds", "172800"),
		resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "delivery_delay_seconds", "120"),
		resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "generation", "2"),
		func(st *terraform.State) error {
			rev = st.RootModule().Resources["takoform_at_least_once_queue.jobs"].Primary.Attributes["revision"]
			return nil
		})

	// a provider-side input only: applied in place without a host call
	s.queueTimeout = "5m"
	steps = append(steps, update(s, "takoform_at_least_once_queue.jobs"))
	steps[len(steps)-1].Check = resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "update_timeout", "5m"),
		resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "generation", "2"),
		func(st *terraform.State) error {
			if got := st.RootModule().Resources["takoform_at_least_once_queue.jobs"].Primary.Attributes["revision"]; got != rev {
				return fmt.Errorf("a timeout change moved the revision %s → %s", rev, got)
			}
			return nil
		})

	s.batchSize, s.batchTimeout, s.concurrency, s.retries, s.retryDelay = 50, 30, 16, 7, 120
	steps = append(steps, update(s, "takoform_queue_consumer.jobs"))
	steps[len(steps)-1].Check = resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttr("takoform_queue_consumer.jobs", "max_batch_size", "50"),
		resource.TestCheckResourceAttr("takoform_queue_consumer.jobs", "max_retries", "7"),
		resource.TestCheckResourceAttr("takoform_queue_consumer.jobs", "retry_delay_seconds", "120"))

	// the optional dead-letter queue leaves (absence: failed messages are dropped) and returns
	s.noDLQ = true
	steps = append(steps, update(s, "takoform_queue_consumer.jobs"))
	steps[len(steps)-1].Check = resource.TestCheckNoResourceAttr("takoform_queue_consumer.jobs", "dead_letter_queue")
	s.noDLQ = false
	steps = append(steps, update(s, "takoform_queue_consumer.jobs"))

	s.cron = "0 3 * * 1-5"
	steps = append(steps, update(s, "takoform_worker_cron_trigger.nightly"))
	steps[len(steps)-1].Check = resource.TestCheckResourceAttr("takoform_worker_cron_trigger.nightly", "cron", "0 3 * * 1-5")

	s.versions = weighted("takoform_worker_version.app", 9000, "takoform_worker_version.canary", 1000)
	s.extra = canary
	steps = append(steps, update(s, "takoform_worker_deployment.app"))
	steps[len(steps)-1].Check = resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttr("takoform_worker_deployment.app", "versions.#", "2"),
		resource.TestCheckResourceAttr("takoform_worker_deployment.app", "versions.1.weight", "1000"),
		checkReady(t, h, "prod", "ModuleWorker", "app"))

	s.versions = weighted("takoform_worker_version.app", 5000, "takoform_worker_version.canary", 5000)
	steps = append(steps, update(s, "takoform_worker_deployment.app"))

	s.versions, s.extra = "", ""
	steps = append(steps, update(s, "takoform_worker_deployment.app"))
	steps[len(steps)-1].ConfigPlanChecks.PreApply = append(steps[len(steps)-1].ConfigPlanChecks.PreApply,
		plancheck.ExpectResourceAction("takoform_worker_version.canary", plancheck.ResourceActionDestroy))

	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories(edgeRegistry(t)), Steps: steps})
}

// TestAccEdgeReplace changes immutable fields of non-revision Forms: the
// custom domain's hostname (given in a non-canonical spelling the host
// canonicalises) and the queue a consumer drains; each is planned as a
// replacement and converges.
func TestAccEdgeReplace(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	s := defaultStack(t)
	cfg := func(s stack) string { return providerBlock(h, "prod") + s.hcl() }
	replace := func(s stack, addr string) resource.TestStep {
		return resource.TestStep{Config: cfg(s), ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}}
	}
	steps := []resource.TestStep{{Config: cfg(s)}}
	s.hostname = "API.Example.com."
	steps = append(steps, replace(s, "takoform_worker_custom_domain.www"))
	steps[len(steps)-1].Check = resource.TestCheckResourceAttr("takoform_worker_custom_domain.www", "hostname", "API.Example.com.")
	s.consumerOf = "other"
	steps = append(steps, replace(s, "takoform_queue_consumer.jobs"))
	steps[len(steps)-1].Check = resource.TestCheckResourceAttr("takoform_queue_consumer.jobs", "queue", "other")
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories(edgeRegistry(t)), Steps: steps})
}
