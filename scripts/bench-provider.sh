#!/usr/bin/env bash
# `make bench-provider`: the takoform provider against the protocol floor.
# In one run, times `tofu apply`, a second `tofu plan` (no changes expected)
# and `tofu destroy` of N takoform_edge_kv_namespace resources on a host
# started here (fresh SQLite file), and of N noop_thing resources of a
# do-nothing provider (cmd/terraform-provider-noop), then prints the ratios
# beside the budget (PERFORMANCE.md, "Budgets"): plan <= 1.5x, apply and
# destroy <= 2x the floor. A second floor, N noop_wide resources (the same
# provider, doing nothing, with the schema shape of
# takoform_edge_kv_namespace), shows what OpenTofu and the plugin framework
# alone cost for a schema that wide, and a third, N noop_raw resources (that
# schema and its resource identity, answered on terraform-plugin-go
# without the framework), what OpenTofu alone costs for it; their ratios
# are informational, and a budget below noop_raw's own ratio is printed as
# bounded by it (spec/decisions/0035-bench-provider-comparison.md).
#
#   BENCH_RESOURCES  resources per configuration (default 500)
#   BENCH_ROUNDS     rounds (default 3), the order of the providers reversed
#                    every other round; times are medians over rounds, a
#                    ratio the median of the per-round ratios; the CPU
#                    seconds of tofu, its provider processes and the host
#                    (needs /usr/bin/time) are compared the same way
#   BENCH_STRICT=1   exit 1 when a ratio misses its budget
#   BENCH_WIDE=0     leave noop_wide out (at 2,000 resources it is the
#                    slowest configuration and only informational)
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

# Every provider process runs under /usr/bin/time, which appends its user
# and system CPU seconds to $BENCH_CPU_LOG: the wrappers in $wrap are what
# dev_overrides names. tofu's own CPU is its total (children included, so
# the providers it started and reaped) less theirs; the host's is read
# from /proc before and after each command.
[ -x /usr/bin/time ] || { echo "bench-provider: needs /usr/bin/time (Debian: apt-get install time) for the CPU columns" >&2; exit 1; }
wrap="$work/wrap"
mkdir -p "$wrap"
for p in takoform noop; do
  printf '#!/bin/sh\nexec /usr/bin/time -a -o "$BENCH_CPU_LOG" -f "%%U %%S" %q "$@"\n' "$bin/terraform-provider-$p" >"$wrap/terraform-provider-$p"
  chmod +x "$wrap/terraform-provider-$p"
done
# Both providers come from bin/ (through the wrappers) by dev_overrides: no
# registry, no init.
bin="$wrap" use_dev_overrides "registry.opentofu.org/takoform/takoform" "registry.opentofu.org/takoform/noop"
tick="$(getconf CLK_TCK)"
host_cpu() { sed 's/.*) //' "/proc/$host_pid/stat" | awk -v t="$tick" '{ printf "%.3f", ($12 + $13) / t }'; }
sum_cpu() { awk '{ s += $1 + $2 } END { printf "%.3f", s }' "$1" 2>/dev/null || echo 0; }

# timed DIR LOG ARGS...: runs tofu in DIR; sets wall, cpu_tofu (tofu's
# own), cpu_prov (its provider processes) and cpu_host (seconds).
timed() {
  local dir="$1" log="$2"
  shift 2
  local t0 h0 rc=0
  : >"$work/cpu.tofu"
  : >"$work/cpu.prov"
  h0="$(host_cpu)"
  t0=$EPOCHREALTIME
  (cd "$dir" && BENCH_CPU_LOG="$work/cpu.prov" /usr/bin/time -o "$work/cpu.tofu" -f "%U %S" "$tofu" "$@" -no-color >>"$log" 2>&1) || rc=$?
  wall="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')"
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "bench-provider: tofu $* in $dir exited $rc" >&2
    exit 1
  fi
  cpu_host="$(awk -v a="$h0" -v b="$(host_cpu)" 'BEGIN { printf "%.3f", b - a }')"
  cpu_prov="$(sum_cpu "$work/cpu.prov")"
  cpu_tofu="$(awk -v a="$(tail -n 1 "$work/cpu.tofu" | awk '{ print $1 + $2 }')" -v b="$cpu_prov" 'BEGIN { printf "%.3f", a - b }')"
}

