# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_sqlite_migration_application.example
  identity = {
    space = "staging"
    name  = "notes-schema"
  }
}
