# NAME: the resource "static-asset-bundle-0123456789ab-cdef01234567" in the provider's space.
tofu import takoform_static_asset_bundle.example static-asset-bundle-0123456789ab-cdef01234567

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_static_asset_bundle.example 'staging/static-asset-bundle-0123456789ab-cdef01234567'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_static_asset_bundle.example '{"apiVersion":"edge.forms.takoform.com/v1beta1","definitionVersion":"0.1.0","kind":"StaticAssetBundle","name":"static-asset-bundle-0123456789ab-cdef01234567","schemaDigest":"sha256:f9f4a199d4884da4993cd0f30c4ed12e95d230de8a7dd1d6d18b5fa58f645906","space":"staging"}'
