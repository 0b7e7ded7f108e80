//! Closing a session with teammates cut short: one teammate whose message cannot be put back
//! does not keep the others' from going back, and a retried close finishes the job.

use agent_core::{AgentEvent, AgentId, ModelReply};
use agent_harness::SessionEvent;
use agent_harness::session::{EndReason, Mode, Op};
use agent_harness::team_runtime::CloseError;
use agent_team::Counts;
use agent_team::mailbox::MAIL_DIR;
use serde_json::json;

use super::team::{P15, Team, ids_out};
use super::team_cut_short::lead_with_silent_teammates;
use super::{call, caps};

fn ready(n: usize) -> Counts {
    Counts {
        ready: n,
        ..Counts::default()
    }
}

/// Alice and bob are mid-turn (their models never answer) when the session ends. Alice's
/// `ready` folder has been replaced by a file, so her message cannot go back: the close goes
/// on and puts bob's back, alice's stays held (in `processing`, and in the team's hands).
/// Once the folder is repaired, a second close releases hers; a third has nothing to do.
#[tokio::test]
async fn a_close_goes_on_past_a_teammate_whose_message_cannot_go_back_and_a_retry_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = |id: &str, name: &str| {
        call(
            id,
            "spawn_teammate",
            json!({"name": name, "role": "slow", "prompt": format!("{name}, think forever.")}),
        )
    };
    let lead = vec![
        ModelReply::tool_calls(vec![spawn("c1", "alice"), spawn("c2", "bob")]),
        ModelReply::text("Both started."),
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
        text: "Start two slow teammates.".into(),
    });
    // Before the run, a close finds the session running: nothing is released under a turn.
    assert!(matches!(team.close(), Err(CloseError::Running)));
    let running = tokio::spawn(async move { session.run(Mode::Interactive).await });
    let (alice, bob) = (AgentId::new("alice").unwrap(), AgentId::new("bob").unwrap());
    // Both teammates have asked their models (each holds its first message), and the lead's
    // turn has ended.
    let (mut asked, mut idle) = (Vec::new(), false);
    while !(asked.len() == 2 && idle) {
        match events.recv().await.unwrap() {
            SessionEvent::Agent(e)
                if !e.agent.is_lead() && matches!(e.event, AgentEvent::RequestSent { .. }) =>
            {
                asked.push(e.agent);
            }
            SessionEvent::Idle => idle = true,
            _ => {}
        }
    }
    let processing = Counts {
        processing: 1,
        ..Counts::default()
    };
    let counts = |who: &AgentId| team.mailbox().counts(who).unwrap();
    assert_eq!((counts(&alice), counts(&bob)), (processing, processing));
    // Alice's mailbox loses its `ready` folder to a plain file: a move into it fails.
    let alice_ready = dir.path().join(MAIL_DIR).join("alice/ready");
    std::fs::remove_dir(&alice_ready).unwrap();
    std::fs::write(&alice_ready, "in the way").unwrap();

    handle.submit(Op::Shutdown(EndReason::Done));
    assert_eq!(running.await.unwrap(), EndReason::Done);
    // Bob's message went back although alice's, tried first, could not.
    assert_eq!(counts(&bob), ready(1));
    let held: Vec<String> = std::fs::read_dir(dir.path().join(MAIL_DIR).join("alice/processing"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(held.len(), 1);
    let err = team.close().unwrap_err();
    assert_eq!(
        ids_out(&err.to_string()),
        "1 held message(s) not released: message <id> of alice is still held (not released): the mailbox is not usable: cannot create the folder `.agent_tutorial/mail/alice/ready`: File exists (os error 17)"
    );

    std::fs::remove_file(&alice_ready).unwrap();
    team.close().unwrap();
    assert_eq!((counts(&alice), counts(&bob)), (ready(1), ready(1)));
    team.close().unwrap();
    assert_eq!(counts(&alice), ready(1));
    lead_model.finish().unwrap();
}
