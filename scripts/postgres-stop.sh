#!/usr/bin/env bash
# `just postgres-stop`: stops the server `just postgres` started for this checkout and deletes
# its temporary folder (data, logs, the URL).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
state="${TMPDIR:-/tmp}/agent-board-pg-$(printf %s "$repo" | sha256sum | cut -c1-12)"
if [ ! -d "$state" ]; then
    echo "postgres: no server for this checkout; nothing to stop" >&2
    exit 0
fi
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -n "$bin" ] && [ -d "$state/data" ]; then
    cd "$state"
    owner="$(stat -c %U "$state/data")"
    run_as=()
    [ "$(id -u)" -ne 0 ] || run_as=(runuser -u "$owner" --)
    "${run_as[@]}" "$bin/pg_ctl" -D "$state/data" -m fast -w stop >&2 || true
fi
rm -rf "$state"
echo "postgres: stopped; removed $state" >&2
