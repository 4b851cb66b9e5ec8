# NAME: the resource "www" in the provider's space.
tofu import takoform_worker_custom_domain.example www

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_worker_custom_domain.example 'staging/www'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_worker_custom_domain.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"WorkerCustomDomain","name":"www","schemaDigest":"sha256:c107ba280b55fb09eef23dd436c715f9ae9239c461b3d6abeeb7fb77863919dd","space":"staging"}'
