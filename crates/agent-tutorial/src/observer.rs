//! What the CLI shows on stderr while a turn runs: it renders the run's events, one short
//! line each, so stdout carries only the final answer.

use std::io::Write;
use std::sync::{Mutex, PoisonError};

use agent_core::{AgentEvent, EventSink, ModelReply, PlanStep, StepStatus, ToolFailure};
use agent_policy::escape_controls;

use crate::cache_report::{CacheLedger, CacheRow};
use crate::record::{RecordForm, RequestLog};

mod streamed;

use streamed::StreamedText;
pub use streamed::{STREAM_DIFFERS_NOTICE, StreamOutput};

/// Renders events on stderr; with `--record`, also appends every request as one JSON line.
#[derive(Debug, Default)]
pub struct CliObserver {
    record: Option<Mutex<RequestLog<std::fs::File>>>,
    /// The plan last shown, so an unchanged plan prints nothing.
    plan: Mutex<String>,
    /// A plan written by the tool running now: shown after that tool's `[result]` line.
    pending_plan: Mutex<Option<String>>,
    /// How many subagents are running now (between their `SubagentStarted` and
    /// `SubagentFinished` events): the nesting of the calls told now (chapter 6).
    depth: Mutex<usize>,
    /// `--cache-report`: one row per request, printed after the run.
    cache: Option<Mutex<CacheLedger>>,
    /// `--stream`: what of the reply being streamed is shown.
    streamed: Option<Mutex<StreamedText>>,
}

impl CliObserver {
    /// An observer printing to stderr; with `record`, also appending each request to that file
    /// (created if missing), whole or as what changed since the one before (`form`).
    pub fn new(record: Option<&std::path::Path>, form: RecordForm) -> std::io::Result<Self> {
        let record = match record {
            Some(path) => Some(Mutex::new(RequestLog::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
                form,
            ))),
            None => None,
        };
        Ok(Self {
            record,
            plan: Mutex::default(),
            pending_plan: Mutex::default(),
            depth: Mutex::default(),
            cache: None,
            streamed: None,
        })
    }

    /// Also keeps the cache report's rows (`--cache-report`).
    pub fn with_cache_report(mut self) -> Self {
        self.cache = Some(Mutex::default());
        self
    }

    /// The cache report's rows so far (none without [`Self::with_cache_report`]).
    pub fn cache_rows(&self) -> Vec<CacheRow> {
        self.cache.as_ref().map_or_else(Vec::new, |ledger| {
            ledger
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .rows()
                .to_vec()
        })
    }
}

/// A short log line. Model-chosen text is escaped (after the cut, so no escape is split):
/// a raw escape sequence in a tool's arguments must not be able to rewrite the terminal
/// above the approval question.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max).collect();
        format!("{}…", escape_controls(&cut))
    } else {
        escape_controls(&flat)
    }
}

/// The stderr notice for a final answer the server cut at its token limit.
pub const LENGTH_NOTICE: &str = "note: the model's answer was cut off at its token limit (finish_reason=length); raise --max-tokens";

/// The notice to print for `reply`, if any: only a final answer (no tool calls) that the
/// server reports as cut by the token limit. A cut tool-call reply shows up as a tool error.
pub fn reply_notice(reply: &ModelReply) -> Option<&'static str> {
    let cut = reply.finish_reason.as_deref() == Some("length");
    (cut && reply.tool_calls.is_empty()).then_some(LENGTH_NOTICE)
}

/// `ok: 3 lines, 42 bytes` (`1 line`, `1 byte`) or the first line of the error.
pub fn summarize(result: &Result<String, ToolFailure>) -> String {
    match result {
        Ok(text) => format!(
            "ok: {}, {}",
            count(text.lines().count(), "line"),
            count(text.len(), "byte")
        ),
        Err(failure) => one_line(&failure.to_string(), 160),
    }
}

