//! A model that replays scripted replies: the offline engine behind every loop test and the
//! CLI's `--script FILE` (a user-facing mode, which is why this is a normal dependency of
//! `agent-tutorial`).
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
use std::io::Read as _;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use agent_core::{ModelClient, ModelError, ModelReply, ModelRequest, RetryAfter, ToolCall};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

/// The largest script file read: far above any hand-written script, small enough that a wrong
/// path (a log, a device) is refused instead of read whole.
pub const MAX_SCRIPT_BYTES: u64 = 16 * 1024 * 1024;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum ScriptStep {
    /// The model answers with this reply.
    Reply(ModelReply),
    /// The request fails with this error, as a server's failure would.
    Fail(ModelError),
}

/// Why a script could not be loaded, or was not used up.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {path}: {source}")]
    Read {
        /// The file, as given.
        path: String,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_SCRIPT_BYTES`].
    #[error("script {path} is larger than {max} bytes")]
    TooLarge {
        /// The file, as given.
        path: String,
        /// The bound, [`MAX_SCRIPT_BYTES`].
        max: u64,
    },
    /// The text is not a script (see the module's format).
    #[error("script {path} is not valid: {source}")]
    Parse {
        /// Where the text came from.
        path: String,
        /// What the parser said.
        source: serde_json::Error,
    },
    /// [`ScriptedModel::finish`]: the run asked fewer times than scripted.
    #[error("the script has {left} unused repl{} left after the run", if *left == 1 { "y" } else { "ies" })]
    Unconsumed {
        /// Steps never replayed.
        left: usize,
    },
}

/// The scripted model's own failure: it was asked once more than its script answers. Carried
/// to the loop as [`ModelError::Client`] (a test double's failure is not a production error);
/// a test gets it back with `ClientError::downcast_ref::<ScriptExhausted>()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the scripted model has no reply left for request #{request}")]
pub struct ScriptExhausted {
    /// The request that found the script empty, counted from 1 over the model's life.
    pub request: usize,
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
///
/// ```
/// use agent_core::{Message, ModelClient, ModelReply, ModelRequest};
/// use agent_test_support::{Recording, ScriptedModel};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::replies([ModelReply::text("hello")]).recording(Recording::Requests);
/// let request = ModelRequest {
///     messages: vec![Message::user("hi").into()],
///     ..ModelRequest::default()
/// };
/// assert_eq!(model.complete(&request).await.unwrap(), ModelReply::text("hello"));
/// assert_eq!(model.requests(), vec![request.clone()]);
///
/// // Asked once more than scripted: the model's own error, shown as it always was.
/// let error = model.complete(&request).await.unwrap_err();
/// assert_eq!(error.to_string(), "the scripted model has no reply left for request #2");
/// # });
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    steps: Mutex<VecDeque<ScriptStep>>,
    recording: Recording,
    requests: Mutex<Vec<ModelRequest>>,
    /// Counted even when not recording: a script that runs out names the request it lacked.
    received: Mutex<usize>,
}

impl ScriptedModel {
    /// A model that replays `steps` in order, recording nothing.
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

    /// A script read from its JSON text (the module's format); `origin` names it in errors.
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

    /// A script read from a file the person named (`--script FILE`), at most
    /// [`MAX_SCRIPT_BYTES`].
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = read_script(path)?;
        Self::from_json(&text, &path.display().to_string())
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

/// The text of a script file, at most [`MAX_SCRIPT_BYTES`].
pub(crate) fn read_script(path: &Path) -> Result<String, ScriptError> {
    let origin = path.display().to_string();
    let read_error = |source| ScriptError::Read {
        path: origin.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let too_large = || ScriptError::TooLarge {
        path: origin.clone(),
        max: MAX_SCRIPT_BYTES,
    };
    // A regular file says its size: refused before a byte is read. A pipe or a device
    // does not, and is read up to the bound below.
    if file.metadata().map_err(read_error)?.len() > MAX_SCRIPT_BYTES {
        return Err(too_large());
    }
    let mut text = String::new();
    // One byte past the bound tells "exactly at the bound" from "larger".
    file.take(MAX_SCRIPT_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read_error)?;
    if text.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(too_large());
    }
    Ok(text)
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
            None => Err(ModelError::client(ScriptExhausted { request: index })),
        }
    }
}
