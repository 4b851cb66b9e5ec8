# NAME: the resource "media" in the provider's space.
tofu import takoform_edge_object_bucket.example media

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_edge_object_bucket.example 'staging/media'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_edge_object_bucket.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"ObjectBucket","name":"media","schemaDigest":"sha256:a33317b7299360c741bb1ebf9ced49945b818734ef4b08bee1344310af5e2548","space":"staging"}'