fn count(n: usize, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// What starts a subagent's `[tool]` and `[result]` lines, once per level of nesting, so its
/// calls stand apart from the parent's (chapter 6).
pub const CHILD_MARK: &str = "  ⤷ ";

/// The mark for a line at `depth` levels of subagent nesting (`""` for the parent).
fn child_prefix(depth: usize) -> String {
    CHILD_MARK.repeat(depth)
}

impl CliObserver {
    fn record(&self, request: &agent_core::ModelRequest) {
        let Some(log) = &self.record else {
            return;
        };
        let _ = log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write(request);
    }

    fn depth(&self) -> usize {
        *self.depth.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The `[tool]` line, marked when a subagent makes the call.
    fn tool_started(&self, call: &agent_core::ToolCall) -> String {
        format!(
            "{}[tool] {} {}",
            child_prefix(self.depth()),
            call.name,
            one_line(&call.arguments, 160)
        )
    }

    /// `[result]`, then the plan the call wrote if it differs from the one last shown.
    fn tool_finished(&self, result: &Result<String, ToolFailure>) -> String {
        let mut text = format!(
            "{}[result] {}\n",
            child_prefix(self.depth()),
            summarize(result)
        );
        let pending = self
            .pending_plan
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(plan) = pending {
            let mut last = self.plan.lock().unwrap_or_else(PoisonError::into_inner);
            if *last != plan {
                text.push_str(&plan);
                *last = plan;
            }
        }
        text
    }
}

/// `summary: 120 -> 14 messages`.
pub fn compaction_line(kind: agent_core::CompactionKind, before: usize, after: usize) -> String {
    format!(
        "[compact] {}: {before} -> {after} {}",
        kind.name(),
        kind.unit()
    )
}

impl CliObserver {
    /// Keeps what `event` adds to the record (`--record`) and the cache report's rows, showing
    /// nothing: what a front end that prints its own output (`--output-format json`) still owes
    /// the flags. [`Self::render`] does this too.
    pub fn keep(&self, event: &AgentEvent) {
        if let Some(ledger) = &self.cache {
            ledger
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .observe(event, std::time::Instant::now());
        }
        if let AgentEvent::RequestSent { request, .. } = event {
            self.record(request);
        }
    }

    /// What the terminal shows for `event` on stderr, whole lines each ending in a line break;
    /// `None` for an event it does not show. Also records requests (`--record`) and keeps the
    /// cache report's rows.
    pub fn render(&self, event: &AgentEvent) -> Option<String> {
        self.keep(event);
        let line = match event {
            AgentEvent::RequestSent { .. } => return None,
            AgentEvent::ReplyReceived(reply) => reply_notice(reply)?.to_string(),
            AgentEvent::ToolStarted(call) => self.tool_started(call),
            AgentEvent::ToolFinished { result, .. } => return Some(self.tool_finished(result)),
            AgentEvent::SubagentStarted { .. } => {
                *self.depth.lock().unwrap_or_else(PoisonError::into_inner) += 1;
                return None;
            }
            AgentEvent::SubagentFinished { .. } => {
                let mut depth = self.depth.lock().unwrap_or_else(PoisonError::into_inner);
                *depth = depth.saturating_sub(1);
                return None;
            }
            AgentEvent::PlanUpdated(steps) => {
                *self
                    .pending_plan
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(render_plan(steps));
                return None;
            }
            // Through the log, as before events: the level filter (`-v`, RUST_LOG) applies.
            AgentEvent::HookFailed {
                hook,
                event,
                message,
            } => {
                tracing::warn!("{event} hook `{hook}` failed: {message}");
                return None;
            }
            AgentEvent::ResultPersisted {
                call_id,
                path,
                bytes,
            } => format!(
                "[artifact] {} -> {} ({bytes} bytes)",
                one_line(call_id, 80),
                one_line(path, 200)
            ),
            AgentEvent::Compacted {
                kind,
                before,
                after,
            } => compaction_line(*kind, *before, *after),
            AgentEvent::ReminderInjected { reminder } => format!("[reminder] {reminder}"),
            AgentEvent::MemorySelected { names } => format!("[memory] selected: {}", list(names)),
            AgentEvent::MemoryExtracted { names } => {
                format!("[memory] extracted: {}", list(names))
            }
            AgentEvent::MemoryFailed { message } => {
                format!("[memory] error: {}", escape_controls(message))
            }
            // The model's name comes from configuration and a call's from the model: escaped.
            AgentEvent::Recovery(action) => escape_controls(&action.to_string()),
            // A job's command is the model's: escaped and cut (chapter 13).
            AgentEvent::JobFinished {
                id,
                command,
                status,
                elapsed_ms,
            } => {
                let summary: String = command.escape_debug().take(80).collect();
                let elapsed = agent_jobs::seconds(std::time::Duration::from_millis(*elapsed_ms));
                format!("[job {id}] {status} after {elapsed}: {summary}")
            }
            // The marker line of a scheduled run (chapter 14); the prompt in it is the model's.
            AgentEvent::ScheduleDue { marker, .. } => escape_controls(marker),
            // A board change (chapter 17): `[board] #3 claimed by ann: the subject`; the subject
            // is a model's or a repository's.
            AgentEvent::TaskChanged {
                id,
                subject,
                status,
            } => format!("[board] #{id} {status}: {}", escape_controls(subject)),
            _ => return None,
        };
        Some(format!("{line}\n"))
    }
}

impl CliObserver {
    /// Shows streamed replies ([`Self::stream_output`]); without it, the text deltas are
    /// ignored and the answer prints whole at the end, as without streaming.
    pub fn with_streamed_text(mut self) -> Self {
        self.streamed = Some(Mutex::default());
        self
    }

    /// What the terminal prints for `event` of a streamed reply, in order (nothing when
    /// streamed text is not shown). A subagent's text is never shown: its result is.
    pub fn stream_output(&self, event: &AgentEvent) -> Vec<StreamOutput> {
        match &self.streamed {
            Some(streamed) if self.depth() == 0 => streamed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .observe(event),
            _ => Vec::new(),
        }
    }
}

/// Renders straight onto stderr (a watcher outside a session: tests, benchmarks).
impl EventSink for CliObserver {
    fn emit(&self, event: &AgentEvent) {
        if let Some(text) = self.render(event) {
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }
}

/// Names, comma-separated, or `(none)`.
fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

/// The plan, one line per step.
pub fn render_plan(steps: &[PlanStep]) -> String {
    let mut out = String::from("[plan]\n");
    for step in steps {
        let mark = match step.status {
            StepStatus::Completed => "[x]",
            StepStatus::InProgress => "[>]",
            StepStatus::Pending => "[ ]",
        };
        out.push_str(&format!("  {mark} {}\n", step.content));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::CompactionKind;

    #[test]
    fn one_line_and_one_byte_are_singular() {
        assert_eq!(summarize(&Ok("x".to_string())), "ok: 1 line, 1 byte");
        assert_eq!(summarize(&Ok("a\nb\n".to_string())), "ok: 2 lines, 4 bytes");
        assert_eq!(summarize(&Ok(String::new())), "ok: 0 lines, 0 bytes");
    }

    #[test]
    fn calls_between_a_subagents_start_and_end_are_marked_once_per_level() {
        let observer = CliObserver::default();
        let call = |name: &str| agent_core::ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        let sub = agent_core::AgentId::lead().subagent(1);
        let events = [
            AgentEvent::ToolStarted(call("task")),
            AgentEvent::SubagentStarted {
                call_id: "c".into(),
                agent: sub.clone(),
                description: "look".into(),
            },
            AgentEvent::ToolStarted(call("read_file")),
            AgentEvent::ToolFinished {
                call: call("read_file"),
                result: Ok("x".into()),
            },
            AgentEvent::SubagentFinished {
                call_id: "c".into(),
                agent: sub,
            },
            AgentEvent::ToolFinished {
                call: call("task"),
                result: Ok("done".into()),
            },
            // A tool named like the subagent tool is not a subagent: nothing is guessed.
            AgentEvent::ToolStarted(call("task")),
        ];
        let shown: String = events.iter().filter_map(|e| observer.render(e)).collect();
        assert_eq!(
            shown,
            "[tool] task {}\n\
             \u{20}\u{20}⤷ [tool] read_file {}\n\
             \u{20}\u{20}⤷ [result] ok: 1 line, 1 byte\n\
             [result] ok: 1 line, 4 bytes\n\
             [tool] task {}\n"
        );
    }

    #[test]
    fn compaction_lines_name_the_kind_and_its_unit() {
        assert_eq!(
            compaction_line(CompactionKind::Summary, 120, 14),
            "[compact] summary: 120 -> 14 messages"
        );
        assert_eq!(
            compaction_line(CompactionKind::Micro, 50_000, 3_000),
            "[compact] micro: 50000 -> 3000 bytes"
        );
    }
}
