#!/usr/bin/env bash
# Builds the pinned golangci-lint from the Go module proxy into tools/ (an
# ignored folder; TAKOFORM_TOOLS overrides it) and prints its path. Reused
# when already built, so a fresh machine builds it once.
set -euo pipefail
VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${TAKOFORM_TOOLS:-$root/tools}"
out="$tools/golangci-lint-$VERSION/golangci-lint"
if [ -x "$out" ] && "$out" version >/dev/null 2>&1; then
  echo "$out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
# The version's own go.mod and go.sum pin its dependencies (go install
# module@version ignores ours).
GOBIN="$(dirname "$out")" CGO_ENABLED=0 "${GO:-go}" install -trimpath \
  "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$VERSION" >&2
"$out" version >&2
echo "$out"
