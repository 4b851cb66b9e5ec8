# Shared by demo.sh and bench-provider.sh (sourced, not run). Needs $work,
# $bin and $label set; sets $host_pid, $endpoint and $token.

host_pid=""
ok=0

# cleanup stops the host (the script never leaves it running) and keeps the
# working files when the script failed.
cleanup() {
  if [ -n "$host_pid" ] && kill -0 "$host_pid" 2>/dev/null; then
    kill -TERM "$host_pid" 2>/dev/null || true
    wait "$host_pid" 2>/dev/null || true
  fi
  if [ "$ok" = 1 ]; then
    rm -rf "$work"
  else
    echo "$label: FAILED; host log and working files kept in $work" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# use_dev_overrides writes our own CLI config: every provider named as
# ADDRESS comes from $bin, never from a registry; it replaces whatever
# TF_CLI_CONFIG_FILE the environment names.
use_dev_overrides() {
  {
    echo 'provider_installation {'
    echo '  dev_overrides {'
    for addr in "$@"; do echo "    \"$addr\" = \"$bin\""; done
    echo '  }'
    echo '  direct {}'
    echo '}'
  } >"$work/tofu.rc"
  export TF_CLI_CONFIG_FILE="$work/tofu.rc"
  export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1
  unset TF_CLI_ARGS TF_CLI_ARGS_plan TF_CLI_ARGS_apply TF_CLI_ARGS_destroy TF_WORKSPACE TF_DATA_DIR
}

# start_host starts `takoform host serve` on a fresh SQLite file in $work,
# on a free loopback port with a one-off dev token, and waits for it; its
# arguments are added to the command line.
start_host() {
  token="$label-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
  "$bin/takoform" host serve --listen 127.0.0.1:0 --data "$work/host.db" --dev-token "$token" "$@" \
    >"$work/host.log" 2>&1 &
  host_pid=$!
  endpoint=""
  for _ in $(seq 1 200); do
    endpoint="$(sed -n 's/^takoform host serving \(https\{0,1\}:\/\/[^ ]*\) .*/\1/p' "$work/host.log" 2>/dev/null || true)" # not yet written: retry
    [ -n "$endpoint" ] && return 0
    kill -0 "$host_pid" 2>/dev/null || { cat "$work/host.log" >&2; echo "$label: the host exited" >&2; exit 1; }
    sleep 0.05
  done
  cat "$work/host.log" >&2
  echo "$label: the host did not start" >&2
  exit 1
}
