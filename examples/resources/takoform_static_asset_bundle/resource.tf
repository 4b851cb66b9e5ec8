resource "takoform_module_worker" "app" {
  name = "hello"
}

# The static files a worker version serves (its assets): each file is read
# and hashed at plan time, uploaded when the host lacks it, and committed as
# one StaticAssetBundle manifest (listed sorted by path). The name derives
# from the manifest digest and revision_owner, so changed bytes plan a new
# bundle; a files edit that keeps the digest replaces nothing.
resource "takoform_static_asset_bundle" "example" {
  revision_owner = takoform_module_worker.app.name
  files = [
    { path = "index.html", media_type = "text/html", content_file = "${path.module}/../../src/site/index.html" },
    { path = "app.css", media_type = "text/css", content_file = "${path.module}/../../src/site/app.css" },
  ]

  lifecycle {
    create_before_destroy = true
  }
}
