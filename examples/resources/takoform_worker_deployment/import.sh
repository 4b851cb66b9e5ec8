# NAME: the resource "hello" in the provider's space.
tofu import takoform_worker_deployment.example hello

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_worker_deployment.example 'staging/hello'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_worker_deployment.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"WorkerDeployment","name":"hello","schemaDigest":"sha256:c44b3eae740065ad3c99b973339c0d97af1ffc4064c3ba2f2771b89e79d2fcb5","space":"staging"}'
