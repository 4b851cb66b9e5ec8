# NAME: the resource "cache" in the provider's space.
tofu import takoform_edge_kv_namespace.example cache

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_edge_kv_namespace.example 'staging/cache'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_edge_kv_namespace.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"EdgeKVNamespace","name":"cache","schemaDigest":"sha256:346a0f39ec122e34decb79bd4ff1c5e09cd803e2766f3df8611ea48b1edb4f7a","space":"staging"}'
