use std::sync::Arc;

use agent_core::schema::{SchemaError, SchemaMode};
use agent_core::{
    CallSummary, PreparedCall, RegistryError, ToolFailure, ToolHandler, ToolRegistry,
};
use serde_json::json;

use super::{Echo, call, echo_spec};

#[test]
fn build_pairs_specs_with_handlers() {
    let missing = ToolRegistry::builder().spec(echo_spec("echo")).build();
    assert_eq!(
        missing.unwrap_err(),
        RegistryError::MissingHandler("echo".into())
    );

    let orphan = ToolRegistry::builder()
        .handler("ghost", Arc::new(Echo))
        .build();
    assert_eq!(
        orphan.unwrap_err(),
        RegistryError::HandlerWithoutSpec("ghost".into())
    );

    let twice = ToolRegistry::builder()
        .tool(echo_spec("echo"), Arc::new(Echo))
        .spec(echo_spec("echo"))
        .build();
    assert_eq!(
        twice.unwrap_err(),
        RegistryError::MissingHandler("echo".into())
    );

    let bad_name = ToolRegistry::builder()
        .tool(echo_spec("read-file"), Arc::new(Echo))
        .build();
    assert_eq!(
        bad_name.unwrap_err(),
        RegistryError::InvalidName("read-file".into())
    );
}

#[test]
fn several_names_can_share_one_handler_and_order_is_kept() {
    let shared = Arc::new(Echo);
    let registry = ToolRegistry::builder()
        .spec(echo_spec("zeta"))
        .spec(echo_spec("alpha"))
        .handler("zeta", shared.clone())
        .handler("alpha", shared)
        .build()
        .unwrap();
    assert_eq!(registry.names(), vec!["zeta", "alpha"]);
}

#[test]
fn a_live_registry_accepts_new_tools_and_rejects_duplicates() {
    let registry = ToolRegistry::builder()
        .tool(echo_spec("echo"), Arc::new(Echo))
        .build()
        .unwrap();
    registry
        .register(echo_spec("echo2"), Arc::new(Echo))
        .unwrap();
    assert_eq!(
        registry.register(echo_spec("echo"), Arc::new(Echo)),
        Err(RegistryError::Duplicate("echo".into()))
    );
    assert_eq!(registry.names(), vec!["echo", "echo2"]);
}

/// The stamp moves with every accepted registration (not with a refused one) and never
/// equals another registry's, so a cache may compare it instead of the names.
#[test]
fn the_stamp_names_one_state_of_one_registry() {
    let registry = ToolRegistry::builder()
        .tool(echo_spec("echo"), Arc::new(Echo))
        .build()
        .unwrap();
    let twin = ToolRegistry::builder()
        .tool(echo_spec("echo"), Arc::new(Echo))
        .build()
        .unwrap();
    let first = registry.stamp();
    assert_ne!(first, twin.stamp());
    assert!(
        registry
            .register(echo_spec("echo"), Arc::new(Echo))
            .is_err()
    );
    assert_eq!(registry.stamp(), first);
    registry
        .register(echo_spec("echo2"), Arc::new(Echo))
        .unwrap();
    let (stamp, names) = registry.stamped_names();
    assert_ne!(stamp, first);
    assert_eq!(
        (stamp, names),
        (
            registry.stamp(),
            vec!["echo".to_string(), "echo2".to_string()]
        )
    );
}

