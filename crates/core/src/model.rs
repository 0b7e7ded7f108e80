//! The boundary between the loop and a language model: the [`ModelClient`] trait. The request,
//! reply and error types are the protocol crate's, re-exported here.

use async_trait::async_trait;

use crate::event::EventSink;

pub use agent_protocol::model::*;

/// A language model the loop can call. Implemented by the OpenAI adapter and by the scripted
/// model of `agent-test-support` (offline runs and tests).
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Sends one request and returns the reply, or why there is none.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError>;

    /// [`complete`](Self::complete), telling `deltas` the reply's text as it arrives
    /// ([`TextDelta`](crate::event::AgentEvent::TextDelta)) when the client streams. The loop calls this for the
    /// requests whose text a person reads; side calls (memory, compaction) call `complete`,
    /// so their text is never shown. The reply must be the one `complete` returns for the
    /// same request: the history does not depend on how the reply travelled.
    ///
    /// The default does not stream. A decorator (recovery, the spinner) forwards `deltas`.
    async fn complete_streamed(
        &self,
        request: &ModelRequest,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        let _ = deltas;
        self.complete(request).await
    }
}
