#!/usr/bin/env bash
# Installs the pinned workerd (Cloudflare's open-source Workers runtime, the
# engine of the data plane, spec/runtime-v1.md §0.3) from the npm registry
# into tools/ (an ignored folder) and prints the binary's path. Reused when
# already installed. Needs npm; the package's install scripts never run.
# The host finds the binary there (after --workerd and TAKOFORM_WORKERD).
set -euo pipefail
VERSION="${WORKERD_VERSION:-1.20261117.1}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tools/workerd-$VERSION"
out="$dir/node_modules/@cloudflare/workerd-linux-64/bin/workerd"
if [ -x "$out" ] && "$out" --version >/dev/null 2>&1; then
  echo "$out"
  exit 0
fi
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) ;;
  *)
    echo "workerd.sh: the pinned package is @cloudflare/workerd-linux-64; on $(uname -s)/$(uname -m) set TAKOFORM_WORKERD to a workerd $VERSION binary" >&2
    exit 1
    ;;
esac
if ! command -v npm >/dev/null 2>&1; then
  echo "workerd.sh: npm is needed to install @cloudflare/workerd-linux-64@$VERSION (apt-get install npm), or set TAKOFORM_WORKERD to a workerd binary" >&2
  exit 1
fi
mkdir -p "$dir"
npm install --no-save --no-audit --no-fund --ignore-scripts --prefix "$dir" "@cloudflare/workerd-linux-64@$VERSION" >&2
"$out" --version >&2
echo "$out"
