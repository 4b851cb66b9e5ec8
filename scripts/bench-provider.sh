#!/usr/bin/env bash
# `make bench-provider`: the takoform provider against the protocol floor.
# In one run, times `tofu apply`, a second `tofu plan` (no changes expected)
# and `tofu destroy` of N takoform_edge_kv_namespace resources on a host
# started here (fresh SQLite file), and of N noop_thing resources of a
# do-nothing provider (cmd/terraform-provider-noop), then prints the ratios
# beside the budget (spec/decisions/0019-performance-budget.md): plan <= 1.5x, apply and destroy <= 2x the
# floor (issue 14). A second floor, N noop_wide resources (the same
# provider, doing nothing, with the schema shape of
# takoform_edge_kv_namespace), shows what OpenTofu and the plugin framework
# alone cost for a schema that wide, and a third, N noop_raw resources (that
# schema again, answered on terraform-plugin-go without the framework),
# what OpenTofu alone costs for it; their ratios are informational.
#
#   BENCH_RESOURCES  resources per configuration (default 500)
#   BENCH_ROUNDS     rounds, alternating the two providers; the table shows
#                    each step's median (default 3)
#   BENCH_STRICT=1   exit 1 when a ratio misses its budget
#   TAKOFORM_PROVIDER_CPUPROFILE=<prefix>  each provider process (takoform
#                    and noop) writes <prefix>.<program>.<pid> (CPU) and the
#                    same name + .heap (allocations); read with
#                    `go tool pprof` (internal/cpuprofile)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-go}"
n="${BENCH_RESOURCES:-500}"
rounds="${BENCH_ROUNDS:-3}"
bin="$root/bin"
work="$(mktemp -d "${TMPDIR:-/tmp}/takoform-bench.XXXXXX")"
label=bench-provider
# shellcheck source=lib.sh
. "$root/scripts/lib.sh"

# Both providers come from bin/ through dev_overrides: no registry, no init.
use_dev_overrides "registry.opentofu.org/takoform/takoform" "registry.opentofu.org/takoform/noop"
unset TF_LOG

echo "building providers and takoform into bin/"
mkdir -p "$bin"
(cd "$root" && "$GO" build -o "$bin/terraform-provider-takoform" ./cmd/terraform-provider-takoform)
(cd "$root" && "$GO" build -o "$bin/terraform-provider-noop" ./cmd/terraform-provider-noop)
(cd "$root" && "$GO" build -o "$bin/takoform" ./cmd/takoform)
tofu="$("$root/scripts/opentofu.sh")"

start_host
export TAKOFORM_ENDPOINT="$endpoint" TAKOFORM_SPACE="bench" TAKOFORM_TOKEN="$token"

mkdir -p "$work/noop" "$work/wide" "$work/raw" "$work/takoform"
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
for t in wide raw; do
  cat >"$work/$t/main.tf" <<HCL
terraform {
  required_providers {
    noop = { source = "registry.opentofu.org/takoform/noop" }
  }
}

resource "noop_$t" "x" {
  count = $n
  name  = "ns-\${count.index}"
}
HCL
done
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
  for p in noop raw wide takoform; do
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
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '| step    | noop_thing (s) | takoform_edge_kv_namespace (s) | ratio | budget | verdict |\n'
printf '| ------- | -------------: | -----------------------------: | ----: | -----: | ------- |\n'
wide_rows=""
for s in apply plan destroy; do
  fl="$(echo "${times[noop,$s]}" | median)"
  rw="$(echo "${times[raw,$s]}" | median)"
  wd="$(echo "${times[wide,$s]}" | median)"
  tk="$(echo "${times[takoform,$s]}" | median)"
  ratio="$(div "$tk" "$fl")"
  case $s in
    apply) budget=2.0 ;;
    plan) budget=1.5 ;;
    destroy) budget=2.0 ;;
  esac
  if awk -v r="$ratio" -v b="$budget" 'BEGIN { exit !(r <= b) }'; then verdict=within; else verdict=MISSED; missed=1; fi
  printf '| %-7s | %14s | %30s | %4s× | %6s | %-7s |\n' "$s" "$fl" "$tk" "$ratio" "≤ ${budget}×" "$verdict"
  wide_rows+="$(printf '| %-7s | %12s (%s×) | %13s (%s×) | %19s× | %20s× |' "$s" "$rw" "$(div "$rw" "$fl")" "$wd" "$(div "$wd" "$fl")" "$(div "$tk" "$rw")" "$(div "$tk" "$wd")")"$'\n'
done
printf '\nThe same schema width, doing nothing (ratios to noop_thing in brackets):\n\n'
printf '| step    | noop_raw (s)        | noop_wide (s)        | takoform / noop_raw | takoform / noop_wide |\n'
printf '| ------- | ------------------: | -------------------: | ------------------: | -------------------: |\n'
printf '%s' "$wide_rows"
if [ "$missed" = 1 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
  exit 1
fi
