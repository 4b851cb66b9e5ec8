# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_sqlite_database.example
  identity = {
    space = "staging"
    name  = "app-db"
  }
}
