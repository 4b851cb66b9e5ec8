#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and trials (Debian's PostgreSQL,
# 15 or newer). It installs the Debian packages when no initdb is found
# (apt-get update first), creates a cluster in a temporary directory as an
# unprivileged user (nobody, when run as root), starts it on a free loopback
# port with password authentication and fsync on, and stops it and deletes
# the directory on exit.
#
#   scripts/postgres.sh run -- COMMAND [ARG…]
#       runs COMMAND with TAKOFORM_TEST_POSTGRES set to the cluster's URL
#       and exits with COMMAND's status. When TAKOFORM_TEST_POSTGRES is
#       already set, COMMAND runs against that server and none is started.
#   scripts/postgres.sh start
#       prints the URL and keeps the cluster up until interrupted.
#
# The URL is postgres://takoform:PASSWORD@127.0.0.1:PORT/postgres; tests
# create one database per test from it. The password is random per run.
set -euo pipefail

usage() {
  echo "usage: $0 run -- COMMAND [ARG...] | $0 start" >&2
  exit 2
}

[ $# -ge 1 ] || usage
mode="$1"
shift
case "$mode" in
run)
  [ "${1:-}" = "--" ] && shift
  [ $# -ge 1 ] || usage
  if [ -n "${TAKOFORM_TEST_POSTGRES:-}" ]; then
    exec "$@"
  fi
  ;;
start) [ $# -eq 0 ] || usage ;;
*) usage ;;
esac

# pg_bin finds the newest installed server's binaries.
pg_bin() {
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then
    echo "$d"
  fi
}

bin="$(pg_bin)"
if [ -z "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "postgres.sh: PostgreSQL is not installed and installing it needs root: run 'apt-get install postgresql' (Debian's PostgreSQL 15 or newer)" >&2
    exit 1
  fi
  echo "postgres.sh: installing PostgreSQL from the Debian packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y --no-install-recommends postgresql >&2
  bin="$(pg_bin)"
  if [ -z "$bin" ]; then
    echo "postgres.sh: apt-get installed postgresql but no /usr/lib/postgresql/*/bin/initdb was found" >&2
    exit 1
  fi
fi
version="$("$bin/postgres" --version | sed 's/[^0-9]*\([0-9][0-9]*\).*/\1/')"
if [ "$version" -lt 15 ]; then
  echo "postgres.sh: found PostgreSQL $version in $bin; Takoform needs 15 or newer" >&2
  exit 1
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/takoform-pg.XXXXXX")"
as_user=()
if [ "$(id -u)" = 0 ]; then
  chown nobody "$dir"
  as_user=(runuser -u nobody --)
fi
chmod 700 "$dir"

started=0
sleeper=""
cleanup() {
  if [ -n "$sleeper" ]; then
    kill "$sleeper" 2>/dev/null || true
  fi
  if [ "$started" = 1 ]; then
    "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$password" >"$dir/pwfile"
[ "$(id -u)" = 0 ] && chown nobody "$dir/pwfile"
if ! "${as_user[@]}" "$bin/initdb" -D "$dir/data" -U takoform --pwfile="$dir/pwfile" \
  --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
  cat "$dir/initdb.log" >&2
  echo "postgres.sh: initdb failed" >&2
  exit 1
fi
rm -f "$dir/pwfile"

# A free port: the kernel hands one out for a listener we close at once;
# the server retries another if it lost the race.
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  echo "postgres.sh: no free loopback port found" >&2
  return 1
}

for attempt in 1 2 3 4 5; do
  port="$(free_port)"
  if "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=on" start >/dev/null; then
    started=1
    break
  fi
  if [ "$attempt" = 5 ]; then
    cat "$dir/server.log" >&2 || true
    echo "postgres.sh: the server did not start" >&2
    exit 1
  fi
done

url="postgres://takoform:$password@127.0.0.1:$port/postgres?sslmode=disable"
echo "postgres.sh: PostgreSQL $version on 127.0.0.1:$port (data directory $dir/data, owned by ${as_user[2]:-$(id -un)}; stopped and removed on exit)" >&2
if [ "$mode" = start ]; then
  echo "$url"
  while :; do
    sleep 3600 &
    sleeper=$!
    wait "$sleeper"
  done
fi
set +e
TAKOFORM_TEST_POSTGRES="$url" "$@"
status=$?
exit $status
