#!/usr/bin/env bash
# `just postgres`: a throwaway PostgreSQL server on 127.0.0.1 for chapter 17's board suite.
#
# Uses Debian's `postgresql` package (installed with apt-get when `initdb` is missing),
# `initdb`s into a fresh temporary folder, starts the server on a random free port with a
# random password (scram-sha-256), and prints the line to use:
#
#     AGENT_BOARD_PG_URL=postgres://board:<password>@127.0.0.1:<port>/postgres
#
# Run again while it is up: prints the same line. `just postgres-stop` stops it and deletes
# the folder. The server runs as a non-root user (PostgreSQL refuses root): `postgres` from
# the package, or `agentboard`, created when neither exists.
# Everything else goes to stderr, so `eval "export $(bash scripts/postgres.sh)"` works.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
# One server per checkout: the state folder is named after the checkout's path.
state="${TMPDIR:-/tmp}/agent-board-pg-$(printf %s "$repo" | sha256sum | cut -c1-12)"

say() { echo "postgres: $*" >&2; }

find_bin() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
    fi
}

bin="$(find_bin)"
if [ -z "$bin" ]; then
    say "initdb not found; installing Debian's postgresql package"
    if [ "$(id -u)" -ne 0 ]; then
        say "not root: install it with 'sudo apt-get install -y postgresql' and run again"
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y postgresql >&2 || { apt-get update >&2 && apt-get install -y postgresql >&2; }
    bin="$(find_bin)"
    [ -n "$bin" ] || { say "initdb still not found under /usr/lib/postgresql/*/bin"; exit 1; }
fi

# Who runs the server: ourselves unless root.
run_as=()
owner="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
    if id postgres >/dev/null 2>&1; then
        owner=postgres
    else
        id agentboard >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin agentboard
        owner=agentboard
    fi
    run_as=(runuser -u "$owner" --)
fi

if [ -f "$state/env" ] && "${run_as[@]}" "$bin/pg_ctl" -D "$state/data" status >/dev/null 2>&1; then
    say "already running (data in $state)"
    cat "$state/env"
    exit 0
fi
# A leftover from a server that is gone: start over.
rm -rf "$state"
mkdir -p "$state"
chmod 700 "$state"

free_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
        return
    fi
    local p
    for _ in $(seq 1 50); do
        p=$((20000 + RANDOM % 40000))
        # Nothing answers there: free.
        if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    return 1
}
port="$(free_port)"
password="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$password" > "$state/pwfile"
[ "$owner" = "$(id -un)" ] || chown -R "$owner" "$state"

# The server's user may not be allowed into the caller's folder (a clone under /root).
cd "$state"
say "initdb into $state/data (as $owner)"
"${run_as[@]}" "$bin/initdb" -D "$state/data" -U board --pwfile="$state/pwfile" \
    --auth-host=scram-sha-256 --auth-local=scram-sha-256 -E UTF8 --no-sync >"$state/initdb.log" 2>&1 \
    || { cat "$state/initdb.log" >&2; exit 1; }
rm -f "$state/pwfile"

# Tests only: no durability needed (fsync off), sockets in the state folder (the package's
# /var/run/postgresql may not be writable by this user), TCP on 127.0.0.1 only.
"${run_as[@]}" "$bin/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $state -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >&2 || { cat "$state/server.log" >&2; exit 1; }

echo "AGENT_BOARD_PG_URL=postgres://board:$password@127.0.0.1:$port/postgres" > "$state/env"
chmod 600 "$state/env"
say "running on 127.0.0.1:$port; stop it with 'just postgres-stop'"
cat "$state/env"
