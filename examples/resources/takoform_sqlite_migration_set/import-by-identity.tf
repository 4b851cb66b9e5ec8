# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_sqlite_migration_set.example
  identity = {
    space = "staging"
    name  = "sqlite-migration-set-0123456789ab-cdef01234567"
  }
}
