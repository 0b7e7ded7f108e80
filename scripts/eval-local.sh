#!/usr/bin/env bash
# `just eval-local`: five fixed small tasks against the local model (SmolLM2-135M on
# llama-server), so a reader knows what a 135M model can and cannot do with this harness.
#
# Each task runs in a fresh scratch copy of examples/workspace, with the settings of
# `just local` (temperature 0, --max-tokens 512, --max-turns 8, --final-answer), through
# chapter 2 (bash + the file tools) and chapter 1 (bash only). Success is judged from the
# outcome only (the file's content, the answer's text), never from how the model got there;
# the harness is not tuned to these tasks. Prints one table row per run; always exits 0 unless
# the set-up fails (a run that crashes is a failed task, shown with its exit code).
#
# CHAPTERS="2" just eval-local runs one chapter only.
set -euo pipefail

# shellcheck source=scripts/local-session.sh
. "$(dirname "$0")/local-session.sh"
# A fixed path: at temperature 0 the same prompt gives the same run, here and elsewhere.
work=/tmp/agent-tutorial-eval
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"

# What each task is asked, and what counts as done.
prompt_fact="On which day does version 0.3 ship? The answer is in notes.txt."
prompt_create="Create a file named hello.txt that contains exactly this text: Hello, world!"
prompt_list="Which two files are at the top level of this folder? Give their names."
prompt_typo="Fix the typo in notes.txt."
prompt_echo="Run the command \`echo 42\` and tell me what it printed."

# Each check gets the workspace, the answer (stdout) and the record; exit 0 = success.
check_fact() { grep -qi 'friday' "$2"; }
check_create() { [ -f "$1/hello.txt" ] && [ "$(cat "$1/hello.txt")" = "Hello, world!" ]; }
check_list() { grep -q 'notes\.txt' "$2" && grep -q 'README\.md' "$2"; }
check_typo() { sed 's/teh loop/the loop/' "$root/examples/workspace/notes.txt" | cmp -s - "$1/notes.txt"; }
# `42` in the answer is not enough (the prompt says it): a command must have printed it.
check_echo() {
    grep -q '42' "$2" && python3 - "$3" <<'PY'
import json, sys
last = [json.loads(line) for line in open(sys.argv[1])][-1]
printed = any(
    line.strip() == "42" for m in last["messages"] if m["role"] == "tool" for line in m["content"].splitlines()
)
sys.exit(0 if printed else 1)
PY
}

tasks=(fact create list typo echo)
declare -A passed total
printf '%-8s %3s  %-7s %8s %10s %7s %5s\n' task ch success requests "tool calls" seconds exit
for chapter in ${CHAPTERS:-2 1}; do
    passed[$chapter]=0
    total[$chapter]=0
    for task in "${tasks[@]}"; do
        ws="$work/ws"
        rm -rf "$ws" "$work/rec.jsonl"
        cp -r "$root/examples/workspace" "$ws"
        prompt_var="prompt_$task"
        start=$SECONDS
        code=0
        "$bin" run --chapter "$chapter" --workspace "$ws" --prompt "${!prompt_var}" \
            --temperature 0 --max-tokens 512 --max-turns 8 --final-answer --approve all \
            --record "$work/rec.jsonl" --request-timeout 120 \
            >"$work/answer.txt" 2>"$work/stderr.txt" </dev/null || code=$?
        seconds=$((SECONDS - start))
        requests=$(wc -l <"$work/rec.jsonl" 2>/dev/null || echo 0)
        calls=$(grep -c '^\[tool\] ' "$work/stderr.txt" || true)
        success=no
        if [ "$code" -eq 0 ] && "check_$task" "$ws" "$work/answer.txt" "$work/rec.jsonl"; then
            success=yes
            passed[$chapter]=$((passed[$chapter] + 1))
        fi
        total[$chapter]=$((total[$chapter] + 1))
        printf '%-8s %3s  %-7s %8s %10s %7s %5s\n' "$task" "$chapter" "$success" "$requests" "$calls" "$seconds" "$code"
        if [ -n "${EVAL_VERBOSE:-}" ]; then
            sed 's/^/    | /' "$work/stderr.txt" "$work/answer.txt"
        fi
    done
done
for chapter in ${CHAPTERS:-2 1}; do
    echo "eval: chapter $chapter: ${passed[$chapter]} of ${total[$chapter]} tasks done ($OPENAI_MODEL)"
done
