# agent-tutorial: one recipe per chapter, one test recipe per chapter, and the checks CI runs.
# Arguments after a recipe name are passed through unchanged, e.g.
#   just ch02 --prompt "Read notes.txt and summarize it"

set positional-arguments

# Test targets shared by every chapter: the crates' own tests.
crates := "-p agent-core -p agent-tools -p agent-openai"

default:
    @just --list

# Chapter 1: the loop with `bash`.
ch01 *args:
    cargo run -q -p agent-tutorial --bin ch01 -- "$@"

# Chapter 2: the tool registry and workspace-confined file tools.
ch02 *args:
    cargo run -q -p agent-tutorial --bin ch02 -- "$@"

# Chapter 1's acceptance tests and the unit tests of what it uses (offline).
test-ch01:
    cargo test {{crates}}
    cargo test -p agent-tutorial --lib --test acceptance -- ch01:: cli::

# Chapter 2's acceptance tests (cumulative) and the unit tests of what it uses (offline).
test-ch02:
    cargo test {{crates}}
    cargo test -p agent-tutorial --lib --test acceptance -- ch01:: ch02:: cli::

# Every test in the workspace (offline, no credentials).
test:
    cargo test --workspace

# Formatting and clippy, as CI runs them.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Benchmarks (divan); medians are printed per benchmark.
bench:
    cargo bench -p agent-core -p agent-tools
