//! The third stage: over the byte budget, the older part of the history becomes a structured
//! [`Summary`] the model writes, cached so later requests reuse it and extend it instead of
//! asking again.
//!
//! Apart from snip and micro because it is the only stage that calls the model, saves the
//! transcript first and keeps state between requests; and it can fail ([`SummaryError`]), in
//! which case the request goes out snipped.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_core::fragment::Template;
use agent_core::side_call::{self, JsonShape, SideCallError, TranscriptStyle};
use agent_core::{FragmentKind, Message};
use serde::{Deserialize, Serialize};

use super::Compactor;
use crate::transcript::{TranscriptError, TranscriptLog};

const SUMMARY_PROMPT: &str = include_str!("../summary_prompt.md");
/// The summary as a request carries it: a fragment, laid out in its own file.
const SUMMARY_MESSAGE: Template = Template::new(
    FragmentKind::ConversationSummary,
    include_str!("../summary_message.md"),
);

/// The structured summary the model must return: exactly these fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// What the user wants done now.
    pub current_goal: String,
    /// Facts learned that are still needed.
    pub key_findings: Vec<String>,
    /// Paths, and what happened to them.
    pub files_read_or_changed: Vec<String>,
    /// Steps not done yet.
    pub remaining_work: Vec<String>,
    /// Instructions and preferences the user gave: the part a summary must never lose.
    pub user_constraints: Vec<String>,
}

/// The summary of the history's groups `1..cut` (or of the part of them the snip window
/// showed), recognised by content: the first group and the group just before the cut. The
/// history only grows, so those two pin the rest; comparing every covered message would cost a
/// pass over the whole history on every request.
pub(super) struct Cached {
    first: Vec<Arc<Message>>,
    pub(super) cut: usize,
    boundary: Vec<Arc<Message>>,
    pub(super) summary: Summary,
    pub(super) message: Arc<Message>,
}

impl Cached {
    pub(super) fn covers(&self, groups: &[Vec<Arc<Message>>]) -> bool {
        self.cut <= groups.len()
            && groups.first() == Some(&self.first)
            && self.cut.checked_sub(1).and_then(|i| groups.get(i)) == Some(&self.boundary)
    }
}

impl Compactor {
    /// Asks the model to summarize `groups[from..cut]`, extending `previous` when there is one,
    /// after appending what the session transcript lacks of `groups[..cut]`.
    pub(super) async fn summarize(
        &self,
        transcript: &mut TranscriptLog,
        groups: &[Vec<Arc<Message>>],
        previous: Option<&Summary>,
        (from, cut): (usize, usize),
    ) -> Result<Cached, SummaryError> {
        let path = transcript.append(&self.workspace, &groups[..cut])?;
        let mut input = String::new();
        if let Some(previous) = previous {
            input.push_str("Summary of the conversation so far:\n");
            input
                .push_str(&serde_json::to_string_pretty(previous).map_err(SummaryError::Previous)?);
            input.push_str("\n\nWhat happened after that:\n");
        }
        // Each message ends with a newline here (the memory transcript joins them instead).
        let new_part = &groups[from..cut];
        for message in new_part.iter().flatten() {
            input.push_str(&summary_line(message));
            input.push('\n');
        }
        self.summaries.fetch_add(1, Ordering::SeqCst);
        tracing::info!(transcript = %path, groups = new_part.len(), "summarizing older messages");
        let summary: Summary = side_call::ask_json(
            self.model.as_ref(),
            SUMMARY_PROMPT,
            input,
            JsonShape::Object,
        )
        .await?;
        let json = serde_json::to_string_pretty(&summary).map_err(SummaryError::Render)?;
        Ok(Cached {
            first: groups[0].clone(),
            cut,
            boundary: groups[cut - 1].clone(),
            summary,
            // The summary is the model's text: escaped, so it cannot close its own marker.
            message: Arc::new(
                SUMMARY_MESSAGE
                    .fill()
                    .text("summary", json)
                    .render()
                    .into_message(),
            ),
        })
    }
}

/// One message as the summary's transcript shows it. A fragment (a job's notice, a hook's
/// context, a scheduled run) keeps its text, marker and escaping included, but is named for
/// what it is instead of `user`: the summary's `user_constraints` must never hold what a job
/// printed. Every other message is the side call's usual line.
fn summary_line(message: &Message) -> String {
    let line = side_call::render_message(message, TranscriptStyle::Detailed);
    let Some(kind) = FragmentKind::of(message) else {
        return line;
    };
    // The line is `<role>: <text cut to its bound>`; only the name in front changes.
    let text = line
        .strip_prefix(message.role())
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(&line);
    format!("{} (from the harness, not the user): {text}", kind.label())
}

/// Why no summary was made (the request is then sent snipped, without one).
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The messages to be summarized could not be saved first, so none is summarized.
    #[error("cannot save the transcript")]
    Transcript(#[from] TranscriptError),
    /// The previous summary could not be written into the summary request.
    #[error("cannot serialize the previous summary")]
    Previous(#[source] serde_json::Error),
    /// The new summary could not be written into the request.
    #[error("cannot serialize the summary")]
    Render(#[source] serde_json::Error),
    /// The model's summary call failed, or its answer was not a [`Summary`].
    #[error("the summary call failed")]
    Call(#[from] SideCallError),
}
