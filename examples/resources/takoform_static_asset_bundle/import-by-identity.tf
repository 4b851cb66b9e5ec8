# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = takoform_static_asset_bundle.example
  identity = {
    space = "staging"
    name  = "static-asset-bundle-0123456789ab-cdef01234567"
  }
}
