//! The schema chapters 1–12 keep; `run_in_background` itself is tested with the jobs crate.

use agent_core::ToolRegistry;
use agent_tools::{Background, BashConfig, Workspace, add_bash, bash};
use serde_json::json;

async fn call(registry: &ToolRegistry, arguments: serde_json::Value) -> String {
    agent_test_support::call_tool(registry, "bash", arguments).await
}

#[test]
fn with_background_off_the_schema_is_chapter_ones() {
    assert_eq!(bash::spec_for(&Background::Off), bash::spec());
    assert_eq!(
        bash::spec().parameters,
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run.", "minLength": 1}
            },
            "required": ["command"]
        })
    );
}

#[tokio::test]
async fn with_background_off_the_flag_is_an_unknown_field() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let registry = add_bash(ToolRegistry::builder(), &ws, BashConfig::default())
        .build()
        .unwrap();
    assert_eq!(
        call(
            &registry,
            json!({"command": "touch ran", "run_in_background": true})
        )
        .await,
        "Error [invalid_arguments]: $: unknown field `run_in_background`"
    );
    assert!(!dir.path().join("ran").exists());
}
