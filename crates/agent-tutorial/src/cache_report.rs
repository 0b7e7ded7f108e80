//! `--cache-report`: how much of each request a provider's prompt cache could have reused.
//!
//! A provider caches the prompt by prefix: a request is served from cache up to the first
//! byte that differs from an earlier one. So the figure that says whether a harness keeps its
//! cache warm is the *stable prefix*: the longest common prefix of this request with the
//! previous one, over this request's length. It is measured on the wire form of what the
//! model reads — the tools, then the messages, as the adapter serializes them (servers render
//! the tool list ahead of the conversation) — and shown next to what the server says it
//! reused (`usage.prompt_tokens_details.cached_tokens`, `-` when it does not say).

use std::time::Instant;

use agent_core::{AgentEvent, ModelRequest, Usage};
use serde::Serialize;

/// How `--cache-report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// A table, one row per request.
    Table,
    /// One JSON array of rows.
    Json,
}

/// The report in `format`.
pub fn render(rows: &[CacheRow], format: ReportFormat) -> String {
    match format {
        ReportFormat::Table => table(rows),
        ReportFormat::Json => json(rows) + "\n",
    }
}

/// One model request of the run, as the cache sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheRow {
    /// 1-based, in the order the requests were sent.
    pub request: usize,
    /// The serialized tools and messages.
    pub bytes: usize,
    /// How many of those bytes the previous request started with too.
    pub stable_prefix_bytes: usize,
    /// `stable_prefix_bytes / bytes` (0 for the first request: nothing came before it).
    pub stable_prefix_ratio: f64,
    /// What the server reported, when it reported usage.
    pub prompt_tokens: Option<u32>,
    /// How many of those the server read from its prompt cache, when it said.
    pub cached_prompt_tokens: Option<u32>,
    /// From sending the request to its reply, retries included.
    pub elapsed_ms: Option<u64>,
}

/// The wire bytes the stable prefix is measured on: the tools, then the messages, exactly as
/// the Chat Completions adapter serializes them.
pub fn prefix_bytes(request: &ModelRequest) -> Vec<u8> {
    let body = agent_openai::to_chat_request("", agent_openai::Sampling::default(), request);
    // Serializing plain data (strings, numbers, JSON values) cannot fail; an empty part would
    // only make the ratio look worse, never better.
    let mut bytes = serde_json::to_vec(&body.tools).unwrap_or_default();
    bytes.extend(serde_json::to_vec(&body.messages).unwrap_or_default());
    bytes
}

/// The length of the longest common prefix of `a` and `b`.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// `prefix / total`, 0 for an empty request.
pub fn ratio(prefix: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        prefix as f64 / total as f64
    }
}

/// Collects one [`CacheRow`] per request from the run's events. Time comes from the caller, so
/// a test can hand in fixed instants.
#[derive(Debug, Default)]
pub struct CacheLedger {
    previous: Option<Vec<u8>>,
    rows: Vec<CacheRow>,
    sent_at: Option<Instant>,
}

impl CacheLedger {
    /// No rows yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one event: a sent request opens a row, the next reply completes it.
    pub fn observe(&mut self, event: &AgentEvent, at: Instant) {
        match event {
            AgentEvent::RequestSent { request, .. } => self.request_sent(request, at),
            AgentEvent::ReplyReceived(reply) => self.reply_received(reply.usage, at),
            _ => {}
        }
    }

    /// Opens the row of `request`, sent at `at`, measuring its prefix against the previous one.
    pub fn request_sent(&mut self, request: &ModelRequest, at: Instant) {
        let bytes = prefix_bytes(request);
        let stable = self
            .previous
            .as_deref()
            .map_or(0, |previous| common_prefix(previous, &bytes));
        self.rows.push(CacheRow {
            request: self.rows.len() + 1,
            bytes: bytes.len(),
            stable_prefix_bytes: stable,
            stable_prefix_ratio: ratio(stable, bytes.len()),
            prompt_tokens: None,
            cached_prompt_tokens: None,
            elapsed_ms: None,
        });
        self.previous = Some(bytes);
        self.sent_at = Some(at);
    }

    /// Completes the open row with the reply's usage and the time it took; without an open
    /// row, nothing happens.
    pub fn reply_received(&mut self, usage: Option<Usage>, at: Instant) {
        let (Some(row), Some(sent)) = (self.rows.last_mut(), self.sent_at.take()) else {
            return;
        };
        row.elapsed_ms = Some(u64::try_from(at.duration_since(sent).as_millis()).unwrap_or(0));
        if let Some(usage) = usage {
            row.prompt_tokens = Some(usage.prompt_tokens);
            row.cached_prompt_tokens = usage.cached_prompt_tokens;
        }
    }

    /// One row per request so far, in order.
    pub fn rows(&self) -> &[CacheRow] {
        &self.rows
    }
}

