# The durable identity of a worker app; code reaches it through bundles and
# versions, traffic through a deployment.
resource "takoform_module_worker" "example" {
  name = "hello"
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_module_worker" "example" {
  name = takoform_module_worker.example.name
}

output "uid" {
  value = data.takoform_module_worker.example.uid
}
