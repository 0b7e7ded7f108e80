//! A chapter 15–16 session driven in the test: the chapter's lead, each teammate on its own
//! scripted model (they ask at the same time), every question approved, one-shot.

use std::path::Path;
use std::sync::Arc;

use agent_core::{Message, ModelReply, ModelRequest};
use agent_cron::Clock;
use agent_trust::WorkspaceTrust;
use agent_tutorial::{Profile, agents};

use agent_harness::test_util::Unscripted;
pub use agent_harness::test_util::{TeamFixture as Team, done, ids_out};

use crate::support::transcript;

/// The team of chapter `chapter`'s profile in `dir`, the lead and each teammate on its
/// script; how it is built is the harness's fixture (shared with the harness's own tests).
pub(crate) fn builder(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
) -> agent_harness::test_util::TeamBuilder {
    let profile = Profile::for_chapter(chapter).unwrap();
    Team::builder(dir, agents::spec(profile).unwrap())
        .lead(lead)
        .mates(mates)
}

/// A session of chapter `chapter` whose lead and teammates answer from their scripts.
pub fn team(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
) -> Team {
    builder(chapter, dir, lead, mates).build()
}

/// [`team`], the lead and every teammate loading the workspace with `trust`.
pub fn team_trusting(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
    trust: Arc<dyn WorkspaceTrust>,
) -> Team {
    builder(chapter, dir, lead, mates).trust(trust).build()
}

/// [`team`], every agent seated at `board` (chapter 17 on).
pub fn team_with(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
    board: Option<agent_harness::board_seat::BoardSeat>,
) -> Team {
    let builder = builder(chapter, dir, lead, mates);
    match board {
        Some(board) => builder.board(board).build(),
        None => builder.build(),
    }
}

/// [`team`] whose teammates run on a model that never answers: each stays mid-message
/// until the session ends.
pub fn slow_team(chapter: u8, dir: &Path, lead: Vec<ModelReply>) -> Team {
    builder(chapter, dir, lead, vec![])
        .unscripted(Unscripted::Silent)
        .build()
}

/// [`team`] on `clock`: the mail's stamps and the lead's schedules follow it.
pub fn team_at(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
    clock: Arc<dyn Clock>,
) -> Team {
    builder(chapter, dir, lead, mates).clock(clock).build()
}

/// Every request `agent` sent, labelled, the workspace and message ids made stable (before
/// the labels cut long lines, so an id is never half replaced).
pub fn requests_of(t: &Team, agent: &str, dir: &Path) -> String {
    stable_transcript(t.requests(agent), dir, ids_out)
}

/// `requests` labelled, each message's text made stable by `stable` first (before the labels
/// cut long lines, so an id is never half replaced).
pub fn stable_transcript(
    requests: Vec<ModelRequest>,
    dir: &Path,
    stable: impl Fn(&str) -> String,
) -> String {
    let requests: Vec<ModelRequest> = requests
        .into_iter()
        .map(|mut request| {
            for message in &mut request.messages {
                *message = Arc::new(match Message::clone(message) {
                    Message::System { content } => Message::System {
                        content: stable(&content),
                    },
                    Message::User { content } => Message::User {
                        content: stable(&content),
                    },
                    Message::Tool {
                        tool_call_id,
                        content,
                    } => Message::Tool {
                        tool_call_id,
                        content: stable(&content),
                    },
                    assistant => assistant,
                });
            }
            request
        })
        .collect();
    transcript(&requests, dir)
}

/// The last message `agent` sent in its request `n`, whole, ids made stable.
pub fn last_message(t: &Team, agent: &str, n: usize) -> String {
    ids_out(t.requests(agent)[n].messages.last().unwrap().text())
}
