//! `agent-test-support`: what the tests of every crate share (codex-rs `core_test_support`
//! style), so each crate stops carrying its own copy.
//!
//! - [`scripted`]: [`ScriptedModel`], a model that replays a script and can record every
//!   request it receives (request capture), and its file format.
//! - [`call_tool`]: runs one tool call through a registry the way the loop does and returns
//!   the text the model would read.
//! - [`tool_call`], [`paired`]: small builders and checks for scripted conversations.
//!
//! Tests take this crate as a dev-dependency. One crate uses it as a normal dependency:
//! `agent-tutorial`, whose `--script FILE` is a user-facing offline mode (the docs run on it),
//! so this crate itself depends on nothing test-only.
//!
//! ```
//! use agent_core::{Message, ModelClient, ModelReply, ModelRequest};
//! use agent_test_support::{Recording, ScriptExhausted, ScriptedModel};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let model = ScriptedModel::replies([ModelReply::text("hello")]).recording(Recording::Requests);
//! let request = ModelRequest {
//!     messages: vec![Message::user("hi").into()],
//!     ..ModelRequest::default()
//! };
//! assert_eq!(model.complete(&request).await.unwrap(), ModelReply::text("hello"));
//! assert_eq!(model.requests(), vec![request.clone()]);
//!
//! // Asked once more than scripted: the model's own error, shown as it always was.
//! let error = model.complete(&request).await.unwrap_err();
//! assert_eq!(error.to_string(), "the scripted model has no reply left for request #2");
//! # });
//! ```

pub mod scripted;
mod tools;

pub use scripted::{
    MAX_SCRIPT_BYTES, Recording, ScriptError, ScriptExhausted, ScriptStep, ScriptedModel,
};
pub use tools::{call_tool, paired, tool_call};
