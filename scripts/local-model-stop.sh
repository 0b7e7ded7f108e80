#!/usr/bin/env bash
# `just local-model-stop`: stop the server started by `just local-model`, by its pid file.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/.local-model"
pidfile="$dir/server.pid"
if [ ! -f "$pidfile" ]; then
    echo "local-model: no server pid file; nothing to stop" >&2
    exit 0
fi
pid="$(cat "$pidfile")"
if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    echo "local-model: stopped server $pid" >&2
else
    echo "local-model: server $pid was not running" >&2
fi
rm -f "$pidfile"