div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
med() { echo "${times[$1]}" | median; }
medr() { printf '%.2f' "$(med "$1")"; } # a ratio's median

# Rounds alternate the order of the four configurations (odd rounds noop
# first, even rounds takoform first), so neither side always runs on a
# warmer or a busier box. A ratio is the median over rounds of that
# round's takoform / floor wall time, each pair measured minutes apart at
# most.
declare -A times state_bytes
providers=(noop raw wide takoform)
if [ "${BENCH_WIDE:-1}" = 0 ]; then providers=(noop raw takoform); fi
reversed=()
for p in "${providers[@]}"; do reversed=("$p" "${reversed[@]}"); done
for r in $(seq 1 "$rounds"); do
  order=("${providers[@]}")
  if [ $((r % 2)) = 0 ]; then order=("${reversed[@]}"); fi
  for p in "${order[@]}"; do
    log="$work/$p.log"
    line=""
    for s in apply plan destroy; do
      case $s in
        apply)
          timed "$work/$p" "$log" apply -auto-approve
          [ "$r" = 1 ] && state_bytes[$p]="$(wc -c <"$work/$p/terraform.tfstate")"
          ;;
        plan) timed "$work/$p" "$log" plan -detailed-exitcode ;; # 2 (changes) fails the run
        destroy) timed "$work/$p" "$log" destroy -auto-approve ;;
      esac
      times[$p,$s,$r]="$wall"
      times[$p,$s]+="$wall "
      times[$p,$s,tofu]+="$cpu_tofu "
      times[$p,$s,prov]+="$cpu_prov "
      times[$p,$s,host]+="$cpu_host "
      times[$p,$s,cpu,$r]="$(awk -v a="$cpu_tofu" -v b="$cpu_prov" -v c="$cpu_host" 'BEGIN { printf "%.3f", a + b + c }')"
      line+="$(printf '  %s %7ss (cpu tofu %s prov %s host %s)' "$s" "$wall" "$cpu_tofu" "$cpu_prov" "$cpu_host")"
    done
    printf 'round %d  %-9s%s\n' "$r" "$p" "$line"
  done
  for s in apply plan destroy; do
    for f in "${providers[@]}"; do
      [ "$f" = takoform ] && continue
      times[$f,$s,ratio]+="$(div "${times[takoform,$s,$r]}" "${times[$f,$s,$r]}") "
    done
    for f in noop raw; do
      times[$f,$s,cpuratio]+="$(div "${times[takoform,$s,cpu,$r]}" "${times[$f,$s,cpu,$r]}") "
    done
    times[raw,$s,cpufloor]+="$(div "${times[raw,$s,cpu,$r]}" "${times[noop,$s,cpu,$r]}") "
    times[raw,$s,floor]+="$(div "${times[raw,$s,$r]}" "${times[noop,$s,$r]}") "
    [ -n "${times[wide,$s,$r]:-}" ] && times[wide,$s,floor]+="$(div "${times[wide,$s,$r]}" "${times[noop,$s,$r]}") "
  done
done

