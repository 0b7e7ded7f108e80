use std::sync::Arc;

use agent_core::seams::{HookStop, PreToolVerdict, PromptBlocked};
use agent_core::{
    AgentEvent, AgentRunner, CallSummary, CollectingSink, Events, FailureCode, FixedPrompt,
    ModelReply, PreparedCall, ToolCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistry,
    ToolSpec, TurnHooks, TurnOutcome,
};
use agent_hooks::{
    FnHook, Hook, HookError, HookEvent, HookEventKind, HookOutput, HookRegistry, PostToolUseOutput,
    UserPromptSubmitOutput,
};
use agent_test_support::ScriptedModel;
use async_trait::async_trait;
use serde_json::json;

struct Echo;

#[async_trait]
impl ToolHandler for Echo {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(format!("echo: {}", call.arguments["text"]))
    }
}

fn echo_registry() -> Arc<ToolRegistry> {
    let spec = ToolSpec::new(
        "echo",
        "Echo the text back.",
        ToolEffect::Read,
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    Arc::new(
        ToolRegistry::builder()
            .tool(spec, Arc::new(Echo))
            .build()
            .unwrap(),
    )
}

fn echo_call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "echo".into(),
        arguments: r#"{"text":"hi"}"#.into(),
    }
}

fn hook(
    name: &str,
    body: impl Fn(&HookEvent) -> Result<HookOutput, HookError> + Send + Sync + 'static,
) -> Arc<dyn Hook> {
    Arc::new(FnHook::new(name, body))
}

fn stopping(reason: &'static str) -> impl Fn(&HookEvent) -> Result<HookOutput, HookError> {
    move |_| {
        Ok(PostToolUseOutput {
            stop: Some(reason.into()),
            ..PostToolUseOutput::default()
        }
        .into())
    }
}

#[tokio::test]
async fn the_first_stopping_hook_reaches_the_turn_outcome_as_one_value() {
    let mut hooks = HookRegistry::new();
    hooks
        .register(
            HookEventKind::PostToolUse,
            None,
            hook("enough", stopping("seen enough")),
        )
        .register(
            HookEventKind::PostToolUse,
            None,
            hook("also", stopping("me too")),
        );
    let model = Arc::new(ScriptedModel::replies([ModelReply::tool_calls(vec![
        echo_call("c1"),
        echo_call("c2"),
    ])]));
    let runner = AgentRunner::builder(
        model.clone(),
        echo_registry(),
        Arc::new(FixedPrompt("test".into())),
    )
    .hooks(Arc::new(hooks))
    .build();
    let outcome = runner.run_turn(&mut Vec::new(), "go").await.unwrap();
    assert_eq!(
        outcome,
        TurnOutcome {
            final_text: "Run stopped by a hook after `echo`.".into(),
            requests: 1,
            tool_calls: 2,
            stopped: Some(HookStop {
                hook: "enough".into(),
                tool: "echo".into(),
                reason: "seen enough".into(),
            }),
        }
    );
    model.finish().unwrap();
}

#[tokio::test]
async fn a_blocked_prompt_is_a_typed_error_naming_the_hook() {
    let mut hooks = HookRegistry::new();
    hooks.register(
        HookEventKind::UserPromptSubmit,
        None,
        hook("gate", |_| {
            Ok(UserPromptSubmitOutput {
                block: Some("not today".into()),
                ..UserPromptSubmitOutput::default()
            }
            .into())
        }),
    );
    assert_eq!(
        hooks.user_prompt_submit("hello").await,
        Err(PromptBlocked {
            hook: "gate".into(),
            reason: "not today".into()
        })
    );
}

#[tokio::test]
async fn a_rust_hook_answering_for_another_event_fails_closed() {
    let mut hooks = HookRegistry::new();
    hooks.register(
        HookEventKind::PreToolUse,
        None,
        hook("confused", |_| Ok(PostToolUseOutput::default().into())),
    );
    let call = PreparedCall {
        call_id: "c1".into(),
        name: "echo".into(),
        arguments: json!({"text": "hi"}),
        effect: ToolEffect::Read,
        summary: CallSummary::arguments(&json!({"text": "hi"})),
    };
    assert_eq!(
        hooks.pre_tool_use(call).await,
        PreToolVerdict::Block(ToolFailure::new(
            FailureCode::HookError,
            "PreToolUse hook `confused` failed: answered a PostToolUse result to a PreToolUse event"
        ))
    );
}

#[tokio::test]
async fn a_failing_hook_is_reported_with_its_own_error_and_the_run_goes_on() {
    let sink = Arc::new(CollectingSink::new());
    let mut hooks = HookRegistry::new();
    hooks.set_events(Events::new(sink.clone()));
    hooks.register(
        HookEventKind::Stop,
        None,
        hook("flaky", |_| {
            Err(HookError::failed(std::io::Error::other("disk gone")))
        }),
    );
    assert_eq!(hooks.stop("done").await, None);
    assert_eq!(
        sink.events(),
        vec![AgentEvent::HookFailed {
            hook: "flaky".into(),
            event: "Stop".into(),
            message: "disk gone".into(),
        }]
    );
}
