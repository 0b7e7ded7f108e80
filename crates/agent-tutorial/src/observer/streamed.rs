//! `--stream`: what the terminal shows of a reply while it streams, so that a retried
//! attempt never prints its text twice.

use agent_core::AgentEvent;

/// What the terminal prints for one event of a streamed reply (`--stream`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamOutput {
    /// Text of the answer, for stdout as it is (no line break added).
    Text(String),
    /// A notice line for stderr, ending in a line break.
    Notice(String),
    /// The turn's answer was already shown as it streamed: it is not printed again.
    AlreadyShown,
}

/// The notice when a retried request streams text that differs from what the terminal
/// already shows; its text follows whole, from a fresh line (or, when the retry ended short of
/// what was shown, as the answer printed at the end).
pub const STREAM_DIFFERS_NOTICE: &str =
    "[stream] the retried reply differs from the text shown above; its text follows";

/// What of the reply being streamed the terminal shows, so that no text is printed twice.
///
/// A request that is sent again (a retry after a cut stream, an overload, the larger-limit
/// retry, the compacted retry after "prompt too long") streams its text from the start
/// again. Such an attempt always begins after an event that says so: a
/// [`AgentEvent::Recovery`] retry, or [`AgentEvent::RequestSent`]. From there the new
/// attempt's text is compared with what is shown: while it repeats it, nothing is printed;
/// the part beyond is printed as it comes; if it ever differs, a notice says so and the new
/// text follows whole. A continuation (`Continuing`) is new text after the part before it.
/// At the end, the answer is left unprinted only when the terminal shows exactly it.
///
/// The text of the reply so far (earlier parts and this attempt) is always a prefix of what is
/// shown, so it is kept as a length into `shown`, not copied: a delta costs its own length.
#[derive(Debug, Default)]
pub(super) struct StreamedText {
    /// What the terminal shows of the reply being streamed.
    shown: String,
    /// How much of `shown` the reply's text so far covers (earlier parts and this attempt).
    at: usize,
    /// Where this part began: the length of the reply's earlier parts (continuations).
    part: usize,
    /// The last finished reply's text, when the terminal shows exactly it.
    answered: Option<String>,
}

