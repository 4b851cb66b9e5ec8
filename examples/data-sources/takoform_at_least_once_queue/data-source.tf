resource "takoform_at_least_once_queue" "example" {
  name                      = "jobs"
  message_retention_seconds = 86400 # one day
  delivery_delay_seconds    = 0
}

# Reads the resource by space (the provider's) and name without managing it.
data "takoform_at_least_once_queue" "example" {
  name = takoform_at_least_once_queue.example.name
}

output "uid" {
  value = data.takoform_at_least_once_queue.example.uid
}
