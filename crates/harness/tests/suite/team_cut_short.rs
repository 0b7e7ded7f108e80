//! Chapters 15–16 over the session, continued: teammates cut short (the session ends, a turn
//! fails, a shutdown is forced) and questions from several teammates at once.

use std::sync::Arc;

use agent_core::{AgentId, Message, ModelReply};
use agent_harness::session::{Mode, Op};
use agent_harness::test_util::{Questions, Unscripted};
use agent_harness::{AgentSpec, Capabilities};
use agent_prompting::PromptContext;
use agent_team::{Counts, RequestStatus, TeammateStatus};
use serde_json::json;

use super::team::{P15, Team, last_text, p16, team};
use super::{call, caps};

/// A team whose teammates run on a model that never answers, the lead on `lead` (its context
/// empty): the setup of the cases where a teammate's turn never ends by itself.
pub fn lead_with_silent_teammates(
    dir: &std::path::Path,
    lead: Vec<ModelReply>,
    capabilities: Capabilities,
) -> Team {
    let spec = AgentSpec {
        capabilities,
        context: PromptContext::from_value(json!({})).unwrap(),
    };
    Team::builder(dir, spec)
        .lead(lead)
        .unscripted(Unscripted::Silent)
        .build()
}

#[tokio::test]
async fn ending_the_session_aborts_a_running_teammate_and_puts_its_message_back() {
    let dir = tempfile::tempdir().unwrap();
    let lead = vec![
        ModelReply::tool_calls(vec![call(
            "c1",
            "spawn_teammate",
            json!({"name": "alice", "role": "slow", "prompt": "Think forever."}),
        )]),
        ModelReply::text("Started."),
    ];
    let Team {
        mut session,
        lead: lead_model,
        team,
        ..
    } = lead_with_silent_teammates(dir.path(), lead, caps(&P15));
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    handle.submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Start a slow teammate.".into(),
    });
    let running = tokio::spawn(async move { session.run(Mode::Interactive).await });
    let alice = AgentId::new("alice").unwrap();
    // Alice's turn asks her (silent) model, so her message is claimed; the lead's turn has
    // ended, so the person is told they may type while she works.
    let (mut asked, mut idle) = (false, false);
    while !(asked && idle) {
        match events.recv().await.unwrap() {
            agent_harness::SessionEvent::Agent(e)
                if e.agent == alice
                    && matches!(e.event, agent_core::AgentEvent::RequestSent { .. }) =>
            {
                asked = true;
            }
            agent_harness::SessionEvent::Idle => idle = true,
            _ => {}
        }
    }
    assert_eq!(
        team.mailbox().counts(&alice).unwrap(),
        Counts {
            processing: 1,
            ..Counts::default()
        }
    );
    handle.submit(Op::Shutdown(agent_harness::session::EndReason::Done));
    running.await.unwrap();
    assert_eq!(
        team.mailbox().counts(&alice).unwrap(),
        Counts {
            ready: 1,
            ..Counts::default()
        }
    );
    assert_eq!(team.records()[0].status, TeammateStatus::ShutDown);
    lead_model.finish().unwrap();
}

#[tokio::test]
async fn a_teammate_whose_turn_fails_is_failed_and_the_lead_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = json!({"name": "alice", "role": "helper", "prompt": "Say hi."});
    // Alice's script is empty: her first request fails.
    let mut t = team(
        dir.path(),
        caps(&P15),
        vec![
            ModelReply::tool_calls(vec![call("c1", "spawn_teammate", spawn)]),
            ModelReply::text("Started."),
            ModelReply::tool_calls(vec![call(
                "c2",
                "send_message",
                json!({"to": "alice", "content": "Are you there?"}),
            )]),
            ModelReply::text("She failed."),
        ],
        vec![("alice", vec![])],
    );
    t.run("Start alice.").await;
    let lead = t.lead.requests();
    assert_eq!(
        last_text(&lead[2].messages),
        "<teammate-message id=\"<id>\" from=\"alice\" type=\"result\">\nfailed: the scripted model has no reply left for request #1\n</teammate-message>"
    );
    assert_eq!(
        tool_result(&lead[3].messages),
        "Error [unknown_recipient]: teammate `alice` is failed and receives no messages; the agents are: lead, alice (failed)"
    );
    assert_eq!(t.team.records()[0].status, TeammateStatus::Failed);
    // Her message went back to `ready` with the failure recorded (delivered again next time,
    // quarantined the third time).
    assert_eq!(
        t.counts("alice"),
        Counts {
            ready: 1,
            ..Counts::default()
        }
    );
}

