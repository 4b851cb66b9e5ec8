# A worker serving one version of the code in ../../src (a bundle and a
# version are revisions: their names derive from content and owner).
resource "takoform_module_worker" "app" {
  name = "hello"
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules        = [{ name = "worker.js", content_file = "${path.module}/../../src/worker.js" }]

  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch", "scheduled", "queue"]

  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_deployment" "app" {
  name     = "hello"
  worker   = takoform_module_worker.app.name
  versions = [{ worker_version = takoform_worker_version.app.name, weight = 10000 }]
}

resource "takoform_at_least_once_queue" "jobs" {
  name                      = "jobs"
  message_retention_seconds = 86400
}

resource "takoform_at_least_once_queue" "dead_letters" {
  name                      = "jobs-dead-letters"
  message_retention_seconds = 604800
}

# The worker's queue handler drains jobs in batches; messages whose retries
# are exhausted go to the dead-letter queue.
resource "takoform_queue_consumer" "example" {
  name                      = "jobs"
  queue                     = takoform_at_least_once_queue.jobs.name
  dead_letter_queue         = takoform_at_least_once_queue.dead_letters.name
  worker                    = takoform_module_worker.app.name
  max_batch_size            = 10
  max_batch_timeout_seconds = 5
  max_concurrency           = 2
  max_retries               = 3
  retry_delay_seconds       = 30
  depends_on                = [takoform_worker_deployment.app]
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_queue_consumer" "example" {
  name = takoform_queue_consumer.example.name
}

output "uid" {
  value = data.takoform_queue_consumer.example.uid
}
