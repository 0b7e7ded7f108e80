//! Approval through the session, keyed by id: several agents ask at once, each question names
//! who asks, answers come in any order, a Ctrl-C cancels only the question.

use std::collections::BTreeMap;

use agent_core::{AgentEvent, AgentId, ModelReply, ToolFailure};
use agent_harness::Capability;
use agent_harness::session::{
    ApprovalId, Closed, Decision, EndReason, InterruptFrom, Interrupts, Mode, Op, Session,
    SessionEvent,
};
use serde_json::json;

use super::{call, caps, next, session_agent};

/// Runs `command` through bash and answers `done`, asking first (chapter 3's policy).
fn asking(command: &str) -> Vec<ModelReply> {
    vec![
        ModelReply::tool_calls(vec![call("c1", "bash", json!({"command": command}))]),
        ModelReply::text("done"),
    ]
}

fn session_of(ids: &[AgentId], dir: &std::path::Path) -> Session {
    let mut session = Session::new(Interrupts::CancelTurn);
    for id in ids {
        let approval = session.approval(id);
        let (agent, _model) = session_agent(
            &mut session,
            id,
            dir,
            caps(&[Capability::Bash, Capability::Policy]),
            asking(&format!("touch {id}.ran")),
            |deps| deps.approval = Some(approval),
        );
        session.add(id.clone(), agent);
        session.handle().submit(Op::Prompt {
            agent: id.clone(),
            text: "run it".to_string(),
        });
    }
    session
}

/// Each agent's tool result.
type Results = BTreeMap<AgentId, Result<String, ToolFailure>>;

#[tokio::test]
async fn two_agents_ask_at_once_and_each_answer_finds_its_question_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let ids = [AgentId::lead(), AgentId::new("helper").unwrap()];
    let mut session = session_of(&ids, dir.path());
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    let running = tokio::spawn(async move { session.run(Mode::UntilIdle).await });

    let mut asked: BTreeMap<AgentId, ApprovalId> = BTreeMap::new();
    let mut results = Results::new();
    let mut closed = Vec::new();
    loop {
        match next(&mut events).await {
            SessionEvent::ApprovalRequested { id, agent, request } => {
                assert_eq!(request.summary, format!("touch {agent}.ran"));
                asked.insert(agent, id);
                if asked.len() == 2 {
                    // Both wait at once; answered the other way round from how they came.
                    handle.submit(Op::Approval {
                        id: asked[&ids[1]],
                        decision: Decision::Approve,
                    });
                    handle.submit(Op::Approval {
                        id: asked[&ids[0]],
                        decision: Decision::Decline,
                    });
                }
            }
            SessionEvent::ApprovalClosed { id, closed: how } => closed.push((id, how)),
            SessionEvent::Agent(envelope) => {
                if let AgentEvent::ToolFinished { result, .. } = envelope.event {
                    results.insert(envelope.agent, result);
                }
            }
            SessionEvent::Ended(reason) => {
                assert_eq!(reason, EndReason::Done);
                break;
            }
            SessionEvent::TurnEnded { result, .. } => assert_eq!(result, Ok(())),
            other => panic!("unexpected {other:?}"),
        }
    }
    running.await.unwrap();

    assert_eq!(
        closed,
        [
            (asked[&ids[1]], Closed::Answered(Decision::Approve)),
            (asked[&ids[0]], Closed::Answered(Decision::Decline)),
        ]
    );
    assert_eq!(results[&ids[1]], Ok("(no output)".to_string()));
    assert_eq!(
        results[&ids[0]].as_ref().unwrap_err().to_string(),
        "Error [permission_denied]: running a command needs approval; the user declined (by execute_asks)"
    );
    assert!(dir.path().join("helper.ran").exists());
    assert!(!dir.path().join("lead.ran").exists());
}

#[tokio::test]
async fn a_ctrl_c_while_a_question_waits_cancels_only_that_question() {
    let dir = tempfile::tempdir().unwrap();
    let lead = AgentId::lead();
    let mut session = session_of(std::slice::from_ref(&lead), dir.path());
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    let running = tokio::spawn(async move { session.run(Mode::UntilIdle).await });

    let mut seen = Vec::new();
    loop {
        match next(&mut events).await {
            SessionEvent::ApprovalRequested { id, .. } => {
                handle.submit(Op::Interrupt(InterruptFrom::Signal));
                seen.push(format!("asked {id}"));
            }
            SessionEvent::ApprovalClosed { id, closed } => {
                seen.push(format!("closed {id} {closed:?}"));
            }
            SessionEvent::Agent(envelope) => match envelope.event {
                AgentEvent::ToolFinished { result, .. } => {
                    seen.push(format!("result {}", result.unwrap_err()));
                }
                AgentEvent::TurnAnswered { text } => seen.push(format!("answer {text}")),
                AgentEvent::TurnCancelled => seen.push("turn cancelled".to_string()),
                _ => {}
            },
            SessionEvent::Ended(reason) => {
                seen.push(format!("ended {reason:?}"));
                break;
            }
            SessionEvent::TurnEnded { result, .. } => assert_eq!(result, Ok(())),
            other => panic!("unexpected {other:?}"),
        }
    }
    running.await.unwrap();

    // The turn goes on: the call is denied, the model answers.
    assert_eq!(
        seen,
        [
            "asked q1",
            "closed q1 Answered(Cancel)",
            "result Error [permission_denied]: running a command needs approval; approval failed (the question was cancelled), so denied (by execute_asks)",
            "answer done",
            "ended Done",
        ]
    );
    assert!(!dir.path().join("lead.ran").exists());
}