/// The text of the last tool result of `messages`.
pub fn tool_result(messages: &[Arc<Message>]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m.as_ref() {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap()
}

/// A teammate busy in a turn that never ends does not answer a shutdown; after the deadline
/// (tokio's paused clock jumps to it) the request is recorded as forced, its turn is cancelled,
/// its message put back, and the lead is told.
#[tokio::test(start_paused = true)]
async fn a_shutdown_not_answered_in_time_is_forced_and_the_request_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let lead = vec![
        ModelReply::tool_calls(vec![call(
            "c1",
            "spawn_teammate",
            json!({"name": "alice", "role": "slow", "prompt": "Think forever."}),
        )]),
        ModelReply::tool_calls(vec![call(
            "c2",
            "request_shutdown",
            json!({"teammate": "alice"}),
        )]),
        ModelReply::text("Asked alice to stop."),
        ModelReply::text("Alice was stopped by force."),
    ];
    let Team {
        mut session,
        lead: lead_model,
        team,
        ..
    } = lead_with_silent_teammates(dir.path(), lead, p16());
    session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Start a slow teammate, then stop it.".into(),
    });
    session.run(Mode::OneShot).await;
    lead_model.finish().unwrap();

    let lead = lead_model.requests();
    assert_eq!(
        last_text(&lead[3].messages),
        "<teammate-message id=\"<id>\" from=\"alice\" type=\"result\">\nstopped by force: alice did not answer shutdown req-1 within 30 s\n</teammate-message>"
    );
    let statuses: Vec<RequestStatus> = team
        .requests()
        .all()
        .unwrap()
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [RequestStatus::Forced]);
    assert_eq!(team.records()[0].status, TeammateStatus::ShutDown);
    // Her first message is back in `ready`, with the shutdown request that was never read.
    let alice = AgentId::new("alice").unwrap();
    assert_eq!(
        team.mailbox().counts(&alice).unwrap(),
        Counts {
            ready: 2,
            ..Counts::default()
        }
    );
}

/// Two teammates ask at once: each question names who asks, both wait together, and each
/// answer finds its own question.
#[tokio::test]
async fn teammates_questions_name_who_asks_and_several_wait_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = |id: &str, name: &str| {
        call(
            id,
            "spawn_teammate",
            json!({"name": name, "role": "runs a command", "prompt": "Run echo."}),
        )
    };
    let lead = vec![
        ModelReply::tool_calls(vec![spawn("c1", "alice"), spawn("c2", "bob")]),
        ModelReply::text("Both started."),
        ModelReply::text("One reported."),
        ModelReply::text("The other reported."),
    ];
    let mates: Vec<(&str, Vec<ModelReply>)> = ["alice", "bob"]
        .into_iter()
        .map(|name| {
            let replies = vec![
                ModelReply::tool_calls(vec![call(
                    "t1",
                    "bash",
                    json!({"command": format!("echo {name}")}),
                )]),
                ModelReply::text(format!("{name} ran echo")),
            ];
            (name, replies)
        })
        .collect();
    let spec = AgentSpec {
        capabilities: caps(&P15),
        context: PromptContext::from_value(json!({})).unwrap(),
    };
    // Asked through the session, as the CLI does at a terminal.
    let Team {
        mut session,
        lead: lead_model,
        mates,
        ..
    } = Team::builder(dir.path(), spec)
        .lead(lead)
        .mates(mates)
        .questions(Questions::Session)
        .build();
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    handle.submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Start alice and bob.".into(),
    });
    let running = tokio::spawn(async move { session.run(Mode::Interactive).await });
    let mut asked = Vec::new();
    // The lead's turns that ended, whenever their events come.
    let mut lead_turns = Vec::new();
    let seen = |event: agent_harness::SessionEvent, asked: &mut Vec<_>, lead_turns: &mut Vec<_>| {
        match event {
            agent_harness::SessionEvent::ApprovalRequested { id, agent, request } => {
                asked.push((id, agent.to_string(), request.summary.clone()));
            }
            agent_harness::SessionEvent::TurnEnded { agent, result, .. } if agent.is_lead() => {
                lead_turns.push(result);
            }
            _ => {}
        }
    };
    while asked.len() < 2 {
        seen(events.recv().await.unwrap(), &mut asked, &mut lead_turns);
    }
    // Both wait now; neither has run.
    let mut who: Vec<(String, String)> = asked
        .iter()
        .map(|(_, a, s)| (a.clone(), s.clone()))
        .collect();
    who.sort();
    assert_eq!(
        who,
        [
            ("alice".to_string(), "echo alice".to_string()),
            ("bob".to_string(), "echo bob".to_string())
        ]
    );
    for (id, _, _) in &asked {
        handle.submit(Op::Approval {
            id: *id,
            decision: agent_harness::session::Decision::Approve,
        });
    }
    // Both report, and the lead answers each report: three turns of the lead in all.
    while lead_turns.len() < 3 {
        seen(events.recv().await.unwrap(), &mut asked, &mut lead_turns);
    }
    assert_eq!(lead_turns, [Ok(()), Ok(()), Ok(())]);
    handle.submit(Op::Shutdown(agent_harness::session::EndReason::Done));
    running.await.unwrap();
    lead_model.finish().unwrap();
    for model in mates.values() {
        model.finish().unwrap();
        assert_eq!(model.requests().len(), 2);
    }
}
