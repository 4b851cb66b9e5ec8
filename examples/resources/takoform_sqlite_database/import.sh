# NAME: the resource "app-db" in the provider's space.
tofu import takoform_sqlite_database.example app-db

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_sqlite_database.example 'staging/app-db'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_sqlite_database.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"SQLiteDatabase","name":"app-db","schemaDigest":"sha256:7804c732a65e4cb49fc2a5404ac58cf91d05fc835f7e33cdce291758b207a8ce","space":"staging"}'
