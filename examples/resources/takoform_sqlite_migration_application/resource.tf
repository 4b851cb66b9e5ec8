resource "takoform_sqlite_database" "app" {
  name = "notes"
}

resource "takoform_sqlite_migration_set" "app" {
  revision_owner = takoform_sqlite_database.app.name
  files = [
    { path = "0001_create_notes.sql", media_type = "application/sql", content_file = "${path.module}/../../src/migrations/0001_create_notes.sql" },
  ]

  lifecycle {
    create_before_destroy = true
  }
}

# Applies a migration set to a database: the host appends the set's
# unapplied suffix to the database's ledger. Every attribute forces
# replacement; deleting it never runs a down-migration.
resource "takoform_sqlite_migration_application" "example" {
  name          = "notes-schema"
  database      = takoform_sqlite_database.app.name
  migration_set = takoform_sqlite_migration_set.app.name
}
