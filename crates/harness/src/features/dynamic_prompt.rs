//! Chapter 10: the system prompt rendered before every request.

use super::{Feature, Features, PromptStyle};
use crate::Capability;

/// The agent's prompt is rendered from the sections the other features add (see
/// `Assembly::finish`); without it, the fixed prompt takes their paragraphs.
pub(crate) struct DynamicPrompt;

impl Feature for DynamicPrompt {
    fn capability(&self) -> Capability {
        Capability::DynamicPrompt
    }

    fn describe(&self, features: &mut Features) {
        features.prompt = PromptStyle::Dynamic;
    }
}
