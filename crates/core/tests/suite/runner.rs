use std::sync::Arc;

use agent_core::{AgentRunner, Message, ModelReply, ModelRequest, RunError, validate_pairing};
use agent_test_support::{Recording, ScriptedModel};

use super::{call, echo_registry, prompt};

fn runner(model: &Arc<ScriptedModel>) -> AgentRunner {
    AgentRunner::builder(model.clone(), echo_registry(), prompt()).build()
}

/// Renders a request as one short line per message, so whole requests compare as values.
fn labels(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .map(|m| match m.as_ref() {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => format!(
                "assistant calls {}",
                tool_calls
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            other => format!("{} {}", other.role(), other.text()),
        })
        .collect()
}

#[tokio::test]
async fn a_two_round_session_ends_with_the_text_and_records_requests_in_order() {
    let model = Arc::new(
        ScriptedModel::replies([
            ModelReply::tool_calls(vec![call("c1", "echo", r#"{"text":"hi"}"#)]),
            ModelReply::text("done"),
        ])
        .recording(Recording::Requests),
    );
    let mut history = Vec::new();
    let outcome = runner(&model)
        .run_turn(&mut history, "say hi")
        .await
        .unwrap();

    assert_eq!(outcome.final_text, "done");
    assert_eq!((outcome.requests, outcome.tool_calls), (2, 1));
    model.finish().unwrap();
    let requests = model.requests();
    assert_eq!(
        requests.iter().map(labels).collect::<Vec<_>>(),
        vec![
            vec!["system You are a test agent.", "user say hi"],
            vec![
                "system You are a test agent.",
                "user say hi",
                "assistant calls echo",
                "tool echo: hi",
            ],
        ]
    );
    assert_eq!(
        requests[0]
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        vec!["echo"]
    );
    assert_eq!(
        history,
        vec![
            Message::user("say hi"),
            Message::Assistant {
                content: None,
                tool_calls: vec![call("c1", "echo", r#"{"text":"hi"}"#)]
            },
            Message::tool_result("c1", "echo: hi"),
            Message::assistant_text("done"),
        ]
    );
}

#[tokio::test]
async fn bad_calls_become_error_results_and_the_loop_goes_on() {
    let model = Arc::new(
        ScriptedModel::replies([
            ModelReply::tool_calls(vec![
                call("c1", "nope", "{}"),
                call("c2", "echo", "{not json"),
                call("c3", "echo", r#"{"text": 3}"#),
                call("c4", "echo", r#"{"text": "x", "extra": true}"#),
                call("c5", "echo", r#"{"text": "fail"}"#),
            ]),
            ModelReply::text("recovered"),
        ])
        .recording(Recording::Requests),
    );
    let mut history = Vec::new();
    let outcome = runner(&model).run_turn(&mut history, "go").await.unwrap();
    assert_eq!(outcome.final_text, "recovered");

    let requests = model.requests();
    let results: Vec<&str> = requests[1]
        .messages
        .iter()
        .filter(|m| m.role() == "tool")
        .map(|m| m.text())
        .collect();
    assert_eq!(
        results,
        vec![
            "Error [unknown_tool]: no tool named `nope`; available: echo",
            "Error [invalid_json]: arguments are not valid JSON (key must be a string at line 1 column 2)",
            "Error [invalid_arguments]: $.text: expected string, got number",
            "Error [invalid_arguments]: $: unknown field `extra`",
            "Error [tool_execution_error]: echo was asked to fail",
        ]
    );
}

#[tokio::test]
async fn the_turn_limit_ends_the_run_with_an_error_and_a_valid_history() {
    let model = Arc::new(
        ScriptedModel::replies((0..3).map(|i| {
            ModelReply::tool_calls(vec![call(&format!("c{i}"), "echo", r#"{"text":"again"}"#)])
        }))
        .recording(Recording::Requests),
    );
    let runner = AgentRunner::builder(model.clone(), echo_registry(), prompt())
        .max_turns(3)
        .build();
    let mut history = Vec::new();
    let err = runner
        .run_turn(&mut history, "loop forever")
        .await
        .unwrap_err();
    assert_eq!(err, RunError::TurnLimit { limit: 3 });
    assert_eq!(
        err.to_string(),
        "turn limit reached: the model still asked for tools after 3 requests"
    );
    assert_eq!(model.requests().len(), 3);
    assert_eq!(validate_pairing(&history), Ok(()));
}

#[tokio::test]
async fn a_model_error_ends_the_run_as_a_typed_error() {
    let model = Arc::new(
        ScriptedModel::from_json(
            r#"[{"error": {"status": 401, "message": "bad key"}}]"#,
            "inline",
        )
        .unwrap()
        .recording(Recording::Requests),
    );
    let mut history = Vec::new();
    let err = runner(&model)
        .run_turn(&mut history, "hi")
        .await
        .unwrap_err();
    assert_eq!(
        err,
        RunError::Model(agent_core::ModelError::Auth {
            status: 401,
            message: "bad key".into()
        })
    );
}

#[tokio::test]
async fn an_empty_system_prompt_stops_the_run_before_any_request() {
    let model = Arc::new(
        ScriptedModel::replies([ModelReply::text("unused")]).recording(Recording::Requests),
    );
    let runner = AgentRunner::builder(
        model.clone(),
        echo_registry(),
        Arc::new(agent_core::FixedPrompt("  \n".into())),
    )
    .build();
    let err = runner.run_turn(&mut Vec::new(), "hi").await.unwrap_err();
    assert_eq!(err, RunError::EmptySystemPrompt);
    assert_eq!(model.requests().len(), 0);
}

/// Counts how often the runner asks for the system prompt.
struct CountingPrompt(std::sync::atomic::AtomicUsize);

#[async_trait::async_trait]
impl agent_core::SystemPromptProvider for CountingPrompt {
    async fn system_prompt(&self) -> Result<String, agent_core::PromptError> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Ok(format!("prompt #{n}"))
    }
}

#[tokio::test]
async fn the_provider_is_asked_once_before_every_request() {
    let model = Arc::new(
        ScriptedModel::replies([
            ModelReply::tool_calls(vec![call("c1", "echo", r#"{"text":"a"}"#)]),
            ModelReply::tool_calls(vec![call("c2", "echo", r#"{"text":"b"}"#)]),
            ModelReply::text("done"),
        ])
        .recording(Recording::Requests),
    );
    let provider = Arc::new(CountingPrompt(std::sync::atomic::AtomicUsize::new(0)));
    let runner = AgentRunner::builder(model.clone(), echo_registry(), provider.clone()).build();
    runner.run_turn(&mut Vec::new(), "go").await.unwrap();
    let systems: Vec<String> = model
        .requests()
        .iter()
        .map(|r| r.messages[0].text().to_string())
        .collect();
    assert_eq!(systems, vec!["prompt #1", "prompt #2", "prompt #3"]);
}

#[tokio::test]
async fn final_answer_mode_sends_the_last_request_without_tools() {
    let model = Arc::new(
        ScriptedModel::replies([
            ModelReply::tool_calls(vec![call("c1", "echo", r#"{"text":"a"}"#)]),
            ModelReply::tool_calls(vec![call("c2", "echo", r#"{"text":"b"}"#)]),
            ModelReply::text("Here is what I found."),
        ])
        .recording(Recording::Requests),
    );
    let runner = AgentRunner::builder(model.clone(), echo_registry(), prompt())
        .max_turns(3)
        .final_answer(agent_core::FinalAnswer::OnLastRequest)
        .build();
    let outcome = runner.run_turn(&mut Vec::new(), "go").await.unwrap();
    assert_eq!(outcome.final_text, "Here is what I found.");
    let requests = model.requests();
    let tool_counts: Vec<usize> = requests.iter().map(|r| r.tools.len()).collect();
    assert_eq!(tool_counts, vec![1, 1, 0]);
    assert_eq!(
        requests[2].messages.last().map(|m| m.as_ref()),
        Some(&Message::system(agent_core::runner::FINAL_ANSWER_NOTE))
    );
}

/// Building a request shares the stored messages (a deep copy of the history per
/// request made round 1000 cost 20x round 10): every history message in the request is the
/// stored one, not an equal copy; only the system prompt is new.
#[tokio::test]
async fn a_request_shares_the_stored_messages_instead_of_copying_them() {
    let model = Arc::new(ScriptedModel::new([]));
    let history: Vec<Arc<Message>> = vec![
        Arc::new(Message::user("go")),
        Arc::new(Message::Assistant {
            content: None,
            tool_calls: vec![call("c1", "echo", r#"{"text":"a"}"#)],
        }),
        Arc::new(Message::tool_result("c1", "a")),
    ];
    let request = runner(&model).prepare_request(&history).await.unwrap();
    assert_eq!(
        request.messages[0],
        Message::system("You are a test agent.")
    );
    let shared: Vec<bool> = request.messages[1..]
        .iter()
        .zip(&history)
        .map(|(sent, stored)| Arc::ptr_eq(sent, stored))
        .collect();
    assert_eq!(shared, vec![true, true, true]);
    assert_eq!(request.messages.len(), 4);
}

/// Hands out its message on the `at`-th time it is asked (0-based), and nothing otherwise: a
/// job that finishes while the loop is running.
struct NoticeAt {
    at: usize,
    asked: std::sync::Mutex<usize>,
}

impl agent_core::Inbox for NoticeAt {
    fn take(&self) -> Vec<agent_core::InboxItem> {
        let mut asked = self.asked.lock().unwrap();
        *asked += 1;
        if *asked - 1 == self.at {
            vec![agent_core::InboxItem {
                from: agent_core::Sender::Job(1),
                kind: agent_core::InboxKind::JobNotice,
                request_id: None,
                body: "<job id=\"1\">".to_string(),
            }]
        } else {
            Vec::new()
        }
    }
}

#[tokio::test]
async fn an_inbox_message_is_stored_once_after_the_results_and_sent_from_then_on() {
    let model = Arc::new(
        ScriptedModel::replies([
            ModelReply::tool_calls(vec![call("c1", "echo", r#"{"text":"hi"}"#)]),
            ModelReply::tool_calls(vec![call("c2", "echo", r#"{"text":"ho"}"#)]),
            ModelReply::text("done"),
        ])
        .recording(Recording::Requests),
    );
    let inbox = Arc::new(NoticeAt {
        at: 1,
        asked: std::sync::Mutex::new(0),
    });
    let runner = AgentRunner::builder(model.clone(), echo_registry(), prompt())
        .inbox(inbox)
        .build();
    let mut history = Vec::new();
    runner.run_turn(&mut history, "say hi").await.unwrap();
    model.finish().unwrap();
    let requests = model.requests();
    let system = "system You are a test agent.";
    let after_first = [
        system,
        "user say hi",
        "assistant calls echo",
        "tool echo: hi",
    ];
    let with_notice = [&after_first[..], &["user <job id=\"1\">"]].concat();
    let third = [&with_notice[..], &["assistant calls echo", "tool echo: ho"]].concat();
    assert_eq!(
        requests.iter().map(labels).collect::<Vec<_>>(),
        vec![vec![system, "user say hi"], with_notice, third]
    );
    for request in &requests {
        assert_eq!(validate_pairing(&request.messages), Ok(()));
    }
    assert_eq!(history.len(), 7);
}
