#!/usr/bin/env bash
# `just cache-report-local`: chapter 10's five-turn session against the local model
# (llama-server, `just local-model`), once per memory placement, with `--cache-report=json`:
# per request the bytes, the stable prefix, the server's prompt and cached tokens and the
# whole-request time; then the server log's prompt-cache lines of each run.
#
# Reproducible as far as a real model allows: a fixed workspace path (it is in the prompt),
# temperature 0, the same five prompts, three memories whose keyword matches change the
# selection on turns 2 and 4 (the 135M model cannot answer the selection call with a JSON list
# of names, so the harness's keyword fallback selects, deterministically), at most 4 requests
# per turn with the last one tool-less (`--final-answer`). How many tool rounds a turn gets is
# the model's choice, so the shape is not the offline test's three rounds per turn.
set -euo pipefail

# shellcheck source=scripts/local-session.sh
. "$(dirname "$0")/local-session.sh"
log="$root/.local-model/server.log"
work=/tmp/agent-tutorial-cache
trap 'rm -rf "$work"' EXIT

prompts=(
    "How is the code formatted?"
    "How are the tests run?"
    "Run the tests again and say how they are run."
    "What is notes.txt for?"
    "Shorten notes.txt, it is for notes."
)

for placement in prompt reminder; do
    rm -rf "$work"
    mkdir -p "$work/ws/src"
    printf 'alpha\nbeta\n' >"$work/ws/notes.txt"
    printf 'fn main() {\n\tprintln!("hi");\n}\n' >"$work/ws/src/main.rs"
    "$bin" memory --workspace "$work/ws" add style --type project \
        --description "How code here is formatted" --body "Tabs in .rs files." >/dev/null
    "$bin" memory --workspace "$work/ws" add tests --type project \
        --description "How tests are run" --body "cargo test, offline." >/dev/null
    "$bin" memory --workspace "$work/ws" add notes --type project \
        --description "What notes.txt is for" --body "A scratch list; keep it short." >/dev/null
    log_start=$(wc -l <"$log")
    start=$SECONDS
    printf '%s\n' "${prompts[@]}" | "$bin" run --chapter 10 --workspace "$work/ws" \
        --temperature 0 --max-tokens 64 --max-turns 4 --final-answer --approve all \
        --request-timeout 120 --memory-placement "$placement" --cache-report=json \
        >"$work/out" 2>"$work/err" || echo "cache-report-local: the $placement run exited $?" >&2
    echo "== --memory-placement $placement ($((SECONDS - start)) s in all)"
    grep '^\[memory\] selected' "$work/err" | paste -sd';' | sed 's/\[memory\] selected: //g; s/^/memory selected per turn: /'
    python3 - "$work/err" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
rows = json.loads(text[text.index("[\n"):])
print(f"{'#':>3} {'bytes':>6} {'ratio':>6} {'prompt':>7} {'cached':>7} {'ms':>6}")
for r in rows:
    cached = "-" if r["cached_prompt_tokens"] is None else r["cached_prompt_tokens"]
    print(f"{r['request']:>3} {r['bytes']:>6} {r['stable_prefix_ratio']:>6.3f} "
          f"{r['prompt_tokens'] or '-':>7} {cached:>7} {r['elapsed_ms'] or '-':>6}")
prompt = sum(r["prompt_tokens"] or 0 for r in rows)
cached = sum(r["cached_prompt_tokens"] or 0 for r in rows)
ms = sum(r["elapsed_ms"] or 0 for r in rows)
later = rows[1:]
mean = sum(r["stable_prefix_ratio"] for r in later) / max(len(later), 1)
print(f"requests {len(rows)}; mean stable prefix (2nd on) {mean:.3f}; "
      f"cached {cached} of {prompt} prompt tokens ({100 * cached / max(prompt, 1):.0f} %); "
      f"{ms} ms in requests")
PY
    echo "server log (tokens each request evaluated, i.e. not served from its cache; memory side calls included):"
    tail -n +"$((log_start + 1))" "$log" | grep -E 'prompt eval time' | sed 's/^/    /' | head -n 60 || true
done
