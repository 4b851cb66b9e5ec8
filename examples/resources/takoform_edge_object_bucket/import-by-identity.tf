# OpenTofu 1.12 and Terraform 1.12 and later: import by resource identity.
# space defaults to the provider's; api_version, kind, definition_version
# and schema_digest (all four or none) default to the type's default create
# FormRef.
import {
  to = takoform_edge_object_bucket.example
  identity = {
    space = "staging"
    name  = "media"
  }
}
