# Quickstart: a worker app deployed to a Takoform host, in the Edge family
# edge.forms.takoform.com/v1beta1 (the provider creates there when the host
# serves it; handbook/moving-to-v1beta1.md moves a v1alpha1 app).
#
# The provider reads its host from the environment:
#   TAKOFORM_ENDPOINT  host origin, e.g. http://127.0.0.1:8080
#   TAKOFORM_SPACE     the space every resource lives in
#   TAKOFORM_TOKEN     bearer token
# `make demo` starts a host and sets all three, then requests the `url`
# output through the host's worker ingress: the worker counts visits in KV
# and in its SQLite database and answers e.g. "quickstart v1: visit 3 (kv 3,
# sql 3)".

terraform {
  required_providers {
    takoform = {
      source = "registry.opentofu.org/takoform/takoform"
    }
  }
}

provider "takoform" {}

# The worker: a stable name the deployment, endpoint, cron trigger and queue
# consumer attach to. Code reaches it through revisions (bundle → version).
resource "takoform_module_worker" "app" {
  name = "quickstart"
}

# Storage the code uses through bindings (src/worker.js reads them from
# `env`); each keeps its data across rollouts and loses it when destroyed.
resource "takoform_edge_kv_namespace" "cache" {
  name = "quickstart-cache"
}

resource "takoform_edge_object_bucket" "media" {
  name = "quickstart-media"
}

resource "takoform_sqlite_database" "db" {
  name = "quickstart-db"
}

# The database's schema, from migration files the host applies in order,
# each once, recording each in the database's ledger (worker code cannot
# change the schema). A new file appended to the list makes a new set;
# the application then applies only what the ledger lacks.
resource "takoform_sqlite_migration_set" "schema" {
  revision_owner = takoform_sqlite_database.db.name
  files = [
    { path = "0001_counters.sql", media_type = "application/sql", content_file = "${path.module}/migrations/0001_counters.sql" },
  ]

  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_sqlite_migration_application" "schema" {
  name          = "quickstart-schema"
  database      = takoform_sqlite_database.db.name
  migration_set = takoform_sqlite_migration_set.schema.name
}

resource "takoform_at_least_once_queue" "events" {
  name                      = "quickstart-events"
  message_retention_seconds = 86400
}

# ---------------------------------------------------------------------------
# Rollout pattern.
#
# A bundle (the code) and a version (code + handlers + bindings) are
# immutable revisions. Neither sets `name`: the provider derives it from the
# revision's content and `revision_owner`, so changed code or bindings plan a
# NEW revision beside the old one instead of editing it in place.
# `create_before_destroy` makes OpenTofu create the new bundle and version
# first, then update the deployment to point at the new version, and only
# then delete the old revisions, which nothing references any more. The
# worker keeps serving throughout.
# ---------------------------------------------------------------------------

# The code: every module file is read and hashed at plan time, uploaded if
# the host lacks it, and committed as one manifest.
resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules = [
    { name = "worker.js", content_file = "${path.module}/src/worker.js" },
    { name = "render.js", content_file = "${path.module}/src/render.js" },
  ]

  lifecycle {
    create_before_destroy = true
  }
}

# Static files served with the worker: a path the bundle lists is answered
# from it before the worker runs (GET and HEAD); any other path reaches the
# worker. Like the code bundle, a changed file makes a new revision.
resource "takoform_static_asset_bundle" "site" {
  revision_owner = takoform_module_worker.app.name
  files = [
    { path = "about.html", media_type = "text/html", content_file = "${path.module}/public/about.html" },
  ]

  lifecycle {
    create_before_destroy = true
  }
}

# A runnable revision: the bundle, the handlers its default export has, the
# bindings its code reads from `env`, and its static assets.
resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch", "scheduled", "queue"]
  assets = {
    bundle             = takoform_static_asset_bundle.site.name
    run_worker_first   = false
    not_found_handling = "none"
  }

  kv_bindings             = [{ name = "CACHE", target_name = takoform_edge_kv_namespace.cache.name }]
  bucket_bindings         = [{ name = "MEDIA", target_name = takoform_edge_object_bucket.media.name }]
  sqlite_bindings         = [{ name = "DB", target_name = takoform_sqlite_database.db.name }]
  queue_producer_bindings = [{ name = "EVENTS", target_name = takoform_at_least_once_queue.events.name }]

  lifecycle {
    create_before_destroy = true
  }
}

# What the worker runs: all traffic (weight 10000 of 10000) on the current
# version. A canary would list two versions, e.g. 9000 and 1000. The
# deployment waits for the schema, so no request meets a missing table.
resource "takoform_worker_deployment" "app" {
  name   = "quickstart"
  worker = takoform_module_worker.app.name
  versions = [
    { worker_version = takoform_worker_version.app.name, weight = 10000 },
  ]
  depends_on = [takoform_sqlite_migration_application.schema]
}

# Attachments need a deployment serving the handler they call (fetch,
# scheduled, queue), hence depends_on.
resource "takoform_worker_endpoint" "app" {
  name       = "quickstart"
  worker     = takoform_module_worker.app.name
  depends_on = [takoform_worker_deployment.app]
}

resource "takoform_worker_cron_trigger" "cleanup" {
  name       = "quickstart-cleanup"
  worker     = takoform_module_worker.app.name
  cron       = "0 3 * * *"
  depends_on = [takoform_worker_deployment.app]
}

resource "takoform_worker_custom_domain" "www" {
  name       = "quickstart-www"
  worker     = takoform_module_worker.app.name
  hostname   = "quickstart.example.com"
  depends_on = [takoform_worker_deployment.app]
}

resource "takoform_queue_consumer" "events" {
  name                      = "quickstart-events"
  queue                     = takoform_at_least_once_queue.events.name
  worker                    = takoform_module_worker.app.name
  max_batch_size            = 10
  max_batch_timeout_seconds = 5
  max_concurrency           = 2
  max_retries               = 3
  retry_delay_seconds       = 30
  depends_on                = [takoform_worker_deployment.app]
}

output "url" {
  description = "Where the worker is served."
  value       = takoform_worker_endpoint.app.url
}
