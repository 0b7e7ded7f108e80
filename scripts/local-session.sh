# Sourced (not run) by the scripts that drive chapters against the local model (e2e-local.sh,
# eval-local.sh, cache-report-local.sh): serves the model if it is not running, exports its
# OPENAI_* settings, builds the binaries, and sets `root` (the repository, also the working
# directory) and `bin` (the agent-tutorial binary, wherever CARGO_TARGET_DIR puts it).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/local-model.sh >/dev/null
set -a
# shellcheck disable=SC1091
. .local-model/env
set +a
cargo build -q -p agent-tutorial --bins
bin="${CARGO_TARGET_DIR:-$root/target}/debug/agent-tutorial"
