resource "takoform_sqlite_database" "example" {
  name = "app-db"
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_sqlite_database" "example" {
  name = takoform_sqlite_database.example.name
}

output "uid" {
  value = data.takoform_sqlite_database.example.uid
}
