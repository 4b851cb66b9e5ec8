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

resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch", "scheduled", "queue"]

  lifecycle {
    create_before_destroy = true
  }
}

# All traffic (10000 of 10000 basis points) on one version; a canary lists
# two versions, e.g. 9000 and 1000.
resource "takoform_worker_deployment" "example" {
  name   = "hello"
  worker = takoform_module_worker.app.name
  versions = [
    { worker_version = takoform_worker_version.app.name, weight = 10000 },
  ]
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_worker_deployment" "example" {
  name = takoform_worker_deployment.example.name
}

output "uid" {
  value = data.takoform_worker_deployment.example.uid
}
