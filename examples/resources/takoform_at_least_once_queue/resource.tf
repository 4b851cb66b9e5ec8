resource "takoform_at_least_once_queue" "example" {
  name                      = "jobs"
  message_retention_seconds = 86400 # one day
  delivery_delay_seconds    = 0
}