missed=0
printf '\n%d resources, %d round(s) in alternating order, OpenTofu %s\n' "$n" "$rounds" "$("$tofu" version | sed -n '1s/^OpenTofu //p')"
printf 'Times are medians over rounds; a ratio is the median over rounds of the ratio within each round.\n\n'
printf '| step    | noop_thing (s) | takoform_edge_kv_namespace (s) | ratio | budget | verdict | floor noop_raw / noop_thing | takoform / noop_raw |\n'
printf '| ------- | -------------: | -----------------------------: | ----: | -----: | ------- | --------------------------: | ------------------: |\n'
wide_rows="" notes=""
for s in apply plan destroy; do
  ratio="$(medr "noop,$s,ratio")"
  case $s in
    apply) budget=2.0 ;;
    plan) budget=1.5 ;;
    destroy) budget=2.0 ;;
  esac
  if awk -v r="$ratio" -v b="$budget" 'BEGIN { exit !(r <= b) }'; then verdict=within; else verdict=MISSED; missed=1; fi
  rawf="$(medr "raw,$s,floor")"
  printf '| %-7s | %14s | %30s | %4s× | %6s | %-7s | %26s× | %18s× |\n' "$s" "$(med "noop,$s")" "$(med "takoform,$s")" "$ratio" "≤ ${budget}×" "$verdict" "$rawf" "$(medr "raw,$s,ratio")"
  widecol="not run" widerat="-"
  if [ -n "${times[wide,$s]:-}" ]; then widecol="$(med "wide,$s") ($(medr "wide,$s,floor")×)" widerat="$(medr "wide,$s,ratio")×"; fi
  wide_rows+="$(printf '| %-7s | %12s (%s×) | %20s | %20s | %20s |' "$s" "$(med "raw,$s")" "$rawf" "$widecol" "$(medr "raw,$s,ratio")×" "$widerat")"$'\n'
  if [ "$verdict" = MISSED ] && awk -v r="$rawf" -v b="$budget" 'BEGIN { exit !(r > b) }'; then
    notes+="$(printf '%s: the budget is below its floor on this box: noop_raw alone (OpenTofu with a do-nothing provider of the same schema) is %s× noop_thing, above the %s× budget; takoform is %s× noop_raw.' "$s" "$rawf" "$budget" "$(medr "raw,$s,ratio")")"$'\n'
  fi
done
printf '\nThe same schema width, doing nothing (ratios to noop_thing in brackets):\n\n'
printf '| step    | noop_raw (s)        | noop_wide (s)        | takoform / noop_raw | takoform / noop_wide |\n'
printf '| ------- | ------------------: | -------------------: | ------------------: | -------------------: |\n'
printf '%s' "$wide_rows"
if [ -n "$notes" ]; then printf '\n%s' "$notes"; fi
printf '\nState after apply (bytes of terraform.tfstate): noop_thing %s, noop_raw %s, takoform %s. noop_raw fills its computed strings with 20 bytes each, so its state holds about as much as takoform'"'"'s; OpenTofu'"'"'s own CPU grows with the state it holds (spec/decisions/0047-bench-provider-state-size.md).\n' "${state_bytes[noop]}" "${state_bytes[raw]}" "${state_bytes[takoform]}"
printf '\nCPU seconds (user + system, medians over rounds): tofu itself / its provider processes / the host:\n\n'
printf '| step    | noop_thing            | noop_raw              | noop_wide             | takoform              |\n'
printf '| ------- | --------------------- | --------------------- | --------------------- | --------------------- |\n'
for s in apply plan destroy; do
  row="| $(printf '%-7s' "$s") |"
  for p in noop raw wide takoform; do
    cell="not run"
    if [ -n "${times[$p,$s,tofu]:-}" ]; then cell="$(med "$p,$s,tofu") / $(med "$p,$s,prov") / $(med "$p,$s,host")"; fi
    row+="$(printf ' %-21s |' "$cell")"
  done
  echo "$row"
done
printf '\nThe same comparison in CPU seconds of all three (less sensitive to a busy box than wall time; medians of per-round ratios):\n\n'
printf '| step    | takoform / noop_thing | noop_raw / noop_thing | takoform / noop_raw |\n'
printf '| ------- | --------------------: | --------------------: | ------------------: |\n'
for s in apply plan destroy; do
  printf '| %-7s | %20s× | %20s× | %18s× |\n' "$s" "$(medr "noop,$s,cpuratio")" "$(medr "raw,$s,cpufloor")" "$(medr "raw,$s,cpuratio")"
done
ok=1
if [ "$missed" = 1 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
  exit 1
fi
