# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_at_least_once_queue.example
  identity = {
    space = "staging"
    name  = "jobs"
  }
}
