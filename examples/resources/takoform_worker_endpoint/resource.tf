# A worker serving one version of the code in ../../src (a bundle and a
# version are revisions: their names derive from content and owner).
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

resource "takoform_worker_deployment" "app" {
  name     = "hello"
  worker   = takoform_module_worker.app.name
  versions = [{ worker_version = takoform_worker_version.app.name, weight = 10000 }]
}

# The host assigns the address; attachments need a deployment serving the
# handler they call, hence depends_on.
resource "takoform_worker_endpoint" "example" {
  name       = "hello"
  worker     = takoform_module_worker.app.name
  depends_on = [takoform_worker_deployment.app]
}

output "url" {
  value = takoform_worker_endpoint.example.url
}
