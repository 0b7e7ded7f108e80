//! While a real model is being waited for, a spinner with the elapsed time on stderr: a local
//! model takes 10–60 s per request, and a screen that just stops looks like a hang.
//!
//! A decorator around the model client, so neither the loop nor the adapter knows about it. It
//! draws only when stderr is a terminal and `NO_COLOR` is not set, and it clears its line before
//! the reply is handed on, so what the CLI prints next starts on a clean line.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_core::{AgentEvent, EventSink, ModelClient, ModelError, ModelReply, ModelRequest};
use async_trait::async_trait;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const TICK: Duration = Duration::from_millis(100);

/// Whether a spinner may draw: on a terminal, unless `NO_COLOR` asks for plain output.
pub fn wanted() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// The spinner's line after `ticks` ticks: a frame and the whole seconds waited.
pub fn line(ticks: u64) -> String {
    let frame = FRAMES[(ticks % FRAMES.len() as u64) as usize];
    let seconds = ticks * TICK.as_millis() as u64 / 1000;
    format!("\r{frame} waiting for the model… {seconds}s")
}

/// A model client that shows a spinner while `inner` answers.
#[derive(Clone)]
pub struct Spinning {
    inner: Arc<dyn ModelClient>,
}

impl std::fmt::Debug for Spinning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spinning").finish_non_exhaustive()
    }
}

impl Spinning {
    /// Wraps `inner`; the spinner shows only while a call is running.
    pub fn new(inner: Arc<dyn ModelClient>) -> Self {
        Self { inner }
    }
}

/// The spinner of one call: drawn by a task until stopped, then erased once.
struct Ticker {
    task: tokio::task::JoinHandle<()>,
    /// Set, under the stderr lock, when the line is erased: a tick already running on
    /// another thread then draws nothing after the erase.
    stopped: Arc<AtomicBool>,
}

impl Ticker {
    fn start() -> Self {
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = stopped.clone();
        let task = tokio::spawn(async move {
            let mut ticks = 0;
            loop {
                tokio::time::sleep(TICK).await;
                ticks += 1;
                let mut err = std::io::stderr().lock();
                if flag.load(Ordering::Acquire) {
                    return;
                }
                let _ = err.write_all(line(ticks).as_bytes());
                let _ = err.flush();
            }
        });
        Self { task, stopped }
    }

    /// Stops drawing and erases the line (carriage return, clear to end of line); only the
    /// first call does anything.
    fn stop(&self) {
        let mut err = std::io::stderr().lock();
        if self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        self.task.abort();
        let _ = err.write_all(b"\r\x1b[2K");
        let _ = err.flush();
    }
}

/// A call dropped mid-way (Ctrl-C) erases its spinner too.
impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Passes the deltas on, erasing the spinner before the first one: streamed text is the
/// progress from then on, and it must not be drawn over.
struct StopOnText<'a> {
    ticker: &'a Ticker,
    deltas: &'a dyn EventSink,
}

impl EventSink for StopOnText<'_> {
    fn emit(&self, event: &AgentEvent) {
        if let AgentEvent::TextDelta { .. } = event {
            self.ticker.stop();
        }
        self.deltas.emit(event);
    }
}

#[async_trait]
impl ModelClient for Spinning {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let ticker = Ticker::start();
        let reply = self.inner.complete(request).await;
        ticker.stop();
        reply
    }

    async fn complete_streamed(
        &self,
        request: &ModelRequest,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        let ticker = Ticker::start();
        let sink = StopOnText {
            ticker: &ticker,
            deltas,
        };
        let reply = self.inner.complete_streamed(request, &sink).await;
        ticker.stop();
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_a_turning_frame_and_whole_seconds() {
        let lines: Vec<String> = [1, 2, 10, 25, 600].into_iter().map(line).collect();
        assert_eq!(
            lines,
            [
                "\r⠙ waiting for the model… 0s",
                "\r⠹ waiting for the model… 0s",
                "\r⠋ waiting for the model… 1s",
                "\r⠴ waiting for the model… 2s",
                "\r⠋ waiting for the model… 60s",
            ]
        );
    }

    #[tokio::test]
    async fn the_reply_is_handed_on_unchanged() {
        let inner = Arc::new(agent_test_support::ScriptedModel::new([
            agent_test_support::ScriptStep::Reply(ModelReply::text("hello")),
        ]));
        let spinning = Spinning::new(inner.clone());
        let request = ModelRequest {
            messages: vec![Arc::new(agent_core::Message::user("hi"))],
            ..ModelRequest::default()
        };
        let reply = spinning.complete(&request).await.unwrap();
        assert_eq!(reply, ModelReply::text("hello"));
        inner.finish().unwrap();
    }
}
