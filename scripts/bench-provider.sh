#!/usr/bin/env bash
# `make bench-provider`: the takoform provider against the protocol floor.
# In one run, times `tofu apply`, a second `tofu plan` (no changes expected)
# and `tofu destroy` of N takoform_edge_kv_namespace resources on a host
# started here (fresh SQLite file), and of N noop_thing resources of a
# do-nothing provider (cmd/terraform-provider-noop), then prints the ratios
# beside the budget in DESIGN.md: plan <= 1.5x, apply <= 2x the floor.
#
#   BENCH_RESOURCES  resources per configuration (default 500)
#   BENCH_ROUNDS     rounds, alternating the two providers; the table shows
#                    each step's median (default 3)
#   BENCH_STRICT=1   exit 1 when a ratio misses its budget
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-go}"
n="${BENCH_RESOURCES:-500}"
rounds="${BENCH_ROUNDS:-3}"
bin="$root/bin"
work="$(mktemp -d "${TMPDIR:-/tmp}/takoform-bench.XXXXXX")"
host_pid=""
ok=0

cleanup() {
  if [ -n "$host_pid" ] && kill -0 "$host_pid" 2>/dev/null; then
    kill -TERM "$host_pid" 2>/dev/null || true
    wait "$host_pid" 2>/dev/null || true
  fi
  if [ "$ok" = 1 ]; then
    rm -rf "$work"
  else
    echo "bench-provider: FAILED; logs kept in $work" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Both providers come from bin/ through dev_overrides: no registry, no init.
cat >"$work/tofu.rc" <<RC
provider_installation {
  dev_overrides {
    "registry.opentofu.org/takoform/takoform" = "$bin"
    "registry.opentofu.org/takoform/noop"     = "$bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/tofu.rc"
export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1
unset TF_CLI_ARGS TF_CLI_ARGS_plan TF_CLI_ARGS_apply TF_CLI_ARGS_destroy TF_WORKSPACE TF_DATA_DIR TF_LOG

echo "building providers and takoform into bin/"
mkdir -p "$bin"
(cd "$root" && "$GO" build -o "$bin/terraform-provider-takoform" ./cmd/terraform-provider-takoform)
(cd "$root" && "$GO" build -o "$bin/terraform-provider-noop" ./cmd/terraform-provider-noop)
(cd "$root" && "$GO" build -o "$bin/takoform" ./cmd/takoform)
tofu="$("$root/scripts/opentofu.sh")"

token="bench-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
"$bin/takoform" host serve --listen 127.0.0.1:0 --data "$work/host.db" --dev-token "$token" \
  >"$work/host.log" 2>&1 &
host_pid=$!
endpoint=""
for _ in $(seq 1 200); do
  endpoint="$(sed -n 's/^takoform host serving \(http:\/\/[^ ]*\) .*/\1/p' "$work/host.log")"
  [ -n "$endpoint" ] && break
  kill -0 "$host_pid" 2>/dev/null || { cat "$work/host.log" >&2; exit 1; }
  sleep 0.05
done
[ -n "$endpoint" ] || { cat "$work/host.log" >&2; echo "bench-provider: the host did not start" >&2; exit 1; }
export TAKOFORM_ENDPOINT="$endpoint" TAKOFORM_SPACE="bench" TAKOFORM_TOKEN="$token"

mkdir -p "$work/noop" "$work/takoform"
cat >"$work/noop/main.tf" <<HCL
terraform {
  required_providers {
    noop = { source = "registry.opentofu.org/takoform/noop" }
  }
}

resource "noop_thing" "x" {
  count = $n
  name  = "ns-\${count.index}"
}
HCL
cat >"$work/takoform/main.tf" <<HCL
terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}

provider "takoform" {}

resource "takoform_edge_kv_namespace" "x" {
  count = $n
  name  = "ns-\${count.index}"
}
HCL

# timed DIR STEP LOG ARGS...: runs tofu in DIR, prints the seconds taken.
timed() {
  local dir="$1" log="$2"
  shift 2
  local t0=$EPOCHREALTIME rc=0
  (cd "$dir" && "$tofu" "$@" -no-color >>"$log" 2>&1) || rc=$?
  local t1=$EPOCHREALTIME
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "bench-provider: tofu $* in $dir exited $rc" >&2
    exit 1
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

declare -A times
for r in $(seq 1 "$rounds"); do
  for p in noop takoform; do
    log="$work/$p.log"
    a="$(timed "$work/$p" "$log" apply -auto-approve)"
    # -detailed-exitcode: 0 = no changes; 2 (changes) fails the run.
    pl="$(timed "$work/$p" "$log" plan -detailed-exitcode)"
    d="$(timed "$work/$p" "$log" destroy -auto-approve)"
    times[$p,apply]+="$a "
    times[$p,plan]+="$pl "
    times[$p,destroy]+="$d "
    printf 'round %d  %-9s apply %7ss  plan %7ss  destroy %7ss\n' "$r" "$p" "$a" "$pl" "$d"
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

missed=0
printf '\n%d resources, median of %d round(s), OpenTofu %s\n\n' "$n" "$rounds" "$("$tofu" version | sed -n '1s/^OpenTofu //p')"
printf '| step    | noop_thing (s) | takoform_edge_kv_namespace (s) | ratio | budget | verdict |\n'
printf '| ------- | -------------: | -----------------------------: | ----: | -----: | ------- |\n'
for s in apply plan destroy; do
  fl="$(echo "${times[noop,$s]}" | median)"
  tk="$(echo "${times[takoform,$s]}" | median)"
  ratio="$(awk -v a="$tk" -v b="$fl" 'BEGIN { printf "%.2f", a / b }')"
  case $s in
    apply) budget=2.0 ;;
    plan) budget=1.5 ;;
    *) budget="" ;;
  esac
  verdict="-"
  if [ -n "$budget" ]; then
    if awk -v r="$ratio" -v b="$budget" 'BEGIN { exit !(r <= b) }'; then verdict=within; else verdict=MISSED; missed=1; fi
  fi
  printf '| %-7s | %14s | %30s | %4s× | %6s | %-7s |\n' "$s" "$fl" "$tk" "$ratio" "${budget:+≤ ${budget}×}" "$verdict"
done
ok=1
if [ "$missed" = 1 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
  exit 1
fi
