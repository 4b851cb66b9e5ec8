resource "takoform_edge_kv_namespace" "example" {
  name = "cache"
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_edge_kv_namespace" "example" {
  name = takoform_edge_kv_namespace.example.name
}

output "uid" {
  value = data.takoform_edge_kv_namespace.example.uid
}
