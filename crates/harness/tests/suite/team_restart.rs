//! Chapter 15 across a crash: a message whose turn had completed when the process died is
//! acknowledged by the next session with no model call and reaches the lead's history once;
//! one whose turn was cut short is delivered again, its death counted.

use std::path::Path;

use agent_core::{AgentId, Message, ModelReply};
use agent_harness::session::Mode;
use agent_team::{Deliveries, DeliveryRecord, MailMessage, TurnState};
use agent_tools::Workspace;
use serde_json::json;

use super::team::{P15, done, ids_out, team};
use super::{call, caps};

const LEAD_MAIL: &str = ".agent_tutorial/mail/lead";

/// A first session as in chapter 15's walk-through: alice reads notes.txt, her result wakes
/// the lead, whose turn ends with `answer`; every message acknowledged.
async fn first_session(dir: &Path, answer: &str) {
    std::fs::write(dir.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let spawn =
        json!({"name": "alice", "role": "reads notes", "prompt": "Read notes.txt and report."});
    let mut t = team(
        dir,
        caps(&P15),
        vec![
            ModelReply::tool_calls(vec![call("c1", "spawn_teammate", spawn)]),
            ModelReply::text("Alice is on it."),
            ModelReply::text(answer),
        ],
        vec![(
            "alice",
            vec![ModelReply::text("notes.txt has alpha and beta.")],
        )],
    );
    t.run("Ask a teammate to read notes.txt.").await;
}

/// The lead's one acknowledged message, put back in `processing` as a process killed before
/// the ack leaves it; its file name and content.
fn undo_the_ack(dir: &Path) -> MailMessage {
    let done = dir.join(LEAD_MAIL).join("done");
    let names: Vec<_> = std::fs::read_dir(&done)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1);
    let from = done.join(&names[0]);
    let message: MailMessage = serde_json::from_slice(&std::fs::read(&from).unwrap()).unwrap();
    std::fs::rename(
        &from,
        dir.join(LEAD_MAIL).join("processing").join(&names[0]),
    )
    .unwrap();
    message
}

fn history(t: &super::team::Team) -> Vec<Message> {
    t.session
        .agent(&AgentId::lead())
        .unwrap()
        .history()
        .iter()
        .map(|m| Message::clone(m))
        .collect()
}

const RESULT: &str = "<teammate-message id=\"<id>\" from=\"alice\" type=\"result\">\nnotes.txt has alpha and beta.\n</teammate-message>";

#[tokio::test]
async fn a_result_answered_before_a_crash_is_acknowledged_at_restart_with_no_model_call() {
    let dir = tempfile::tempdir().unwrap();
    first_session(dir.path(), "Alice says: alpha and beta.").await;
    let message = undo_the_ack(dir.path());
    // The record the first session wrote when the lead's turn ended.
    let journal = Deliveries::new(&Workspace::new(dir.path()).unwrap());
    assert_eq!(
        journal.load(&AgentId::lead()).unwrap(),
        Some(DeliveryRecord {
            id: message.id.clone(),
            turn: TurnState::Answered,
        })
    );

    // The next process: a lead whose model has no reply at all.
    let mut t = team(dir.path(), caps(&P15), vec![], vec![]);
    t.session.run(Mode::UntilIdle).await;

    t.lead.finish().unwrap();
    assert_eq!(t.lead.requests().len(), 0);
    assert_eq!(t.counts("lead"), done(1));
    // The fragment once; the answer the dead process got is not brought back (the record
    // keeps no text an attacker could plant as the model's words).
    let history = history(&t);
    assert_eq!(history, [Message::user(message.fragment().into_text())]);
    assert_eq!(ids_out(history[0].text()), RESULT);

    // A third start finds nothing to do and stores nothing again.
    let mut t = team(dir.path(), caps(&P15), vec![], vec![]);
    t.session.run(Mode::UntilIdle).await;
    t.lead.finish().unwrap();
    assert_eq!((t.lead.requests().len(), history_len(&t)), (0, 0));
    assert_eq!(t.counts("lead"), done(1));
}

fn history_len(t: &super::team::Team) -> usize {
    t.session.agent(&AgentId::lead()).unwrap().history().len()
}

#[tokio::test]
async fn a_result_whose_turn_was_cut_short_by_a_crash_is_delivered_again_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    first_session(dir.path(), "Alice says: alpha and beta.").await;
    let message = undo_the_ack(dir.path());
    // The process died inside the lead's turn: the record says the turn started, no answer.
    let journal = Deliveries::new(&Workspace::new(dir.path()).unwrap());
    journal.started(&AgentId::lead(), &message.id).unwrap();

    let mut t = team(
        dir.path(),
        caps(&P15),
        vec![ModelReply::text("Alice says: alpha and beta, again.")],
        vec![],
    );
    t.session.run(Mode::UntilIdle).await;

    t.lead.finish().unwrap();
    let requests = t.lead.requests();
    assert_eq!(requests.len(), 1);
    // Once in the request and once in the history: the dead process's copy died with it.
    let fragments: Vec<String> = requests[0]
        .messages
        .iter()
        .filter(|m| matches!(***m, Message::User { .. }))
        .map(|m| ids_out(m.text()))
        .collect();
    assert_eq!(fragments, [RESULT]);
    assert_eq!(
        history(&t),
        [
            Message::user(message.fragment().into_text()),
            Message::assistant_text("Alice says: alpha and beta, again."),
        ]
    );
    assert_eq!(t.counts("lead"), done(1));
    let stored: MailMessage = serde_json::from_slice(
        &std::fs::read(
            dir.path()
                .join(LEAD_MAIL)
                .join("done")
                .join(message.file_name()),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(stored.failures, ["the process ended while its turn ran"]);
}

#[tokio::test]
async fn a_delivery_record_planted_as_a_fifo_is_skipped_and_the_message_delivered_again() {
    let dir = tempfile::tempdir().unwrap();
    first_session(dir.path(), "Alice says: alpha and beta.").await;
    let message = undo_the_ack(dir.path());
    let record = dir.path().join(".agent_tutorial/deliveries/lead.json");
    std::fs::remove_file(&record).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&record)
        .status()
        .unwrap();
    assert!(made.success());

    let mut t = team(
        dir.path(),
        caps(&P15),
        vec![ModelReply::text("Alice says: alpha and beta, again.")],
        vec![],
    );
    t.session.run(Mode::UntilIdle).await;

    // Unreadable, so unknown: at least once, the message gets a turn; never lost, never hung.
    t.lead.finish().unwrap();
    assert_eq!(t.lead.requests().len(), 1);
    assert_eq!(
        history(&t),
        [
            Message::user(message.fragment().into_text()),
            Message::assistant_text("Alice says: alpha and beta, again."),
        ]
    );
    assert_eq!(t.counts("lead"), done(1));
}
