resource "takoform_sqlite_database" "example" {
  name = "app-db"
}
