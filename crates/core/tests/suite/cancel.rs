//! Cancelling a turn (chapter 11): whatever was running is dropped, every call of the reply is
//! answered, and the history passes the pairing check. Time is tokio's paused clock: the slow
//! model and tool "take" 60 s and the cancel comes at 1 s, without any real waiting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_core::cancel::CANCELLED_MESSAGE;
use agent_core::{
    AgentRunner, Cancellation, Message, ModelClient, ModelError, ModelReply, ModelRequest,
    PreparedCall, RunError, ToolFailure, ToolHandler, ToolRegistry, validate_pairing,
};
use agent_test_support::{Recording, ScriptedModel};
use async_trait::async_trait;

use super::{Echo, call, echo_registry, echo_spec, prompt};

/// Sets its flag when dropped before it finished: proof the work was dropped, not completed.
struct DroppedUnfinished(Arc<AtomicBool>);

impl Drop for DroppedUnfinished {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Takes 60 s (on the paused clock) to do anything.
async fn slow_work(dropped: &Arc<AtomicBool>) {
    let guard = DroppedUnfinished(dropped.clone());
    tokio::time::sleep(Duration::from_secs(60)).await;
    std::mem::forget(guard);
}

/// A model whose every call takes 60 s.
struct SlowModel {
    dropped: Arc<AtomicBool>,
}

#[async_trait]
impl ModelClient for SlowModel {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelReply, ModelError> {
        slow_work(&self.dropped).await;
        Ok(ModelReply::text("too late"))
    }
}

/// A tool that takes 60 s.
struct SlowTool {
    dropped: Arc<AtomicBool>,
}

#[async_trait]
impl ToolHandler for SlowTool {
    async fn handle(&self, _call: &PreparedCall) -> Result<String, ToolFailure> {
        slow_work(&self.dropped).await;
        Ok("slow: done".into())
    }
}

/// Cancels `cancel` after 1 s of (paused) time.
fn cancel_after_one_second(cancel: &Cancellation) {
    let cancel = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        cancel.cancel();
    });
}

fn cancelled_text() -> String {
    format!("Error [cancelled]: {CANCELLED_MESSAGE}")
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_the_model_call_ends_the_turn_with_the_history_valid() {
    let dropped = Arc::new(AtomicBool::new(false));
    let model = Arc::new(SlowModel {
        dropped: dropped.clone(),
    });
    let runner = AgentRunner::builder(model, echo_registry(), prompt()).build();
    let cancel = Cancellation::new();
    cancel_after_one_second(&cancel);
    let mut history = Vec::new();

    let result = runner
        .run_turn_cancellable(&mut history, "hello", &cancel)
        .await;

    assert_eq!(result, Err(RunError::Cancelled));
    assert!(dropped.load(Ordering::SeqCst), "the model call was dropped");
    assert_eq!(history, vec![Arc::new(Message::user("hello"))]);
    assert_eq!(validate_pairing(&history), Ok(()));
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_the_second_of_three_calls_answers_every_call() {
    let dropped = Arc::new(AtomicBool::new(false));
    let tools = ToolRegistry::builder()
        .tool(echo_spec("echo"), Arc::new(Echo))
        .tool(
            echo_spec("slow"),
            Arc::new(SlowTool {
                dropped: dropped.clone(),
            }),
        )
        .build()
        .unwrap();
    let calls = vec![
        call("c1", "echo", r#"{"text":"first"}"#),
        call("c2", "slow", r#"{"text":"second"}"#),
        call("c3", "echo", r#"{"text":"third"}"#),
    ];
    // One reply only: a request after the cancel would find the script empty.
    let model = Arc::new(
        ScriptedModel::replies([ModelReply::tool_calls(calls.clone())])
            .recording(Recording::Requests),
    );
    let runner = AgentRunner::builder(model.clone(), Arc::new(tools), prompt()).build();
    let cancel = Cancellation::new();
    cancel_after_one_second(&cancel);
    let mut history = Vec::new();

    let result = runner
        .run_turn_cancellable(&mut history, "three calls", &cancel)
        .await;

    assert_eq!(result, Err(RunError::Cancelled));
    assert!(dropped.load(Ordering::SeqCst), "the slow call was dropped");
    model.finish().unwrap();
    assert_eq!(
        history,
        vec![
            Arc::new(Message::user("three calls")),
            Arc::new(Message::Assistant {
                content: None,
                tool_calls: calls,
            }),
            Arc::new(Message::tool_result("c1", "echo: first")),
            Arc::new(Message::tool_result("c2", cancelled_text())),
            Arc::new(Message::tool_result("c3", cancelled_text())),
        ]
    );
    assert_eq!(validate_pairing(&history), Ok(()));
}

#[tokio::test(start_paused = true)]
async fn the_turn_after_a_cancelled_one_sends_the_closed_history() {
    let model = Arc::new(
        ScriptedModel::replies([
            ModelReply::tool_calls(vec![call("c1", "echo", r#"{"text":"a"}"#)]),
            ModelReply::text("again"),
        ])
        .recording(Recording::Requests),
    );
    let runner = AgentRunner::builder(model.clone(), echo_registry(), prompt()).build();
    let mut history = Vec::new();
    let cancelled = Cancellation::new();
    cancelled.cancel();
    assert_eq!(
        runner
            .run_turn_cancellable(&mut history, "first", &cancelled)
            .await,
        Err(RunError::Cancelled)
    );
    // Cancelled before anything ran: the prompt is stored, no request was sent.
    assert_eq!(history, vec![Arc::new(Message::user("first"))]);

    let outcome = runner.run_turn(&mut history, "second").await.unwrap();

    assert_eq!(outcome.final_text, "again");
    let requests = model.requests();
    assert_eq!(
        requests[0].messages,
        vec![
            Arc::new(Message::system("You are a test agent.")),
            Arc::new(Message::user("first")),
            Arc::new(Message::user("second")),
        ]
    );
}
