//! While a real model is being waited for, a spinner with the elapsed time on stderr: a local
//! model takes 10–60 s per request, and a screen that just stops looks like a hang.
//!
//! A decorator around the model client, so neither the loop nor the adapter knows about it. It
//! draws only when stderr is a terminal and `NO_COLOR` is not set, and it clears its line before
//! the reply is handed on, so what the CLI prints next starts on a clean line.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use agent_core::{ModelClient, ModelError, ModelReply, ModelRequest};
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

#[async_trait]
impl ModelClient for Spinning {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let ticker = tokio::spawn(async {
            let mut ticks = 0;
            loop {
                tokio::time::sleep(TICK).await;
                ticks += 1;
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(line(ticks).as_bytes());
                let _ = err.flush();
            }
        });
        let reply = self.inner.complete(request).await;
        ticker.abort();
        let _ = ticker.await;
        // Erase the line (carriage return, clear to end of line).
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(b"\r\x1b[2K");
        let _ = err.flush();
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
