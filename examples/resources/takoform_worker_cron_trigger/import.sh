# NAME: the resource "nightly" in the provider's space.
tofu import takoform_worker_cron_trigger.example nightly

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_worker_cron_trigger.example 'staging/nightly'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_worker_cron_trigger.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"WorkerCronTrigger","name":"nightly","schemaDigest":"sha256:f01bf747f8071c7f7a86f150dc98a643934c149d1b9ea9bac503cc5711759f30","space":"staging"}'
