resource "takoform_module_worker" "app" {
  name = "hello"
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules        = [{ name = "worker.js", content_file = "${path.module}/../../src/worker.js" }]

  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}

# A runnable revision: the bundle, the handlers its default export carries,
# the bindings its code reads from env, and plain configuration.
resource "takoform_worker_version" "example" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch", "scheduled", "queue"]
  kv_bindings    = [{ name = "CACHE", target_name = takoform_edge_kv_namespace.cache.name }]
  vars_json      = jsonencode({ GREETING = "hello" })

  lifecycle {
    create_before_destroy = true
  }
}
