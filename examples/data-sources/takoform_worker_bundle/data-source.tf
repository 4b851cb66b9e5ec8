resource "takoform_module_worker" "app" {
  name = "hello"
}

# The code: each module file is read and hashed at plan time, uploaded when
# the host lacks it, and committed as one manifest. The name derives from
# the content and revision_owner, so changed code plans a new bundle.
resource "takoform_worker_bundle" "example" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules = [
    { name = "worker.js", content_file = "${path.module}/../../src/worker.js" },
  ]

  lifecycle {
    create_before_destroy = true
  }
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_worker_bundle" "example" {
  name = takoform_worker_bundle.example.name
}

output "uid" {
  value = data.takoform_worker_bundle.example.uid
}
