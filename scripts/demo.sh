#!/usr/bin/env bash
# `make demo`: OpenTofu deploys the quickstart worker app through the
# takoform provider to a Takoform host started here on a fresh SQLite file;
# the host runs the worker on workerd (installed into tools/ by
# scripts/workerd.sh). The demo requests the app's URL through the host's
# worker ingress several times and prints the worker's answers (a visit
# counter kept in KV and in the worker's SQLite database), shows an empty
# plan, rolls out changed code (an edited string in src/worker.js), prints
# the new code's answer (the counter continues: KV and SQL data survive the
# rollout) and destroys everything.
# No network: the provider comes from bin/ through a dev_overrides CLI
# config, so `tofu init` (registry access) is skipped.
#
# The CLI is the one scripts/findtofu.sh chooses: $TOFU, else OpenTofu >= 1.12
# or Terraform >= 1.11 from PATH, else the pinned OpenTofu (built once).
# The terminal shows each step's summary (plan and apply counts, the URL)
# and the timing table; every command's full output goes to demo.log
# (DEMO_LOG=... to move it).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-go}"
bin="$root/bin"
work="$(mktemp -d "${TMPDIR:-/tmp}/takoform-demo.XXXXXX")"
label=demo
log="${DEMO_LOG:-$root/demo.log}"
: >"$log"
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

step "choose the OpenTofu or Terraform CLI (scripts/findtofu.sh)"
tofu="$("$root/scripts/findtofu.sh" 2> >(tee -a "$log" >&2))"
"$tofu" version | sed -n 1p
done_step

step "install workerd (scripts/workerd.sh)"
TAKOFORM_WORKERD="$("$root/scripts/workerd.sh" 2>>"$log")"
export TAKOFORM_WORKERD
"$TAKOFORM_WORKERD" --version
done_step

step "start takoform host serve on a fresh SQLite file"
start_host --ingress 127.0.0.1:0
ingress="$(sed -n 's/^worker ingress on http:\/\/\([^ ]*\) .*/\1/p' "$work/host.log")"
[ -n "$ingress" ] || { cat "$work/host.log" >&2; echo "demo: the host's worker ingress did not start" >&2; exit 1; }
echo "host $endpoint (pid $host_pid, data $work/host.db), worker ingress $ingress"
done_step

export TAKOFORM_ENDPOINT="$endpoint" TAKOFORM_SPACE="demo" TAKOFORM_TOKEN="$token"

app="$work/quickstart"
cp -R "$root/examples/quickstart" "$app"
rm -rf "$app/.terraform" "$app"/terraform.tfstate*
# tf CMD ARGS...: the CLI's CMD in the working copy, its whole output
# appended to the log; on failure the log's tail is shown.
tf() {
  local cmd="$1"
  shift
  printf '\n$ %s %s %s\n' "$(basename "$tofu")" "$cmd" "$*" >>"$log"
  if ! (cd "$app" && "$tofu" "$cmd" -no-color "$@") >>"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "demo: $(basename "$tofu") $cmd failed; the full log is $log" >&2
    return 1
  fi
}
# summary PATTERN: the last log line matching PATTERN (a plan or apply count).
summary() { grep -E "$1" "$log" | tail -n 1 | sed 's/^/    /'; }
# plan_empty WHEN: a plan must show no changes (-detailed-exitcode: 0 none,
# 2 changes); prints the plan's count either way.
plan_empty() {
  local rc=0
  printf '\n$ %s plan -detailed-exitcode\n' "$(basename "$tofu")" >>"$log"
  (cd "$app" && "$tofu" plan -no-color -compact-warnings -detailed-exitcode) >>"$log" 2>&1 || rc=$?
  case "$rc" in
  0) summary '^No changes\.' ;;
  2)
    summary '^Plan:'
    echo "demo: the plan $1 is not empty; see $log" >&2
    exit 1
    ;;
  *)
    tail -n 40 "$log" >&2
    echo "demo: plan failed (exit $rc); the full log is $log" >&2
    exit 1
    ;;
  esac
}
# plan_apply: plan into a file, show its count, apply exactly that plan.
plan_apply() {
  tf plan -compact-warnings -out=tfplan
  summary '^(Plan:|No changes\.)'
  tf apply -compact-warnings tfplan
  summary '^Apply complete!'
}

