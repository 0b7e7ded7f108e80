//! `--output-format text|json|stream-json` for one-shot runs (chapter 11 on), in Claude Code's
//! `-p` conventions, for scripts that read what a run did:
//!
//! - `text` (the default): the answer on stdout, everything else on stderr, as always.
//! - `json`: nothing on stdout until the run ends, then one object ([`Summary`]): the answer,
//!   how many turns and requests, the tokens the server reported, the duration, why the
//!   run ended, and the id of the session kept (`--resume` takes it).
//! - `stream-json`: every event of the session as one JSON object a line on stdout, the
//!   moment it happens ([`event_line`]): `{"seq":…,"agent":…,"turn":…,"event":"<name>",…}`.
//!
//! Everything on stdout is JSON, escaped for the terminal too: serde escapes the C0 control
//! characters, and [`json_text`] the DEL and C1 ones it leaves as they are.

use std::time::Duration;

use agent_core::{AgentEvent, EventEnvelope, ModelReply};
use agent_harness::session::EndReason;
use clap::ValueEnum;
use serde::Serialize;
use serde_json::{Value, json};

/// What a one-shot run prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// The answer as text.
    #[default]
    Text,
    /// One JSON object when the run ends.
    Json,
    /// One JSON object per event, as it happens.
    StreamJson,
}

/// What `--output-format json` prints when the run ends.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    /// The lead's last answer (`null`: it gave none).
    pub answer: Option<String>,
    /// Turns the lead ended (answered, failed or cancelled).
    pub turns: u64,
    /// Requests the agents of the session built and sent (a retry of the same request counts
    /// once; side calls such as memory extraction are not counted).
    pub requests: u64,
    /// Prompt tokens the server reported, summed.
    pub input_tokens: u64,
    /// Completion tokens the server reported, summed.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache, summed.
    pub cached_tokens: u64,
    /// Replies whose server reported no usage (their tokens are not in the sums).
    pub replies_without_usage: u64,
    /// From the start of the session to its end.
    pub duration_ms: u64,
    /// `done`, `turn_failed`, `interrupted` or `signal`.
    pub exit: &'static str,
    /// The session this run's history is kept as (`--resume` takes it); `null` when none is
    /// kept (nothing ran, or the session could not be written).
    pub session_id: Option<String>,
}

impl Summary {
    /// Counts what `envelope` tells.
    pub fn record(&mut self, envelope: &EventEnvelope) {
        match &envelope.event {
            AgentEvent::RequestSent { .. } => self.requests += 1,
            AgentEvent::ReplyReceived(reply) => self.add_usage(reply),
            AgentEvent::TurnAnswered { text } if envelope.agent.is_lead() => {
                self.turns += 1;
                self.answer = Some(text.clone());
            }
            AgentEvent::TurnFailed { .. } | AgentEvent::TurnCancelled
                if envelope.agent.is_lead() =>
            {
                self.turns += 1;
            }
            _ => {}
        }
    }

    fn add_usage(&mut self, reply: &ModelReply) {
        match &reply.usage {
            Some(usage) => {
                self.input_tokens += u64::from(usage.prompt_tokens);
                self.output_tokens += u64::from(usage.completion_tokens);
                self.cached_tokens += u64::from(usage.cached_prompt_tokens.unwrap_or(0));
            }
            None => self.replies_without_usage += 1,
        }
    }

    /// The summary as the run ends: `elapsed` since the start, `end` why.
    pub fn finish(mut self, elapsed: Duration, end: &EndReason) -> String {
        self.duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        self.exit = match end {
            EndReason::Done => "done",
            EndReason::TurnFailed(_) => "turn_failed",
            EndReason::Interrupted => "interrupted",
            EndReason::Signal(_) => "signal",
        };
        json_text(&serde_json::to_value(&self).unwrap_or(Value::Null))
    }
}

/// One event as a `stream-json` line (without the newline).
pub fn event_line(envelope: &EventEnvelope) -> String {
    let mut line = json!({
        "seq": envelope.seq,
        "agent": envelope.agent.as_str(),
        "turn": envelope.turn.map(|t| t.0),
    });
    let (name, fields) = event_fields(&envelope.event);
    if let (Value::Object(line), Value::Object(fields)) = (&mut line, fields) {
        line.insert("event".into(), name.into());
        line.extend(fields);
    }
    json_text(&line)
}

