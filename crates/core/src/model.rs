//! The boundary between the loop and a language model: the [`ModelClient`] trait. The request,
//! reply and error types are the protocol crate's, re-exported here.

use async_trait::async_trait;

pub use agent_protocol::model::*;

/// A language model the loop can call. Implemented by the OpenAI adapter and by the scripted
/// model of `agent-test-support` (offline runs and tests).
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Sends one request and returns the reply, or why there is none.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError>;
}
