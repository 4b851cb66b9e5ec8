# The durable identity of a worker app; code reaches it through bundles and
# versions, traffic through a deployment.
resource "takoform_module_worker" "example" {
  name = "hello"
}