/// An event's name and its fields: plain data, nothing of a request but its size (the
/// request itself is `--record`'s business).
fn event_fields(event: &AgentEvent) -> (&'static str, Value) {
    match event {
        AgentEvent::RequestSent { index, request } => (
            "request_sent",
            json!({"index": index, "messages": request.messages.len(), "tools": request.tools.len()}),
        ),
        AgentEvent::TextDelta { text } => ("text_delta", json!({"text": text})),
        AgentEvent::ReplyReceived(reply) => ("reply_received", json!({"reply": reply})),
        AgentEvent::ToolStarted(call) => ("tool_started", json!({"call": call})),
        AgentEvent::ToolFinished { call, result } => (
            "tool_finished",
            match result {
                Ok(output) => {
                    json!({"call_id": call.id, "tool": call.name, "ok": true, "output": output})
                }
                Err(failure) => json!({
                    "call_id": call.id, "tool": call.name, "ok": false,
                    "code": failure.code.as_str(), "message": failure.message,
                }),
            },
        ),
        AgentEvent::PlanUpdated(steps) => (
            "plan_updated",
            json!({"steps": steps.iter().map(|s| json!({"content": s.content, "status": format!("{:?}", s.status).to_lowercase()})).collect::<Vec<_>>()}),
        ),
        AgentEvent::HookFailed {
            hook,
            event,
            message,
        } => (
            "hook_failed",
            json!({"hook": hook, "hook_event": event, "message": message}),
        ),
        AgentEvent::ResultPersisted {
            call_id,
            path,
            bytes,
        } => (
            "result_persisted",
            json!({"call_id": call_id, "path": path, "bytes": bytes}),
        ),
        AgentEvent::Compacted {
            kind,
            before,
            after,
        } => (
            "compacted",
            json!({"kind": format!("{kind:?}").to_lowercase(), "before": before, "after": after}),
        ),
        AgentEvent::ReminderInjected { reminder } => {
            ("reminder_injected", json!({"reminder": reminder}))
        }
        AgentEvent::PromptAssembled { bytes, .. } => ("prompt_assembled", json!({"bytes": bytes})),
        AgentEvent::MemorySelected { names } => ("memory_selected", json!({"names": names})),
        AgentEvent::MemoryExtracted { names } => ("memory_extracted", json!({"names": names})),
        AgentEvent::MemoryFailed { message } => ("memory_failed", json!({"message": message})),
        AgentEvent::Recovery(action) => ("recovery", json!({"action": action.to_string()})),
        AgentEvent::JobFinished {
            id,
            command,
            status,
            elapsed_ms,
        } => (
            "job_finished",
            json!({"id": id, "command": command, "status": status, "elapsed_ms": elapsed_ms}),
        ),
        AgentEvent::ScheduleDue { id, marker } => {
            ("schedule_due", json!({"id": id, "marker": marker}))
        }
        AgentEvent::TaskChanged {
            id,
            subject,
            status,
        } => (
            "task_changed",
            json!({"id": id, "subject": subject, "status": status}),
        ),
        AgentEvent::PermissionDecided(decision) => (
            "permission_decided",
            json!({
                "call_id": decision.call_id, "tool": decision.tool,
                "allowed": decision.allowed, "source": decision.source, "reason": decision.reason,
            }),
        ),
        AgentEvent::SubagentStarted {
            call_id,
            agent,
            description,
        } => (
            "subagent_started",
            json!({"call_id": call_id, "subagent": agent.as_str(), "description": description}),
        ),
        AgentEvent::SubagentFinished { call_id, agent } => (
            "subagent_finished",
            json!({"call_id": call_id, "subagent": agent.as_str()}),
        ),
        AgentEvent::TurnAnswered { text } => ("turn_answered", json!({"text": text})),
        AgentEvent::TurnFailed { error } => ("turn_failed", json!({"error": error})),
        AgentEvent::TurnCancelled => ("turn_cancelled", json!({})),
        // A kind of event this front end does not know yet: named, never dropped silently.
        _ => ("other", json!({})),
    }
}

/// `value` as compact JSON in which no character can steer a terminal: serde already writes
/// the C0 controls as `\u00XX`; DEL and the C1 controls (U+0080–U+009F, `CSI` among them)
/// are written the same way.
pub fn json_text(value: &Value) -> String {
    let text = value.to_string();
    if !text.chars().any(is_raw_control) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_raw_control(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// DEL or a C1 control: characters serde leaves as they are inside strings.
fn is_raw_control(c: char) -> bool {
    ('\u{7f}'..='\u{9f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::{AgentId, TurnId};

    #[test]
    fn an_event_line_names_the_agent_turn_and_event_and_escapes_every_control() {
        let envelope = EventEnvelope {
            agent: AgentId::lead(),
            turn: Some(TurnId(1)),
            seq: 7,
            event: AgentEvent::TurnAnswered {
                text: "done \u{1b}[31m red \u{9b}31m".into(),
            },
        };
        assert_eq!(
            event_line(&envelope),
            r#"{"agent":"lead","event":"turn_answered","seq":7,"text":"done \u001b[31m red \u009b31m","turn":1}"#
        );
    }

    #[test]
    fn the_summary_counts_requests_tokens_and_the_leads_turns() {
        let lead = AgentId::lead();
        let mut summary = Summary::default();
        let reply = |usage: Option<agent_core::Usage>| ModelReply {
            usage,
            ..ModelReply::text("x")
        };
        let events = [
            AgentEvent::ReplyReceived(reply(Some(agent_core::Usage {
                prompt_tokens: 100,
                completion_tokens: 7,
                total_tokens: 107,
                cached_prompt_tokens: Some(64),
            }))),
            AgentEvent::ReplyReceived(reply(None)),
            AgentEvent::TurnAnswered {
                text: "the answer".into(),
            },
        ];
        for event in events {
            summary.record(&EventEnvelope {
                agent: lead.clone(),
                turn: Some(TurnId(1)),
                seq: 1,
                event,
            });
        }
        assert_eq!(
            summary.finish(Duration::from_millis(1500), &EndReason::Done),
            r#"{"answer":"the answer","cached_tokens":64,"duration_ms":1500,"exit":"done","input_tokens":100,"output_tokens":7,"replies_without_usage":1,"requests":0,"session_id":null,"turns":1}"#
        );
    }
}
