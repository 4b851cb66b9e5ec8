#!/usr/bin/env bash
# Builds the pinned OpenTofu CLI from the Go module proxy into tools/ (an
# ignored folder) and prints its path. Reused when already built.
# `go install` refuses the module (it has replace directives), so the
# module is downloaded and ./cmd/tofu is built inside it.
set -euo pipefail
VERSION="${OPENTOFU_VERSION:-v1.12.6}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/tools/opentofu-$VERSION/tofu"
if [ -x "$out" ] && "$out" version >/dev/null 2>&1; then
  echo "$out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
dir="$(go mod download -json "github.com/opentofu/opentofu@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "opentofu.sh: could not download github.com/opentofu/opentofu@$VERSION from the Go module proxy" >&2
  exit 1
fi
(cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$out" ./cmd/tofu) >&2
"$out" version >&2
echo "$out"
