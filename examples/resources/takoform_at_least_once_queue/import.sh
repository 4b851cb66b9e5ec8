# NAME: the resource "jobs" in the provider's space.
tofu import takoform_at_least_once_queue.example jobs

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_at_least_once_queue.example 'staging/jobs'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_at_least_once_queue.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"AtLeastOnceQueue","name":"jobs","schemaDigest":"sha256:0709188cdd82ac1c3086a52b3a72b326752fc0155fb42ec839afb67deef83b61","space":"staging"}'
