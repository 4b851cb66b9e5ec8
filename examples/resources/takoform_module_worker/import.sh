# NAME: the resource "hello" in the provider's space.
tofu import takoform_module_worker.example hello

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_module_worker.example 'staging/hello'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_module_worker.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"ModuleWorker","name":"hello","schemaDigest":"sha256:a8981cac74b714e2d4e40b57aa96632b7b1272665490837cf3014bdbe961550c","space":"staging"}'
