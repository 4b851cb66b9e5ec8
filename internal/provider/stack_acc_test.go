package provider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/hosttest"
)

// workerSource is a real ES module exporting the three handlers the stack
// uses; variant changes the bytes (a new revision) without changing what
// it exports.
func workerSource(variant string) string {
	return `import { greet } from "./lib.js";

export default {
  async fetch(request, env, ctx) {
    return new Response(greet(env.GREETING) + " ` + variant + `");
  },
  async scheduled(controller, env, ctx) {
    await env.CACHE.put("last-run", String(controller.scheduledTime));
  },
  async queue(batch, env, ctx) {
    for (const message of batch.messages) message.ack();
  },
};
`
}

const libSource = `export function greet(name) {
  return "hello, " + name;
}
`

const authSource = `export default {
  async fetch(request, env, ctx) {
    return new Response("authorised", { status: 200 });
  },
};
`

// moduleDir writes the app's and the auth service's modules into a fresh
// temporary directory.
func moduleDir(t *testing.T, variant string) string {
	dir := t.TempDir()
	writeModules(t, dir, variant)
	return dir
}

func writeModules(t *testing.T, dir, variant string) {
	t.Helper()
	for name, src := range map[string]string{"worker.js": workerSource(variant), "lib.js": libSource, "auth.js": authSource} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stack is the knobs of the worker-app configuration every Edge test
// drives: a ModuleWorker with a bundle uploaded from local module files, a
// version binding KV, bucket, SQLite, a queue producer and a service, a
// deployment, and the four attachments.
type stack struct {
	dir          string // module files (moduleDir)
	retention    int    // jobs queue message_retention_seconds
	delay        int    // jobs queue delivery_delay_seconds; <0 omits it
	batchSize    int    // consumer max_batch_size
	batchTimeout int    // consumer max_batch_timeout_seconds
	concurrency  int    // consumer max_concurrency
	retries      int    // consumer max_retries
	retryDelay   int    // consumer retry_delay_seconds
	noDLQ        bool   // the consumer drops failed messages (no dead_letter_queue)
	cron         string
	hostname     string
	consumerOf   string // "jobs" or "other": the queue the consumer drains
	noKV         bool   // omit the KV namespace and its binding
	keepKV       bool   // with noKV: keep the namespace resource, drop only the binding
	versions     string // the app deployment's versions list; "" = the derived version at weight 10000
	queueTimeout string // jobs queue update_timeout, when set
	authManifest string // declare the auth bundle by this committed manifest digest instead of local files
	extra        string // appended HCL
}

func defaultStack(t *testing.T) stack {
	return stack{dir: moduleDir(t, "v1"), retention: 86400, delay: -1, batchSize: 10, batchTimeout: 5,
		concurrency: 4, retries: 3, retryDelay: 10, cron: "*/5 * * * *", hostname: "app.example.com", consumerOf: "jobs"}
}

// hcl renders the stack (without the provider block) in the order a real
// configuration is written; attachments wait for the deployment.
func (s stack) hcl() string {
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	f(`
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_module_worker" "auth" {
  name = "auth"
}
`)
	if !s.noKV || s.keepKV {
		f(`
resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}
`)
	}
	f(`
resource "takoform_edge_object_bucket" "assets" {
  name = "assets"
}

resource "takoform_sqlite_database" "db" {
  name = "db"
}

resource "takoform_at_least_once_queue" "jobs" {
  name                      = "jobs"
  message_retention_seconds = %d
`, s.retention)
	if s.delay >= 0 {
		f("  delivery_delay_seconds    = %d\n", s.delay)
	}
	if s.queueTimeout != "" {
		f("  update_timeout            = %q\n", s.queueTimeout)
	}
	f(`}

resource "takoform_at_least_once_queue" "other" {
  name                      = "other"
  message_retention_seconds = 3600
}

resource "takoform_at_least_once_queue" "dlq" {
  name                      = "jobs-dlq"
  message_retention_seconds = 1209600
  delivery_delay_seconds    = 30
}

%[1]s

resource "takoform_worker_version" "auth" {
  name     = "auth-version-1"
  worker   = takoform_module_worker.auth.name
  bundle   = takoform_worker_bundle.auth.name
  handlers = ["fetch"]
}

resource "takoform_worker_deployment" "auth" {
  name   = "auth"
  worker = takoform_module_worker.auth.name
  versions = [
    { worker_version = takoform_worker_version.auth.name, weight = 10000 },
  ]
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules = [
    { name = "worker.js", content_file = %[2]q },
    { name = "lib.js", content_file = %[3]q, content_type = "application/javascript+module" },
  ]
  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch", "scheduled", "queue"]
  vars_json      = jsonencode({ GREETING = "world", LIMITS = { burst = 3, ratio = 0.5 } })
  required_sensitive_vars = ["API_KEY"]
`, s.authBundle(), filepath.Join(s.dir, "worker.js"), filepath.Join(s.dir, "lib.js"))
	if !s.noKV {
		f("  kv_bindings             = [{ name = \"CACHE\", target_name = takoform_edge_kv_namespace.cache.name }]\n")
	}
	f(`  bucket_bindings         = [{ name = "ASSETS", target_name = takoform_edge_object_bucket.assets.name }]
  sqlite_bindings         = [{ name = "DB", target_name = takoform_sqlite_database.db.name }]
  queue_producer_bindings = [{ name = "JOBS", target_name = takoform_at_least_once_queue.jobs.name }]
  service_bindings        = [{ name = "AUTH", target_name = takoform_module_worker.auth.name }]
  depends_on              = [takoform_worker_deployment.auth]
  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_deployment" "app" {
  name     = "app"
  worker   = takoform_module_worker.app.name
  versions = %[6]s
}

resource "takoform_worker_endpoint" "app" {
  name       = "app"
  worker     = takoform_module_worker.app.name
  depends_on = [takoform_worker_deployment.app]
}

resource "takoform_worker_cron_trigger" "nightly" {
  name       = "nightly"
  worker     = takoform_module_worker.app.name
  cron       = %[1]q
  depends_on = [takoform_worker_deployment.app]
}

resource "takoform_worker_custom_domain" "www" {
  name       = "www"
  worker     = takoform_module_worker.app.name
  hostname   = %[2]q
  depends_on = [takoform_worker_deployment.app]
}

resource "takoform_queue_consumer" "jobs" {
  name                      = "jobs"
  queue                     = takoform_at_least_once_queue.%[3]s.name
  worker                    = takoform_module_worker.app.name
%[7]s  max_batch_size            = %[4]d
  max_batch_timeout_seconds = %[5]d
  max_concurrency           = %[8]d
  max_retries               = %[9]d
  retry_delay_seconds       = %[10]d
  depends_on                = [takoform_worker_deployment.app]
}
`, s.cron, s.hostname, s.consumerOf, s.batchSize, s.batchTimeout, s.deploymentVersions(), s.deadLetter(), s.concurrency, s.retries, s.retryDelay)
	b.WriteString(s.extra)
	return b.String()
}

// hostClient is a Go client of h as the test credential.
func hostClient(t *testing.T, h *hosttest.Host) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// edgeRef is the exact FormRef of an Edge kind in the built-in family.
func edgeRef(t *testing.T, kind string) form.FormRef {
	t.Helper()
	reg := edgeRegistry(t)
	for _, ts := range reg.Types {
		if ts.DefaultCreate.Kind == kind {
			return ts.DefaultCreate
		}
	}
	t.Fatalf("no Edge type creates %s", kind)
	return form.FormRef{}
}

// checkReady reads a resource through the Go client and requires its Ready
// condition to be True.
func checkReady(t *testing.T, h *hosttest.Host, space, kind, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		res, err := hostClient(t, h).Read(context.Background(), client.Address{Space: space, Ref: edgeRef(t, kind), Name: name})
		if err != nil {
			return err
		}
		for _, c := range res.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return nil
			}
		}
		return fmt.Errorf("%s %s is not Ready: %+v", kind, name, res.Status.Conditions)
	}
}