impl StreamedText {
    pub(super) fn observe(&mut self, event: &AgentEvent) -> Vec<StreamOutput> {
        use agent_core::RecoveryAction as R;
        match event {
            AgentEvent::TextDelta { text } => self.delta(text),
            AgentEvent::RequestSent { .. }
            | AgentEvent::Recovery(
                R::Retrying { .. } | R::FallbackModel { .. } | R::LargerLimit { .. },
            ) => {
                self.at = self.part;
                Vec::new()
            }
            AgentEvent::Recovery(R::Continuing { .. }) => {
                self.part = self.at;
                Vec::new()
            }
            AgentEvent::ReplyReceived(reply) => {
                let shown = std::mem::take(&mut self.shown);
                (self.at, self.part) = (0, 0);
                if shown.is_empty() {
                    self.answered = None;
                    return Vec::new();
                }
                let exact = reply.content.as_deref() == Some(shown.as_str());
                self.answered = exact.then_some(shown);
                let mut out = vec![StreamOutput::Text("\n".into())];
                if !exact {
                    // A retry that ended short of what was shown: the reply follows whole
                    // (printed as the answer, or not at all for a reply of tool calls).
                    out.push(StreamOutput::Notice(format!("{STREAM_DIFFERS_NOTICE}\n")));
                }
                out
            }
            AgentEvent::TurnAnswered { text } => {
                if self.answered.take().as_deref() == Some(text.as_str()) {
                    vec![StreamOutput::AlreadyShown]
                } else {
                    Vec::new()
                }
            }
            AgentEvent::TurnFailed { .. } | AgentEvent::TurnCancelled => {
                let open = !self.shown.is_empty();
                *self = Self::default();
                if open {
                    vec![StreamOutput::Text("\n".into())]
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        }
    }

    /// One piece of the attempt now streaming: printed where it goes past what is shown,
    /// skipped where it repeats it, and the whole text again (after a notice) where it differs.
    fn delta(&mut self, text: &str) -> Vec<StreamOutput> {
        let ahead = &self.shown[self.at..];
        if ahead.starts_with(text) {
            // A retry repeating what is shown.
            self.at += text.len();
            return Vec::new();
        }
        if let Some(new) = text.strip_prefix(ahead) {
            let out = vec![StreamOutput::Text(new.to_string())];
            self.shown.push_str(new);
            self.at = self.shown.len();
            return out;
        }
        self.shown.truncate(self.at);
        self.shown.push_str(text);
        self.at = self.shown.len();
        vec![
            StreamOutput::Text("\n".into()),
            StreamOutput::Notice(format!("{STREAM_DIFFERS_NOTICE}\n")),
            StreamOutput::Text(self.shown.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use agent_core::{ModelReply, ModelRequest, RecoveryAction, RetryCause};

    use super::*;

    fn delta(text: &str) -> AgentEvent {
        AgentEvent::TextDelta { text: text.into() }
    }

    fn sent() -> AgentEvent {
        AgentEvent::RequestSent {
            index: 0,
            request: Arc::new(ModelRequest::default()),
        }
    }

    fn retrying() -> AgentEvent {
        AgentEvent::Recovery(RecoveryAction::Retrying {
            wait: Duration::ZERO,
            cause: RetryCause::Transport,
            attempt: 2,
            max_attempts: 6,
        })
    }

    fn answered(text: &str) -> [AgentEvent; 2] {
        [
            AgentEvent::ReplyReceived(ModelReply::text(text)),
            AgentEvent::TurnAnswered { text: text.into() },
        ]
    }

    /// Everything printed for `events`, stdout text as it is, a notice as `<notice>`, an
    /// answer left unprinted as `<shown>`.
    fn printed(events: impl IntoIterator<Item = AgentEvent>) -> String {
        let mut streamed = StreamedText::default();
        let mut out = String::new();
        for event in events {
            for output in streamed.observe(&event) {
                match output {
                    StreamOutput::Text(text) => out.push_str(&text),
                    StreamOutput::Notice(line) => out.push_str(&format!("<{}>", line.trim_end())),
                    StreamOutput::AlreadyShown => out.push_str("<shown>"),
                }
            }
        }
        out
    }

    #[test]
    fn text_is_printed_as_it_comes_and_the_answer_not_again() {
        let events = [sent(), delta("Hel"), delta("lo")]
            .into_iter()
            .chain(answered("Hello"));
        assert_eq!(printed(events), "Hello\n<shown>");
    }

    #[test]
    fn a_retry_after_a_cut_stream_prints_only_what_was_not_shown() {
        let events = [
            sent(),
            delta("Hel"),
            retrying(),
            delta("H"),
            delta("ello"),
            delta(", world"),
        ]
        .into_iter()
        .chain(answered("Hello, world"));
        assert_eq!(printed(events), "Hello, world\n<shown>");
    }

    #[test]
    fn a_retry_that_writes_something_else_says_so_and_prints_it_whole() {
        let events = [sent(), delta("Hello"), retrying(), delta("Hi there")]
            .into_iter()
            .chain(answered("Hi there"));
        assert_eq!(
            printed(events),
            format!("Hello\n<{STREAM_DIFFERS_NOTICE}>Hi there\n<shown>")
        );
    }

    #[test]
    fn a_retry_shorter_than_what_was_shown_leaves_the_answer_to_be_printed_whole() {
        let events = [sent(), delta("Hello there"), retrying(), delta("Hello")]
            .into_iter()
            .chain(answered("Hello"));
        // The answer is printed by the caller as without streaming (no `<shown>`).
        assert_eq!(
            printed(events),
            format!("Hello there\n<{STREAM_DIFFERS_NOTICE}>")
        );
    }

    #[test]
    fn a_continuation_adds_to_the_part_before_it() {
        let events = [
            sent(),
            delta("The first half"),
            AgentEvent::Recovery(RecoveryAction::LargerLimit { max_tokens: 2048 }),
            delta("The first half"),
            AgentEvent::Recovery(RecoveryAction::Continuing {
                part: 2,
                max_parts: 3,
            }),
            delta(", the second."),
        ]
        .into_iter()
        .chain(answered("The first half, the second."));
        assert_eq!(printed(events), "The first half, the second.\n<shown>");
    }

    #[test]
    fn a_cancelled_turn_ends_the_half_line_and_starts_afresh() {
        let events = [
            sent(),
            delta("Hal"),
            AgentEvent::TurnCancelled,
            sent(),
            delta("New"),
        ]
        .into_iter()
        .chain(answered("New"));
        assert_eq!(printed(events), "Hal\nNew\n<shown>");
    }

    #[test]
    fn a_reply_that_streamed_nothing_prints_nothing_here() {
        let events = [sent()].into_iter().chain(answered("whole"));
        assert_eq!(printed(events), "");
    }
}
