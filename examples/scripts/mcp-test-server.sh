#!/usr/bin/env bash
# Prints the path of agent-mcp's test server (crates/mcp/examples/mcp-test-server.rs), the MCP
# server chapter 19's page connects to offline. It is built next to the `agent-tutorial` found
# on PATH when it is not there yet (the first time takes a minute: rmcp's server side).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
bin="$(command -v agent-tutorial || true)"
if [ -n "$bin" ]; then
    server="$(dirname "$bin")/examples/mcp-test-server"
else
    server="${CARGO_TARGET_DIR:-$root/target}/debug/examples/mcp-test-server"
fi
if ! [ -x "$server" ]; then
    cargo build -q --manifest-path "$root/Cargo.toml" -p agent-mcp --example mcp-test-server >&2
fi
echo "$server"
