#!/usr/bin/env bash
# walk.sh: which files and packages one create passes through, from the
# provider's ApplyResourceChange to the store and back (ARCHITECTURE.md
# §4). internal/provider's TestWalkCreates runs twice with coverage
# counters on every package of this module, applying 2 and then 7 creates
# (the same plans made in both runs); the code whose counters grew by at
# least one a create is the code one create runs. A measurement: it prints
# counts (--files: and the files) and checks nothing but that the creates
# succeed.
set -euo pipefail
files=0
[ "${1:-}" = --files ] && files=1
cd "$(dirname "$0")/.."
GO=${GO:-go}
base=2 more=7
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in $base $more; do
	TAKOFORM_WALK_CREATES=$n $GO test -count=1 -run '^TestWalkCreates$' -covermode=count -coverpkg=./... \
		-coverprofile="$dir/$n.out" ./internal/provider/ >"$dir/$n.log" 2>&1 || { cat "$dir/$n.log"; exit 1; }
done
module=$($GO list -m)
awk -v list=$files -v k=$((more - base)) -v module="$module/" '
	FNR == 1 { next }
	FILENAME ~ /\/'"$base"'\.out$/ { before[$1] += $3; next }
	{ after[$1] += $3; stmts[$1] = $2 }
	END {
		for (b in after) {
			if (after[b] - before[b] < k) continue
			split(b, at, ":"); f = at[1]; sub("^" module, "", f)
			files[f] = 1; n += stmts[b]
			p = f; sub("/[^/]*$", "", p); pkgs[p] = 1
		}
		for (f in files) { p = f; sub("/[^/]*$", "", p); perpkg[p]++ }
		nf = 0; for (f in files) nf++
		np = 0; for (p in pkgs) np++
		printf "one create: %d statements in %d files of %d packages\n", n, nf, np
		for (p in perpkg) printf "  %-40s %d files\n", p, perpkg[p] | "sort"
		close("sort")
		if (list) for (f in files) print "    " f | "sort"
	}' "$dir/$base.out" "$dir/$more.out"
