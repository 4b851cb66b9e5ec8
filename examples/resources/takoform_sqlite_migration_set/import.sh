# NAME: the resource "sqlite-migration-set-0123456789ab-cdef01234567" in the provider's space.
tofu import takoform_sqlite_migration_set.example sqlite-migration-set-0123456789ab-cdef01234567

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_sqlite_migration_set.example 'staging/sqlite-migration-set-0123456789ab-cdef01234567'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_sqlite_migration_set.example '{"apiVersion":"edge.forms.takoform.com/v1beta1","definitionVersion":"0.1.0","kind":"SQLiteMigrationSet","name":"sqlite-migration-set-0123456789ab-cdef01234567","schemaDigest":"sha256:28fcfe2f462577431db724a0b49838b5b770a26279ef6782e42b3bf0c23ea277","space":"staging"}'
