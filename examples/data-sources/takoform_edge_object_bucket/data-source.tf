resource "takoform_edge_object_bucket" "example" {
  name = "media"
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_edge_object_bucket" "example" {
  name = takoform_edge_object_bucket.example.name
}

output "uid" {
  value = data.takoform_edge_object_bucket.example.uid
}
