//! `.mcp.json`: the shape, the checks, the boundary, the fingerprint and trust.

use std::collections::BTreeMap;
use std::time::Duration;

use agent_core::tool::ToolEffect;
use agent_mcp::config::{DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, MAX_CONFIG_BYTES};
use agent_mcp::{ConfigFile, McpConfig, NotTrusted, ServerConfig};
use agent_trust::Verdict;
use serde_json::json;

use super::Fixture;

fn parse_error(json: &serde_json::Value) -> String {
    McpConfig::parse(json.to_string().as_bytes())
        .unwrap_err()
        .to_string()
}

#[test]
fn claude_codes_shape_and_our_fields_are_read() {
    let config = McpConfig::parse(
        br#"{"mcpServers": {
            "files": {"type": "stdio", "command": "npx", "args": ["-y", "server"],
                      "env": {"ROOT": "/tmp"}, "cwd": "tools",
                      "startup_timeout_secs": 5, "tool_timeout_secs": 7,
                      "tools": {"read_file": {"effect": "read"}, "other": {}}},
            "plain": {"command": "srv"}
        }}"#,
    )
    .unwrap();
    let expected = BTreeMap::from([
        (
            "files".to_string(),
            ServerConfig {
                command: "npx".into(),
                args: vec!["-y".into(), "server".into()],
                env: BTreeMap::from([("ROOT".into(), "/tmp".into())]),
                cwd: Some("tools".into()),
                startup_timeout: Duration::from_secs(5),
                tool_timeout: Duration::from_secs(7),
                effects: BTreeMap::from([("read_file".into(), ToolEffect::Read)]),
            },
        ),
        (
            "plain".to_string(),
            ServerConfig {
                command: "srv".into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
                startup_timeout: DEFAULT_STARTUP_TIMEOUT,
                tool_timeout: DEFAULT_TOOL_TIMEOUT,
                effects: BTreeMap::new(),
            },
        ),
    ]);
    assert_eq!(config.servers(), &expected);
    let files = &config.servers()["files"];
    assert_eq!(
        [
            files.effect_of("read_file"),
            files.effect_of("other"),
            files.effect_of("unnamed")
        ],
        [ToolEffect::Read, ToolEffect::External, ToolEffect::External]
    );
}

#[test]
fn an_empty_file_object_names_no_server() {
    assert_eq!(McpConfig::parse(b"{}").unwrap(), McpConfig::default());
}

#[test]
fn bad_configs_are_typed_errors() {
    let cases = [
        (
            json!({"mcpServers": {"s": {"comand": "x"}}}),
            ".mcp.json is not valid: unknown field `comand`, expected one of `type`, `command`, \
             `args`, `env`, `cwd`, `startup_timeout_secs`, `tool_timeout_secs`, `tools` at line 1 \
             column 28",
        ),
        (
            json!({"mcpServers": {"s": {"command": "x", "env": {"OPENAI_API_KEY": "sk"}}}}),
            "MCP server `s`: environment variable `OPENAI_API_KEY` may not be set",
        ),
        (
            json!({"mcpServers": {"s": {"command": "x", "env": {"A=B": "1"}}}}),
            "MCP server `s`: environment variable `A=B` may not be set",
        ),
        (
            json!({"mcpServers": {"my-server": {"command": "x"}, "my_server": {"command": "y"}}}),
            "MCP server aliases `my-server` and `my_server` both name their tools `mcp__my_server__…`",
        ),
        (
            json!({"mcpServers": {"a__b": {"command": "x"}}}),
            "MCP server alias `a__b` is invalid: use 1-24 characters from a-z, A-Z, 0-9, `_` and \
             `-`, without `__`",
        ),
        (
            json!({"mcpServers": {"s": {"type": "http", "command": "x"}}}),
            "MCP server `s`: transport `http` is not supported (only `stdio`)",
        ),
        (
            json!({"mcpServers": {"s": {"command": ""}}}),
            "MCP server `s`: `command` is empty",
        ),
        (
            json!({"mcpServers": {"s": {"command": "x", "startup_timeout_secs": 0}}}),
            "MCP server `s`: `startup_timeout_secs` must be between 1 and 600, not 0",
        ),
        (
            json!({"mcpServers": {"s": {"command": "x", "tool_timeout_secs": 3601}}}),
            "MCP server `s`: `tool_timeout_secs` must be between 1 and 3600, not 3601",
        ),
        (
            json!({"mcpServers": {"s": {"command": "x", "tools": {"t": {"effect": "everything"}}}}}),
            ".mcp.json is not valid: unknown variant `everything`, expected one of `read`, \
             `write`, `execute`, `external`, `state` at line 1 column 69",
        ),
        (
            json!({"mcpServers": {"s": {"command": "x\u{0}"}}}),
            "MCP server `s`: command contains a NUL byte",
        ),
        (
            json!({"mcpServers": {"s": {"command": "x", "args": vec!["a"; 257]}}}),
            "MCP server `s`: `args` has 257 entries; at most 256 are allowed",
        ),
    ];
    for (json, expected) in cases {
        assert_eq!(parse_error(&json), expected, "{json}");
    }
    let many: serde_json::Map<_, _> = (0..33)
        .map(|i| (format!("s{i}"), json!({"command": "x"})))
        .collect();
    assert_eq!(
        parse_error(&json!({"mcpServers": many})),
        ".mcp.json names 33 servers; at most 32 are allowed"
    );
    assert_eq!(
        McpConfig::parse(b"{\"mcpServers\": ")
            .unwrap_err()
            .to_string(),
        ".mcp.json is not valid: EOF while parsing a value at line 1 column 15"
    );
}

