#!/usr/bin/env bash
# Chooses the OpenTofu or Terraform CLI a first run uses and prints its
# path on stdout (what it chose, and why, on stderr):
#   1. $TOFU, when set (any CLI: the caller asked for it);
#   2. `tofu` on PATH when it is OpenTofu 1.12 or later;
#   3. `terraform` on PATH when it is Terraform 1.11 or later;
#   4. otherwise the pinned OpenTofu, built from the Go module proxy by
#      scripts/opentofu.sh (about 4 minutes on an idle 2-core machine, more
#      under load; reused once built).
# `make test` never asks this script: it always uses the pinned OpenTofu.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# version_of CLI prints the CLI's version as MAJOR.MINOR (from
# `version -json`), or nothing.
version_of() {
  "$1" version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([0-9]*\.[0-9]*\).*/\1/p' | head -1
}
# at_least V MAJOR MINOR
at_least() {
  local major="${1%%.*}" minor="${1#*.}"
  [ -n "$1" ] && { [ "$major" -gt "$2" ] || { [ "$major" -eq "$2" ] && [ "$minor" -ge "$3" ]; }; }
}

if [ -n "${TOFU:-}" ]; then
  echo "using TOFU=$TOFU" >&2
  echo "$TOFU"
  exit 0
fi
if t="$(command -v tofu)"; then
  v="$(version_of "$t")"
  if at_least "$v" 1 12; then
    echo "using OpenTofu $v from PATH ($t)" >&2
    echo "$t"
    exit 0
  fi
  echo "skipping $t: OpenTofu ${v:-of unknown version} is older than 1.12" >&2
fi
if t="$(command -v terraform)"; then
  v="$(version_of "$t")"
  if at_least "$v" 1 11; then
    echo "using Terraform $v from PATH ($t)" >&2
    echo "$t"
    exit 0
  fi
  echo "skipping $t: Terraform ${v:-of unknown version} is older than 1.11" >&2
fi
pinned="$root/tools/opentofu-${OPENTOFU_VERSION:-v1.12.6}/tofu"
if [ -x "$pinned" ]; then
  echo "using the pinned OpenTofu built earlier ($pinned)" >&2
else
  echo "no OpenTofu >= 1.12 or Terraform >= 1.11 on PATH (set TOFU=... to choose one):" >&2
  echo "building the pinned OpenTofu from the Go module proxy into tools/;" >&2
  echo "this takes about 4 minutes on an idle 2-core machine, more under load, once." >&2
fi
"$root/scripts/opentofu.sh"
