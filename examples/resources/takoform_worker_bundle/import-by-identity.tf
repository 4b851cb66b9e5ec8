# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_worker_bundle.example
  identity = {
    space = "staging"
    name  = "bundle-0123456789ab-cdef01234567"
  }
}