#[test]
fn a_missing_file_is_no_config() {
    let fixture = Fixture::new();
    assert_eq!(ConfigFile::load(&fixture.workspace).unwrap(), None);
}

#[test]
fn the_file_is_read_with_its_fingerprint() {
    let fixture = Fixture::new();
    let bytes = br#"{"mcpServers": {"s": {"command": "x"}}}"#;
    std::fs::write(fixture.path(".mcp.json"), bytes).unwrap();
    let file = ConfigFile::load(&fixture.workspace).unwrap().unwrap();
    assert_eq!(file.fingerprint(), agent_trust::sha256_hex(bytes));
    assert_eq!(file, ConfigFile::from_bytes(bytes).unwrap());
    assert_eq!(file.config().servers().keys().collect::<Vec<_>>(), ["s"]);
}

#[test]
fn a_huge_file_is_refused_before_it_is_read() {
    let fixture = Fixture::new();
    let file = std::fs::File::create(fixture.path(".mcp.json")).unwrap();
    file.set_len(MAX_CONFIG_BYTES + 1).unwrap();
    assert_eq!(
        ConfigFile::load(&fixture.workspace)
            .unwrap_err()
            .to_string(),
        "cannot read .mcp.json: `.mcp.json` is 262145 bytes, over the limit of 262144 bytes"
    );
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let fixture = Fixture::new();
    let path = std::ffi::CString::new(
        fixture
            .path(".mcp.json")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: mkfifo only creates a file at a path we own.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    assert_eq!(
        ConfigFile::load(&fixture.workspace)
            .unwrap_err()
            .to_string(),
        "cannot read .mcp.json: `.mcp.json` is a FIFO (named pipe), not a regular file"
    );
}

#[test]
fn a_symlink_out_of_the_workspace_is_refused() {
    let fixture = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("mcp.json");
    std::fs::write(&target, br#"{"mcpServers": {}}"#).unwrap();
    std::os::unix::fs::symlink(&target, fixture.path(".mcp.json")).unwrap();
    assert_eq!(
        ConfigFile::load(&fixture.workspace)
            .unwrap_err()
            .to_string(),
        "cannot read .mcp.json: `.mcp.json` resolves outside the workspace"
    );
}

#[test]
fn only_a_trusted_file_is_admitted() {
    let bytes = br#"{"mcpServers": {"s": {"command": "x"}}}"#;
    let file = || ConfigFile::from_bytes(bytes).unwrap();
    for verdict in [Verdict::Untrusted, Verdict::Changed] {
        assert_eq!(file().admit(verdict), Err(NotTrusted { verdict }));
    }
    assert_eq!(
        NotTrusted {
            verdict: Verdict::Changed
        }
        .to_string(),
        ".mcp.json is changed since it was trusted; no MCP server starts (run `agent-tutorial \
         trust` to trust it)"
    );
    let trusted = file().admit(Verdict::Trusted).unwrap();
    assert_eq!(trusted.servers(), file().config().servers());
}
