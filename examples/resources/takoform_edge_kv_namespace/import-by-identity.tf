# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_edge_kv_namespace.example
  identity = {
    space = "staging"
    name  = "cache"
  }
}
