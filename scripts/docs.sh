#!/usr/bin/env bash
# `make docs`: regenerates docs/ with terraform-plugin-docs (tfplugindocs,
# pinned in go.mod as a tool) from THIS build's schema, as the pinned
# OpenTofu reports it (`tofu providers schema -json` through a dev_overrides
# CLI config: no registry, no downloaded CLI), the templates under
# templates/ and the examples under examples/. The hand-written guides are
# templates/guides/*.md: tfplugindocs empties docs/guides/ and copies them
# there as they are. The import examples are generated first (go generate
# ./internal/provider).
#
#   scripts/docs.sh            regenerate docs/ in place
#   scripts/docs.sh DIR        render into DIR/docs instead (DIR receives a
#                              copy of templates/ and examples/), and keep the
#                              schema document as DIR/schema.json; the docs
#                              test compares DIR/docs with docs/
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-go}"
out="${1:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/takoform-docs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$root"

if [ -z "$out" ]; then
  "$GO" generate ./internal/provider
fi
tofu="${TOFU_FOR_DOCS:-$("$root/scripts/opentofu.sh")}"
"$GO" build -o "$work/bin/terraform-provider-takoform" ./cmd/terraform-provider-takoform
cat >"$work/tofu.rc" <<RC
provider_installation {
  dev_overrides {
    "registry.opentofu.org/takoform/takoform" = "$work/bin"
  }
  direct {}
}
RC
mkdir "$work/cfg"
cat >"$work/cfg/main.tf" <<'TF'
terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}
TF
TF_CLI_CONFIG_FILE="$work/tofu.rc" CHECKPOINT_DISABLE=1 \
  "$tofu" -chdir="$work/cfg" providers schema -json >"$work/schema.raw.json" 2>"$work/tofu.log" ||
  { cat "$work/tofu.log" >&2; exit 1; }
# tfplugindocs finds a provider by its short name
sed 's|"registry.opentofu.org/takoform/takoform"|"takoform"|' "$work/schema.raw.json" >"$work/schema.json"

dir="$root"
if [ -n "$out" ]; then
  mkdir -p "$out"
  rm -rf "$out/templates" "$out/examples" "$out/docs"
  cp -R "$root/templates" "$root/examples" "$out/"
  cp "$work/schema.json" "$out/schema.json"
  dir="$(cd "$out" && pwd)"
fi
"$GO" tool tfplugindocs generate --provider-dir "$dir" --provider-name takoform \
  --rendered-provider-name Takoform --providers-schema "$work/schema.json" >"$work/tfplugindocs.log" 2>&1 ||
  { cat "$work/tfplugindocs.log" >&2; exit 1; }
echo "docs: $(find "$dir/docs" -name '*.md' | wc -l) pages in $dir/docs"
