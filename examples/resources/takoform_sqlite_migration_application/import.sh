# NAME: the resource "notes-schema" in the provider's space.
tofu import takoform_sqlite_migration_application.example notes-schema

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_sqlite_migration_application.example 'staging/notes-schema'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_sqlite_migration_application.example '{"apiVersion":"edge.forms.takoform.com/v1beta1","definitionVersion":"0.1.0","kind":"SQLiteMigrationApplication","name":"notes-schema","schemaDigest":"sha256:e4b10fa5f169adff4e6178c449ae2f4bdb1153bf820b90d1f6fd5c53559cd129","space":"staging"}'
