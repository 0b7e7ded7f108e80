//! [`OverflowSnip`]: the emergency processor the loop runs once when the server answers
//! "prompt too long", apart from the compactor's own budget.

use std::sync::Arc;

use agent_core::seams::ProcessError;
use agent_core::{HistoryProcessor, Message};
use async_trait::async_trait;

use crate::compactor::snip;
use crate::groups::groups;

/// The emergency processor for "prompt too long": keep the first group and the newest few.
#[derive(Debug, Clone, Copy)]
pub struct OverflowSnip {
    /// The newest groups kept (after the first).
    pub keep_groups: usize,
}

#[async_trait]
impl HistoryProcessor for OverflowSnip {
    fn name(&self) -> &'static str {
        "overflow_snip"
    }

    async fn process(
        &self,
        messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, ProcessError> {
        Ok(shared(
            snip(groups(owned(&messages)), self.keep_groups)
                .into_iter()
                .flatten()
                .collect(),
        ))
    }
}

fn owned(messages: &[Arc<Message>]) -> Vec<Message> {
    messages.iter().map(|m| Message::clone(m)).collect()
}

fn shared(messages: Vec<Message>) -> Vec<Arc<Message>> {
    messages.into_iter().map(Arc::new).collect()
}
