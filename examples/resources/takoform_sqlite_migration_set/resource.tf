resource "takoform_sqlite_database" "app" {
  name = "notes"
}

# The ordered migrations of a database, committed as one MigrationBundle
# manifest: the list order is the migration order and every file is
# application/sql. A new migration is a new set (an appended entry), never an
# edit; the name derives from the manifest digest and revision_owner.
resource "takoform_sqlite_migration_set" "example" {
  revision_owner = takoform_sqlite_database.app.name
  files = [
    { path = "0001_create_notes.sql", media_type = "application/sql", content_file = "${path.module}/../../src/migrations/0001_create_notes.sql" },
    { path = "0002_note_created_at.sql", media_type = "application/sql", content_file = "${path.module}/../../src/migrations/0002_note_created_at.sql" },
  ]

  lifecycle {
    create_before_destroy = true
  }
}