// authBundle is the auth service's bundle with a pinned name, declared by
// local files or, with authManifest, by the committed manifest digest.
func (s stack) authBundle() string {
	if s.authManifest != "" {
		return fmt.Sprintf(`resource "takoform_worker_bundle" "auth" {
  name            = "auth-bundle-1"
  manifest_digest = %q
}`, s.authManifest)
	}
	return fmt.Sprintf(`resource "takoform_worker_bundle" "auth" {
  name        = "auth-bundle-1"
  main_module = "auth.js"
  modules = [
    { name = "auth.js", content_file = %q },
  ]
}`, filepath.Join(s.dir, "auth.js"))
}

// authManifestDigest is the manifest digest of the auth service's bundle,
// built from the same bytes by the artifact package.
func authManifestDigest(t *testing.T) string {
	t.Helper()
	m, _, err := artifact.Build("auth.js", []artifact.ModuleFile{{Name: "auth.js", Data: []byte(authSource)}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := artifact.Digest(m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (s stack) deploymentVersions() string {
	if s.versions != "" {
		return s.versions
	}
	return weighted("takoform_worker_version.app", 10000)
}

func itoa(i int) string { return fmt.Sprint(i) }

// checkGone verifies through the Go client that every resource the last
// state held is gone from the host.
func checkGone(t *testing.T, h *hosttest.Host, space string) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		for addr, rs := range st.RootModule().Resources {
			a := rs.Primary.Attributes
			ref := form.FormRef{APIVersion: a["form_api_version"], Kind: a["form_kind"], DefinitionVersion: a["form_definition_version"], SchemaDigest: a["form_schema_digest"]}
			_, err := refClient(t, h, ref).Read(context.Background(), client.Address{Space: space, Ref: ref, Name: a["name"]})
			if !client.IsNotFound(err) {
				return fmt.Errorf("%s is still on the host after destroy (read: %v)", addr, err)
			}
		}
		return nil
	}
}

func (s stack) deadLetter() string {
	if s.noDLQ {
		return ""
	}
	return "  dead_letter_queue         = takoform_at_least_once_queue.dlq.name\n"
}