step "plan and apply (create the worker app)"
plan_apply
done_step

url="$(cd "$app" && "$tofu" output -raw url)"
printf '\nendpoint url: %s\n' "$url"
family="$(cd "$app" && "$tofu" state show -no-color takoform_module_worker.app | sed -n 's/^ *form_api_version *= *"\(.*\)"$/\1/p')"
printf 'created in the Edge family %s\n' "$family"
[ "$family" = "edge.forms.takoform.com/v1beta1" ] || { echo "demo: the app was created in \"$family\", not edge.forms.takoform.com/v1beta1" >&2; exit 1; }
host="${url#https://}"
host="${host%%/*}"

# get PATH: GET PATH on the endpoint through the ingress (plain HTTP on
# loopback, the endpoint's hostname in Host: the ingress routes by it) into
# $status and $body, printing the command and the answer.
get() {
  local out
  out="$(curl -sS --max-time 10 -H "Host: $host" -w '\n%{http_code}' "http://$ingress$1" 2>>"$log" || true)"
  status="${out##*$'\n'}"
  body="${out%$'\n'*}"
  body="${body%$'\n'}"
  printf '    $ curl -H "Host: %s" http://%s%s\n    HTTP %s: %s\n' "$host" "$ingress" "$1" "$status" "$body"
}
# await_release RELEASE: the data plane starts the version after each apply
# (a new workerd generation that takes over once it answers); wait until
# /release, which counts no visit, answers RELEASE.
await_release() {
  local out
  for _ in $(seq 1 150); do
    out="$(curl -sS --max-time 10 -H "Host: $host" "http://$ingress/release" 2>>"$log" || true)"
    [ "$out" = "$1" ] && { printf '    /release answers %s\n' "$1"; return 0; }
    sleep 0.2
  done
  get /release
  echo "demo: the endpoint never answered with $1; see $work/host.log" >&2
  exit 1
}
# visit N RELEASE: GET / must answer RELEASE's line for visit N, counted
# the same in KV and in SQL.
visit() {
  get /
  local want="$2: visit $1 (kv $1, sql $1)"
  if [ "$status" != 200 ] || [ "$body" != "$want" ]; then
    echo "demo: wanted HTTP 200 \"$want\"; see $work/host.log" >&2
    exit 1
  fi
}

step "request the app's URL through the ingress (the worker counts visits)"
await_release "quickstart v1"
for n in 1 2 3; do visit "$n" "quickstart v1"; done
get /about.html
case "$body" in
*"This page is a static asset"*) ;;
*) echo "demo: /about.html is not the static asset public/about.html; see $work/host.log" >&2; exit 1 ;;
esac
done_step

step "plan -detailed-exitcode (expect no changes)"
plan_empty "after the first apply"
done_step

step "change the module source and apply the rollout"
sed -i.orig 's/"quickstart v1"/"quickstart v2"/' "$app/src/worker.js"
rm -f "$app/src/worker.js.orig"
grep -q '"quickstart v2"' "$app/src/worker.js" || { echo "demo: the source edit of src/worker.js did not apply" >&2; exit 1; }
plan_apply
printf '    endpoint url after the rollout: %s\n' "$(cd "$app" && "$tofu" output -raw url)"
plan_empty "after the rollout"
done_step

step "request the URL after the rollout (new code, the same KV and SQL data)"
await_release "quickstart v2"
visit 4 "quickstart v2"
done_step

step "destroy"
tf destroy -compact-warnings -auto-approve
summary '^Destroy complete!'
for _ in $(seq 1 150); do
  [ "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -H "Host: $host" "http://$ingress/" 2>>"$log" || true)" = 404 ] && break
  sleep 0.2
done
get /
[ "$status" = 404 ] || { echo "demo: the destroyed endpoint still answers HTTP $status" >&2; exit 1; }
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
printf '\nfull log: %s\n' "$log"
ok=1
