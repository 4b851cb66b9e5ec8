# NAME: the resource "version-0123456789ab-cdef01234567" in the provider's space.
tofu import takoform_worker_version.example version-0123456789ab-cdef01234567

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_worker_version.example 'staging/version-0123456789ab-cdef01234567'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_worker_version.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"WorkerVersion","name":"version-0123456789ab-cdef01234567","schemaDigest":"sha256:cde1926464b53fb051446d7da2476a684372bb9180e7fbbac8040cec8ff0549a","space":"staging"}'
