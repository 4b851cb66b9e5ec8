# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_worker_custom_domain.example
  identity = {
    space = "staging"
    name  = "www"
  }
}
