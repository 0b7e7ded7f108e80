//! The integration tests of `agent-mcp`: real server processes (the `mcp-test-server`
//! example), no mocks.

mod suite;