fn or_dash(value: Option<impl ToString>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The table `--cache-report` prints on stderr after the run.
pub fn table(rows: &[CacheRow]) -> String {
    let mut out = format!(
        "{:>3}  {:>8}  {:>13}  {:>6}  {:>13}  {:>13}  {:>8}\n",
        "#", "bytes", "stable prefix", "ratio", "prompt tokens", "cached tokens", "time ms"
    );
    for row in rows {
        out.push_str(&format!(
            "{:>3}  {:>8}  {:>13}  {:>6.3}  {:>13}  {:>13}  {:>8}\n",
            row.request,
            row.bytes,
            row.stable_prefix_bytes,
            row.stable_prefix_ratio,
            or_dash(row.prompt_tokens),
            or_dash(row.cached_prompt_tokens),
            or_dash(row.elapsed_ms),
        ));
    }
    out
}

/// `--cache-report --json`: the rows as one JSON array.
pub fn json(rows: &[CacheRow]) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_else(|_| "[]".to_string())
}

/// The mean of the ratios of `rows` (0 for none).
pub fn mean_ratio<'a>(rows: impl IntoIterator<Item = &'a CacheRow>) -> f64 {
    let (sum, n) = rows.into_iter().fold((0.0, 0usize), |(s, n), r| {
        (s + r.stable_prefix_ratio, n + 1)
    });
    if n == 0 { 0.0 } else { sum / n as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::{Message, ModelReply};
    use std::sync::Arc;
    use std::time::Duration;

    fn request(messages: &[Message]) -> ModelRequest {
        ModelRequest {
            messages: messages.iter().cloned().map(Arc::new).collect(),
            ..ModelRequest::default()
        }
    }

    #[test]
    fn the_common_prefix_stops_at_the_first_difference() {
        assert_eq!(common_prefix(b"abcd", b"abxd"), 2);
        assert_eq!(common_prefix(b"abc", b"abcdef"), 3);
        assert_eq!(common_prefix(b"", b"abc"), 0);
        assert_eq!(ratio(0, 0), 0.0);
        assert_eq!(ratio(3, 4), 0.75);
    }

    #[test]
    fn an_appended_message_keeps_the_whole_previous_request_as_prefix() {
        let first = request(&[Message::system("s"), Message::user("u")]);
        let second = request(&[
            Message::system("s"),
            Message::user("u"),
            ModelReply::text("a").to_message(),
        ]);
        let (a, b) = (prefix_bytes(&first), prefix_bytes(&second));
        // All but the closing `]` of the message array.
        assert_eq!(common_prefix(&a, &b), a.len() - 1);
    }

    #[test]
    fn rows_pair_each_request_with_its_reply_and_the_one_before() {
        let t0 = Instant::now();
        let mut ledger = CacheLedger::new();
        let first = request(&[Message::system("s"), Message::user("u")]);
        let changed = request(&[Message::system("S"), Message::user("u")]);
        ledger.request_sent(&first, t0);
        ledger.observe(
            &AgentEvent::ReplyReceived(ModelReply {
                usage: Some(Usage {
                    prompt_tokens: 20,
                    completion_tokens: 1,
                    total_tokens: 21,
                    cached_prompt_tokens: Some(16),
                }),
                ..ModelReply::text("a")
            }),
            t0 + Duration::from_millis(250),
        );
        ledger.request_sent(&changed, t0 + Duration::from_secs(1));
        ledger.reply_received(None, t0 + Duration::from_millis(1040));
        let bytes = prefix_bytes(&first).len();
        // No tools (`null`), then the messages: shared up to the system prompt's first letter.
        let stable = r#"null[{"role":"system","content":""#.len();
        assert_eq!(
            ledger.rows(),
            [
                CacheRow {
                    request: 1,
                    bytes,
                    stable_prefix_bytes: 0,
                    stable_prefix_ratio: 0.0,
                    prompt_tokens: Some(20),
                    cached_prompt_tokens: Some(16),
                    elapsed_ms: Some(250),
                },
                CacheRow {
                    request: 2,
                    bytes,
                    stable_prefix_bytes: stable,
                    stable_prefix_ratio: stable as f64 / bytes as f64,
                    prompt_tokens: None,
                    cached_prompt_tokens: None,
                    elapsed_ms: Some(40),
                },
            ]
        );
    }

    #[test]
    fn the_table_shows_a_dash_for_what_the_server_did_not_report() {
        let row = |request, cached| CacheRow {
            request,
            bytes: 1000,
            stable_prefix_bytes: 950,
            stable_prefix_ratio: 0.95,
            prompt_tokens: Some(300),
            cached_prompt_tokens: cached,
            elapsed_ms: Some(12),
        };
        assert_eq!(
            table(&[row(1, Some(256)), row(2, None)]),
            [
                "  #     bytes  stable prefix   ratio  prompt tokens  cached tokens   time ms",
                "  1      1000            950   0.950            300            256        12",
                "  2      1000            950   0.950            300              -        12",
                "",
            ]
            .join("\n")
        );
        assert_eq!(mean_ratio(&[row(1, None), row(2, None)]), 0.95);
    }
}
