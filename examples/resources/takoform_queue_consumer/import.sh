# NAME: the resource "jobs" in the provider's space.
tofu import takoform_queue_consumer.example jobs

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import takoform_queue_consumer.example 'staging/jobs'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import takoform_queue_consumer.example '{"apiVersion":"edge.forms.takoform.com/v1alpha1","definitionVersion":"0.1.0","kind":"QueueConsumer","name":"jobs","schemaDigest":"sha256:56a1cef1344e46acf353827097a3c3e721c1307705edab11eec79260813f488c","space":"staging"}'