/// Removing tools (chapter 19: a server disconnected) keeps the others in order and gives a
/// new stamp, also when a registration brings the count back to what it was.
#[test]
fn removed_tools_leave_the_list_and_change_the_stamp() {
    let registry = ToolRegistry::builder()
        .tool(echo_spec("a"), Arc::new(Echo))
        .tool(echo_spec("b"), Arc::new(Echo))
        .tool(echo_spec("c"), Arc::new(Echo))
        .build()
        .unwrap();
    let first = registry.stamp();
    assert_eq!(registry.remove(&["x".to_string()]), 0);
    assert_eq!(registry.stamp(), first);
    assert_eq!(registry.remove(&["b".to_string()]), 1);
    registry.register(echo_spec("d"), Arc::new(Echo)).unwrap();
    assert_eq!(registry.names(), ["a", "c", "d"]);
    assert_ne!(registry.stamp(), first);
    assert_eq!(
        registry
            .prepare(&call("1", "b", r#"{"text": "x"}"#))
            .unwrap_err(),
        ToolFailure::new(
            agent_core::FailureCode::UnknownTool,
            "no tool named `b`; available: a, c, d"
        )
    );
}

#[test]
fn unsupported_schema_keywords_are_refused_at_build_time() {
    let mut spec = echo_spec("echo");
    spec.parameters =
        json!({"type": "object", "properties": {"text": {"type": "string", "format": "uri"}}});
    let err = ToolRegistry::builder()
        .tool(spec, Arc::new(Echo))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        RegistryError::InvalidSchema {
            name: "echo".into(),
            reason: SchemaError::Unsupported {
                at: "$.text".into(),
                keyword: "format".into()
            }
        }
    );
    assert_eq!(
        err.to_string(),
        "tool `echo` has an unusable schema: $.text: unsupported schema keyword `format`"
    );
}

/// Describes a call by its `text`, as the path it touches.
struct Described;

#[async_trait::async_trait]
impl ToolHandler for Described {
    async fn handle(&self, _call: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(String::new())
    }

    fn describe(&self, arguments: &serde_json::Value) -> CallSummary {
        CallSummary::path(arguments["text"].as_str().unwrap_or_default())
    }
}

#[test]
fn a_prepared_call_carries_its_handlers_description_and_a_rewrite_is_described_again() {
    let registry = ToolRegistry::builder()
        .tool(echo_spec("echo"), Arc::new(Echo))
        .tool(echo_spec("described"), Arc::new(Described))
        .build()
        .unwrap();
    let echo = registry
        .prepare(&call("c1", "echo", r#"{"text": "hi"}"#))
        .unwrap();
    assert_eq!(echo.summary, CallSummary::text(r#"{"text":"hi"}"#));
    let described = registry
        .prepare(&call("c2", "described", r#"{"text": "a.txt"}"#))
        .unwrap();
    assert_eq!(described.summary, CallSummary::path("a.txt"));
    // A PreToolUse hook rewrites the input: the summary follows the new arguments.
    let rewritten = PreparedCall {
        arguments: json!({"text": "b.txt"}),
        ..described
    };
    assert_eq!(
        registry.revalidate(&rewritten).unwrap().summary,
        CallSummary::path("b.txt")
    );
}

/// A foreign schema (an MCP server's) with keywords the checker does not enforce.
fn foreign_spec(name: &str) -> agent_core::ToolSpec {
    let mut spec = echo_spec(name);
    spec.parameters = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 10, "title": "Text"}},
        "required": ["text"],
        "$schema": "http://json-schema.org/draft-07/schema#"
    });
    spec
}

#[test]
fn a_foreign_schema_is_sent_sanitized_or_as_it_came_per_mode() {
    let registry = ToolRegistry::builder()
        .foreign_tool(foreign_spec("cut"), Arc::new(Echo), SchemaMode::Sanitize)
        .foreign_tool(
            foreign_spec("kept"),
            Arc::new(Echo),
            SchemaMode::PassThrough,
        )
        .build()
        .unwrap();
    let parameters: Vec<serde_json::Value> =
        registry.specs().into_iter().map(|s| s.parameters).collect();
    assert_eq!(
        parameters,
        [
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            foreign_spec("kept").parameters,
        ]
    );
    // Live registration takes a mode too; strict still refuses what a generator adds.
    assert_eq!(
        registry.register(foreign_spec("strict"), Arc::new(Echo)),
        Err(RegistryError::InvalidSchema {
            name: "strict".into(),
            reason: SchemaError::Unsupported {
                at: "$".into(),
                keyword: "$schema".into()
            }
        })
    );
    registry
        .register_in(
            foreign_spec("late"),
            Arc::new(Echo),
            SchemaMode::PassThrough,
        )
        .unwrap();
    assert_eq!(registry.names(), ["cut", "kept", "late"]);
}
