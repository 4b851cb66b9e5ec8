# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_worker_version.example
  identity = {
    space = "staging"
    name  = "version-0123456789ab-cdef01234567"
  }
}
