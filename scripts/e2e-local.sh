#!/usr/bin/env bash
# `just e2e-local`: chapters 1, 2, 10 and 11 against a real model (SmolLM2-135M served locally).
#
# What is asserted is what a tiny model reliably does at temperature 0: each run exits 0
# within its turn limit (a request the server rejects ends the run non-zero), the server logs
# no error, and chapter 10's requests carry the rendered `## identity … ## workspace` system
# prompt. What the model *says* is not asserted, nor that it calls a tool: on llama-server with a
# template that describes the tools, SmolLM2-135M answers in text (the old route's
# llama-cpp-python grammar pushed it into calls, which it then could not see the results of).
#
# And the model sees what its tools return (scripts/local_checks.py): a fixed conversation
# (a read_file call and its result "The database is named quokka.") is rendered with its result
# and answered from it (the answer names quokka); every request the
# harness sent (`--record`) is rendered by llama-server's own `/apply-template`, and the text of
# each tool result in it must be in that prompt; no tool-call argument the harness received is
# HTML-escaped (`&#34;`, `&quot;`, `&amp;`). Both failed on the old llama-cpp-python route: its
# `chatml-function-calling` template dropped tool results and rendered with autoescape on.
#
# SmolLM2-135M never stops calling tools by itself once it has started (measured: 0 of 9
# prompts ended within 6 turns), so the runs use `--final-answer`: the last request the turn
# limit allows is sent without tools and the model has to answer in text.
set -euo pipefail

# shellcheck source=scripts/local-session.sh
. "$(dirname "$0")/local-session.sh"
# A fixed path: the workspace path is part of the prompt, and at temperature 0 the same prompt
# gives the same generations, so every run (here, in CI) replays the same session.
work=/tmp/agent-tutorial-e2e
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws"
printf 'The launch code is 4242.\n' >"$work/ws/notes.txt"

log="$root/.local-model/server.log"
failures=0
fail() { echo "e2e: FAIL: $*" >&2; failures=$((failures + 1)); }

run_chapter() {
    local chapter="$1" prompt="$2"
    local out="$work/ch$chapter.out" err="$work/ch$chapter.err" rec="$work/ch$chapter.jsonl"
    local log_start
    log_start=$(wc -l <"$log")
    local start=$SECONDS code=0
    "$bin" run --chapter "$chapter" --workspace "$work/ws" --prompt "$prompt" \
        --temperature 0 --max-tokens 256 --max-turns 4 --final-answer --approve all --record "$rec" \
        --request-timeout 120 \
        >"$out" 2>"$err" || code=$?
    local calls requests
    calls=$(grep -c '^\[tool\] ' "$err" || true)
    requests=$(wc -l <"$rec")
    echo "e2e: chapter $chapter: exit $code, $requests requests, $calls tool calls, $((SECONDS - start))s"
    [ "$code" -eq 0 ] || { fail "chapter $chapter exited $code"; sed 's/^/    /' "$err" >&2; }
    if tail -n +"$((log_start + 1))" "$log" | grep -E 'got exception|task id = [0-9]+, error' >&2; then
        fail "chapter $chapter: the server logged an error"
    fi
    local checked
    if checked=$(python3 scripts/local_checks.py check "$rec" "${OPENAI_BASE_URL%/v1}"); then
        echo "e2e: chapter $chapter: $checked"
    else
        fail "chapter $chapter: the model did not see its tool results as sent ($checked)"
    fi
    if [ "$chapter" -ge 10 ]; then
        python3 - "$rec" <<'PY' || fail "chapter $chapter: a request lacks the rendered system prompt"
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    system = json.loads(line)["messages"][0]
    text = system.get("content", "")
    assert system["role"] == "system", f"request {n}: first message is {system['role']}"
    assert text.startswith("## identity\n"), f"request {n}: prompt does not start with ## identity"
    i, t, w = text.find("## identity"), text.find("\n\n## tools\n"), text.find("\n\n## workspace\n")
    assert 0 <= i < t < w, f"request {n}: sections out of order"
PY
    fi
}

if probed=$(python3 scripts/local_checks.py probe "${OPENAI_BASE_URL%/v1}" "$OPENAI_MODEL"); then
    echo "e2e: probe: $probed"
else
    fail "probe: the model did not see its tool result ($probed)"
fi

run_chapter 1 "Run the command: cat notes.txt"
run_chapter 2 "Read notes.txt"
run_chapter 10 "Read notes.txt"
# Chapter 11: the same loop through the recovery layer (retries, fallback, truncation); with a
# healthy server nothing is retried, so it must behave like chapter 10.
run_chapter 11 "Read notes.txt"

if [ "$failures" -gt 0 ]; then
    echo "e2e: $failures failed" >&2
    exit 1
fi
echo "e2e: all chapters passed against $OPENAI_MODEL at $OPENAI_BASE_URL"
