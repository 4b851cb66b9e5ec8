resource "takoform_edge_object_bucket" "example" {
  name = "media"
}
