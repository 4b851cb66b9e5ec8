# NAME: the resource "bundle-0123456789ab-cdef01234567" in the provider's space.
tofu import takoform_worker_bundle.example bundle-0123456789ab-cdef01234567

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_worker_bundle.example 'staging/bundle-0123456789ab-cdef01234567'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_worker_bundle.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"WorkerBundle","name":"bundle-0123456789ab-cdef01234567","schemaDigest":"sha256:11879d265efe49e9b99303180d744193f361fa7dfd51a6bb39309fdd86e1c0fc","space":"staging"}'
