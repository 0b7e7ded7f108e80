//! The history log sees every message the loop stores, in order, before the request that
//! carries it; `/clear` (`Op::Clear`) empties the history and tells the log.

use std::sync::{Arc, Mutex};

use agent_core::{AgentId, Message, ModelReply};
use agent_harness::session::{EndReason, Interrupts, Mode, Op, Session, SessionEvent};
use agent_harness::{Capability, HistoryLog};
use serde_json::json;

use super::{call, caps, next, session_agent};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Turn(String),
    Message(Message),
    Cleared,
}

/// Keeps what it is told, as a session file would: new messages appended.
#[derive(Debug, Default)]
struct Collecting {
    entries: Mutex<Vec<Entry>>,
    kept: Mutex<usize>,
}

impl HistoryLog for Collecting {
    fn turn_started(&self, prompt: &str) {
        self.entries
            .lock()
            .unwrap()
            .push(Entry::Turn(prompt.to_string()));
    }

    fn observe(&self, history: &[Arc<Message>]) {
        let mut kept = self.kept.lock().unwrap();
        let mut entries = self.entries.lock().unwrap();
        for message in &history[*kept..] {
            entries.push(Entry::Message(Message::clone(message)));
        }
        *kept = history.len();
    }

    fn cleared(&self) {
        *self.kept.lock().unwrap() = 0;
        self.entries.lock().unwrap().push(Entry::Cleared);
    }
}

#[tokio::test]
async fn the_log_keeps_the_history_exactly_and_a_clear_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\n").unwrap();
    let log = Arc::new(Collecting::default());
    let mut session = Session::new(Interrupts::CancelTurn);
    let lead = AgentId::lead();
    let read = call("c1", "read_file", json!({"path": "notes.txt"}));
    let (agent, model) = session_agent(
        &mut session,
        &lead,
        dir.path(),
        caps(&[Capability::Bash, Capability::Files]),
        vec![
            ModelReply::tool_calls(vec![read.clone()]),
            ModelReply::text("It says alpha."),
            ModelReply::text("Bye."),
        ],
        |deps| deps.history_log = Some(log.clone()),
    );
    session.add(lead.clone(), agent);
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    for text in ["read notes.txt", "thanks"] {
        handle.submit(Op::Prompt {
            agent: lead.clone(),
            text: text.into(),
        });
    }
    handle.submit(Op::Clear(lead.clone()));
    let running = tokio::spawn(async move {
        let end = session.run(Mode::UntilIdle).await;
        (end, session)
    });
    while !matches!(next(&mut events).await, SessionEvent::Ended(_)) {}
    let (end, mut session) = running.await.unwrap();
    assert_eq!(end, EndReason::Done);
    let stored = vec![
        Message::user("read notes.txt"),
        Message::Assistant {
            content: None,
            tool_calls: vec![read],
        },
        Message::tool_result("c1", "alpha\n"),
        Message::assistant_text("It says alpha."),
        Message::user("thanks"),
        Message::assistant_text("Bye."),
    ];
    // Op::Clear was taken before the turns ran (submissions first): it cleared an empty
    // history, and the turns' messages follow.
    let mut want = vec![Entry::Cleared, Entry::Turn("read notes.txt".into())];
    want.extend(stored[..4].iter().cloned().map(Entry::Message));
    want.push(Entry::Turn("thanks".into()));
    want.extend(stored[4..].iter().cloned().map(Entry::Message));
    assert_eq!(*log.entries.lock().unwrap(), want);
    let history: Vec<Message> = session
        .agent(&lead)
        .unwrap()
        .history()
        .iter()
        .map(|m| Message::clone(m))
        .collect();
    assert_eq!(history, stored);
    // Before each request, the history it carries was already kept: the second request's
    // messages (after the system prompt) are the first three entries' messages.
    let second = &model.requests()[1];
    assert_eq!(second.messages[1..], stored[..3]);
    // `/clear` after the turns: an empty history, and the log told.
    let mut agent = session.remove(&lead).unwrap();
    agent.clear_history();
    assert_eq!(agent.history().len(), 0);
    assert_eq!(log.entries.lock().unwrap().last(), Some(&Entry::Cleared));
}
