# NAME: the resource "hello" in the provider's space.
tofu import takoform_worker_endpoint.example hello

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_worker_endpoint.example 'staging/hello'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_worker_endpoint.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"WorkerEndpoint","name":"hello","schemaDigest":"sha256:1ff39c489b81530fa200705017dfdf67b5c3f34d1b3a38e993841f9d3802d34a","space":"staging"}'
