terraform {
  required_providers {
    takoform = {
      source = "registry.opentofu.org/takoform/takoform"
    }
  }
}

# Every attribute may come from the environment instead:
# TAKOFORM_ENDPOINT, TAKOFORM_SPACE, TAKOFORM_TOKEN.
provider "takoform" {
  endpoint = "http://127.0.0.1:8080" # https, or plain http for a loopback host only
  space    = "staging"               # the default space of every resource
  token    = var.takoform_token
}

variable "takoform_token" {
  type      = string
  sensitive = true
}
