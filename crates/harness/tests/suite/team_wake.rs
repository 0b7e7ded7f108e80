//! The lead woken by a teammate's result, forced to arrive while the lead is in the middle of
//! a tool call: the mail waits for the turn's end and becomes the next turn's input, and every
//! tool call stays paired with its result.

use std::sync::Arc;

use agent_core::{Message, ModelReply, ModelRequest};
use agent_team::Counts;
use serde_json::json;

use super::team::{P15, ids_out, team};
use super::{call, caps};

/// `request` with every message id in its texts as `<id>`.
fn ids_made_stable(request: &ModelRequest) -> ModelRequest {
    let mut request = request.clone();
    for message in &mut request.messages {
        *message = Arc::new(match Message::clone(message) {
            Message::User { content } => Message::user(ids_out(&content)),
            Message::Tool {
                tool_call_id,
                content,
            } => Message::tool_result(tool_call_id, ids_out(&content)),
            other => other,
        });
    }
    request
}

/// The lead's second call (`bash`) returns only once alice's result is a file in the lead's
/// mailbox: the result has arrived while the lead's turn is mid-tool-call. The lead's next
/// request holds both calls, each with its result, and no mail; the result comes as the
/// input of the turn after, appended to that history. Both requests whole.
#[tokio::test]
async fn mail_that_arrives_during_a_tool_call_waits_for_the_turns_end_and_opens_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = json!({"name": "alice", "role": "helper", "prompt": "Say done."});
    let wait = json!({
        "command": "until ls .agent_tutorial/mail/lead/ready/*.json >/dev/null 2>&1; do sleep 0.01; done; echo mail is waiting"
    });
    let calls = vec![
        call("c1", "spawn_teammate", spawn),
        call("c2", "bash", wait),
    ];
    let mut t = team(
        dir.path(),
        caps(&P15),
        vec![
            ModelReply::tool_calls(calls.clone()),
            ModelReply::text("Alice answered while I waited."),
            ModelReply::text("Alice says done."),
        ],
        vec![("alice", vec![ModelReply::text("done")])],
    );
    t.run("Start alice and wait for her answer.").await;

    let lead = t.lead.requests();
    assert_eq!(lead.len(), 3);
    let first = &lead[0];
    let with = |messages: Vec<Message>| ModelRequest {
        messages: messages.into_iter().map(Arc::new).collect(),
        ..first.clone()
    };
    let system = Message::clone(&first.messages[0]);
    let mut history = vec![
        system,
        Message::user("Start alice and wait for her answer."),
        Message::Assistant {
            content: None,
            tool_calls: calls,
        },
        Message::tool_result("c1", "started teammate alice (helper)"),
        Message::tool_result("c2", "mail is waiting\n"),
    ];
    assert_eq!(ids_made_stable(&lead[1]), with(history.clone()));
    history.extend([
        Message::assistant_text("Alice answered while I waited."),
        Message::user(
            "<teammate-message id=\"<id>\" from=\"alice\" type=\"result\">\ndone\n</teammate-message>",
        ),
    ]);
    assert_eq!(ids_made_stable(&lead[2]), with(history));
    assert_eq!(
        t.counts("lead"),
        Counts {
            done: 1,
            ..Counts::default()
        }
    );
}
