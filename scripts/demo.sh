#!/usr/bin/env bash
# `make demo`: OpenTofu deploys the quickstart worker app through the
# takoform provider to a Takoform host started here on a fresh SQLite file,
# then shows an empty plan, rolls out changed code and destroys everything.
# No network: the provider comes from bin/ through a dev_overrides CLI
# config, so `tofu init` (registry access) is skipped.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-go}"
bin="$root/bin"
work="$(mktemp -d "${TMPDIR:-/tmp}/takoform-demo.XXXXXX")"
label=demo
# shellcheck source=lib.sh
. "$root/scripts/lib.sh"

timings=()
step_start=0
step() {
  step_start=$EPOCHREALTIME
  printf '\n==> %s\n' "$1"
  current_step="$1"
}
done_step() {
  local secs
  secs=$(awk -v a="$step_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  timings+=("$(printf '%8ss  %s' "$secs" "$current_step")")
  printf '    (%ss)\n' "$secs"
}
demo_start=$EPOCHREALTIME

use_dev_overrides "registry.opentofu.org/takoform/takoform"

step "build terraform-provider-takoform and takoform into bin/"
mkdir -p "$bin"
(cd "$root" && "$GO" build -o "$bin/terraform-provider-takoform" ./cmd/terraform-provider-takoform)
(cd "$root" && "$GO" build -o "$bin/takoform" ./cmd/takoform)
done_step

step "get OpenTofu (scripts/opentofu.sh)"
tofu="$("$root/scripts/opentofu.sh")"
"$tofu" version | sed -n 1p
done_step

step "start takoform host serve on a fresh SQLite file"
start_host
echo "host $endpoint (pid $host_pid, data $work/host.db)"
done_step

export TAKOFORM_ENDPOINT="$endpoint" TAKOFORM_SPACE="demo" TAKOFORM_TOKEN="$token"

app="$work/quickstart"
cp -R "$root/examples/quickstart" "$app"
rm -rf "$app/.terraform" "$app"/terraform.tfstate*
# tf CMD ARGS...: tofu CMD in the working copy; one warning line instead of
# the dev_overrides box, and no colour codes when the output is not a terminal.
color=""
[ -t 1 ] || color="-no-color"
tf() {
  local cmd="$1"
  shift
  (cd "$app" && "$tofu" "$cmd" ${color:+"$color"} "$@")
}
tfc() { tf "$@" -compact-warnings; }

step "tofu apply (create the worker app)"
tfc apply -auto-approve
done_step

url="$(tf output -raw url)"
printf '\nendpoint url: %s\n' "$url"

step "tofu plan -detailed-exitcode (expect no changes)"
rc=0
tfc plan -detailed-exitcode || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "demo: the second plan is not empty (exit $rc)" >&2
  exit 1
fi
echo "no changes: state matches the host"
done_step

step "change the module source and apply the rollout"
sed -i.orig 's/hello from takoform/hello again from takoform/' "$app/src/worker.js"
rm -f "$app/src/worker.js.orig"
grep -q 'hello again from takoform' "$app/src/worker.js" || { echo "demo: the source edit did not apply" >&2; exit 1; }
tfc apply -auto-approve
printf '\nendpoint url after the rollout: %s\n' "$(tf output -raw url)"
rc=0
tfc plan -detailed-exitcode >"$work/plan-after-rollout.txt" || rc=$?
if [ "$rc" -ne 0 ]; then
  cat "$work/plan-after-rollout.txt" >&2
  echo "demo: the plan after the rollout is not empty (exit $rc)" >&2
  exit 1
fi
echo "no changes after the rollout"
done_step

step "tofu destroy"
tfc destroy -auto-approve
done_step

step "stop the host"
kill -TERM "$host_pid"
wait "$host_pid" || true
host_pid=""
done_step

total=$(awk -v a="$demo_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
printf '\n==> wall time per step\n'
printf '%s\n' "${timings[@]}"
printf '%8ss  total\n' "$total"
ok=1
