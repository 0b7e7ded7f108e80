//! A model that replays scripted replies: the offline engine behind every loop test and the
//! CLI's `--script FILE`.
//!
//! Script file format (JSON array, one element per model request):
//!
//! ```json
//! [
//!   {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "ls"}}]},
//!   {"content": "There are two files."}
//! ]
//! ```
//!
//! `id` may be left out: the call then gets `call_<element>_<n>` (element and call counted
//! from 1 in the file), unique within the script. `arguments` may be a JSON value (sent as its
//! compact text), a string (sent verbatim, so a script can reproduce a model emitting malformed
//! JSON) or left out (`{}`). An element `{"error": {"status": 429, "message": "..."}}` makes
//! that request fail with the [`ModelError`] the status maps to (401/403 auth, 413 prompt too
//! long, 429 rate limited, 5xx server, any other status http); `"retry_after": 2` adds the
//! server's `Retry-After` in seconds to a 429 or 5xx. An element may carry
//! `"finish_reason"` (`"stop"`, `"length"`, …) as a server would report it.
//!
//! Every model request takes the next element, whoever sends it: memory selection, extraction
//! and consolidation (chapter 9 on) and summary compaction (chapter 8 on) are requests too.
//! `docs/scripts.md` lists which feature asks when.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use crate::message::ToolCall;
use crate::model::{ModelClient, ModelError, ModelReply, ModelRequest, RetryAfter};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum ScriptStep {
    Reply(ModelReply),
    Fail(ModelError),
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read script {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("script {path} is not valid: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error("the script has {left} unused repl{} left after the run", if *left == 1 { "y" } else { "ies" })]
    Unconsumed { left: usize },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileStep {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<FileCall>,
    #[serde(default)]
    error: Option<FileError>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileError {
    status: u16,
    #[serde(default)]
    message: String,
    /// `Retry-After` in seconds, as a server would send it with a 429 or a 5xx.
    #[serde(default)]
    retry_after: Option<u64>,
}

impl FileStep {
    /// `element` is this step's 1-based place in the file, for the ids of calls without one.
    fn into_step(self, element: usize) -> ScriptStep {
        if let Some(error) = self.error {
            let message = error.message;
            let retry_after = error
                .retry_after
                .map(|secs| RetryAfter::Seconds(std::time::Duration::from_secs(secs)));
            return ScriptStep::Fail(match error.status {
                401 | 403 => ModelError::Auth {
                    status: error.status,
                    message,
                },
                429 => ModelError::RateLimited {
                    message,
                    retry_after,
                },
                413 => ModelError::PromptTooLong { message },
                s if s >= 500 => ModelError::Server {
                    status: s,
                    message,
                    retry_after,
                },
                s => ModelError::Http { status: s, message },
            });
        }
        let tool_calls = self
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| ToolCall {
                id: call
                    .id
                    .unwrap_or_else(|| format!("call_{element}_{}", n + 1)),
                name: call.name,
                arguments: match call.arguments {
                    None => "{}".to_string(),
                    Some(Value::String(raw)) => raw,
                    Some(value) => value.to_string(),
                },
            })
            .collect();
        ScriptStep::Reply(ModelReply {
            content: self.content,
            tool_calls,
            finish_reason: self.finish_reason,
            ..ModelReply::default()
        })
    }
}

/// Whether a [`ScriptedModel`] keeps the requests it receives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Recording {
    /// Keep nothing: a long scripted session (`run --script`) stays small. The default.
    #[default]
    Off,
    /// Keep a copy of every request, for [`ScriptedModel::requests`] (tests).
    Requests,
}

/// Replays [`ScriptStep`]s in order; records the requests it receives only when built
/// [`recording`](ScriptedModel::recording) them.
#[derive(Debug, Default)]
pub struct ScriptedModel {
    steps: Mutex<VecDeque<ScriptStep>>,
    recording: Recording,
    requests: Mutex<Vec<ModelRequest>>,
    /// Counted even when not recording: a script that runs out names the request it lacked.
    received: Mutex<usize>,
}

impl ScriptedModel {
    pub fn new(steps: impl IntoIterator<Item = ScriptStep>) -> Self {
        Self {
            steps: Mutex::new(steps.into_iter().collect()),
            ..Self::default()
        }
    }

    /// Sets what the model keeps of the requests it receives ([`Recording::Off`] unless set).
    pub fn recording(mut self, recording: Recording) -> Self {
        self.recording = recording;
        self
    }

    /// A script of plain replies.
    pub fn replies(replies: impl IntoIterator<Item = ModelReply>) -> Self {
        Self::new(replies.into_iter().map(ScriptStep::Reply))
    }

    pub fn from_json(text: &str, origin: &str) -> Result<Self, ScriptError> {
        let steps: Vec<FileStep> =
            serde_json::from_str(text).map_err(|source| ScriptError::Parse {
                path: origin.to_string(),
                source,
            })?;
        Ok(Self::new(
            steps
                .into_iter()
                .enumerate()
                .map(|(i, step)| step.into_step(i + 1)),
        ))
    }

    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: origin.clone(),
            source,
        })?;
        Self::from_json(&text, &origin)
    }

    /// Every request received so far, in order; empty unless built with
    /// [`Recording::Requests`].
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Steps not yet replayed.
    pub fn remaining(&self) -> usize {
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Fails when the script still has replies: a test whose model was asked fewer times than
    /// scripted has not exercised what it claims to.
    pub fn finish(&self) -> Result<(), ScriptError> {
        match self.remaining() {
            0 => Ok(()),
            left => Err(ScriptError::Unconsumed { left }),
        }
    }
}

#[async_trait]
impl ModelClient for ScriptedModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let index = {
            let mut received = self.received.lock().unwrap_or_else(PoisonError::into_inner);
            *received += 1;
            *received
        };
        if self.recording == Recording::Requests {
            self.requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(request.clone());
        }
        let step = self
            .steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        match step {
            Some(ScriptStep::Reply(reply)) => Ok(reply),
            Some(ScriptStep::Fail(error)) => Err(error),
            None => Err(ModelError::ScriptExhausted { request: index }),
        }
    }
}
