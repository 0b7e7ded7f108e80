#!/usr/bin/env bash
# `just chNN ...`, `just run N ...`, `just local N ...`: build the chapter's binary, then `exec` it
# (so no waiting parent — `cargo run` or this shell — holds the key in its environment).
#
#   run-chapter.sh N [args...]
#
# With OPENAI_API_KEY in the environment or in the working directory's `.env`, the chapter runs
# with that configuration, exactly as the binary would. Without one (a fresh machine), it says so
# in one line, sets up and serves the local model (scripts/local-model.sh: the first time it
# downloads the weights and the llama.cpp source and builds the server, saying how long that took
# last time), and runs the chapter against it with the local settings (temperature 0,
# --max-tokens 512, --max-turns 8, --final-answer), each unless the arguments set it already.
# `--script`, `--help` and `--version` need no model, so they never start one.
#
# The binary itself never does this: a library program does not download anything by surprise;
# it exits 2 and says what is missing.
#
# Environment: USE_LOCAL_MODEL=1 uses the local model even with a key (`just local`);
# LOCAL_MODEL_SETUP, a command that prints `export OPENAI_...=...` lines (default:
# scripts/local-model.sh); AGENT_TUTORIAL_BIN_DIR, where the built binaries are (default: build
# them with cargo into CARGO_TARGET_DIR or target/). The last two let the tests drive this script
# without a download or a nested cargo build.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: run-chapter.sh N [args...]" >&2; exit 2; }
chapter="$1"
shift
case "$chapter" in
    [0-9] | [0-9][0-9]) bin_name="$(printf 'ch%02d' "$((10#$chapter))")" ;;
    *) echo "run-chapter.sh: not a chapter number: $chapter" >&2; exit 2 ;;
esac

configured() {
    [ -n "${OPENAI_API_KEY:-}" ] && return 0
    # The binary reads `.env` from its working directory: the same rule, the same file.
    [ -f .env ] && grep -Eq '^[[:space:]]*(export[[:space:]]+)?OPENAI_API_KEY=.' .env
}

# A chapter with a binary runs it; any other number goes to `agent-tutorial run --chapter N`,
# which says what is wrong (planned, or no such chapter) without a model.
if [ -f "$root/chapters/$bin_name/main.rs" ]; then
    command=("$bin_name")
    needs_model=yes
else
    command=(agent-tutorial run --chapter "$chapter")
    needs_model=""
fi
for arg in "$@"; do
    case "$arg" in
        --script | --script=* | -h | --help | -V | --version) needs_model="" ;;
    esac
done

local_flags=()
if [ -n "$needs_model" ] && { [ "${USE_LOCAL_MODEL:-}" = 1 ] || ! configured; }; then
    if [ "${USE_LOCAL_MODEL:-}" != 1 ]; then
        echo "no OPENAI_* configuration (environment or .env): using the local model, SmolLM2-135M on 127.0.0.1 (set OPENAI_API_KEY, OPENAI_MODEL to use another)" >&2
    fi
    # The setup's progress goes to stderr; its stdout is the settings, one `export K=V` a line.
    if [ -n "${LOCAL_MODEL_SETUP:-}" ]; then
        settings="$(bash -c "$LOCAL_MODEL_SETUP")"
    else
        settings="$(bash "$root/scripts/local-model.sh")"
    fi
    while IFS= read -r line; do
        line="${line#export }"
        case "$line" in
            OPENAI_*=*) export "${line?}" ;;
        esac
    done <<<"$settings"
    # The local settings, each unless the caller set it.
    has() {
        local want="$1" arg
        for arg in "${@:2}"; do
            case "$arg" in "$want" | "$want"=*) return 0 ;; esac
        done
        return 1
    }
    has --temperature "$@" || local_flags+=(--temperature 0)
    has --max-tokens "$@" || local_flags+=(--max-tokens 512)
    has --max-turns "$@" || local_flags+=(--max-turns 8)
    has --final-answer "$@" || local_flags+=(--final-answer)
fi

if [ -n "${AGENT_TUTORIAL_BIN_DIR:-}" ]; then
    bin_dir="$AGENT_TUTORIAL_BIN_DIR"
else
    # A chapter binary is a launcher for `agent-tutorial` (chapters/launcher.rs): build both,
    # or the launcher would start a missing or stale harness.
    bins=(--bin agent-tutorial)
    [ "${command[0]}" = agent-tutorial ] || bins+=(--bin "${command[0]}")
    (cd "$root" && cargo build -q -p agent-tutorial "${bins[@]}")
    target="${CARGO_TARGET_DIR:-$root/target}"
    case "$target" in /*) ;; *) target="$root/$target" ;; esac
    bin_dir="$target/debug"
fi
exec "$bin_dir/${command[0]}" "${command[@]:1}" "${local_flags[@]}" "$@"
