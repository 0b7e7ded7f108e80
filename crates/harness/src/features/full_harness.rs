//! Chapter 20: the full harness. Every capability before it is on already; this one changes
//! only what a front end is told — replies stream unless asked not to, and the interactive
//! prompt takes slash commands. It installs nothing: the agent itself is chapter 19's.

use super::{Feature, Features, SlashCommands, StreamDefault};
use crate::Capability;

/// Chapter 20's answers to a front end.
pub(crate) struct FullHarness;

impl Feature for FullHarness {
    fn capability(&self) -> Capability {
        Capability::FullHarness
    }

    fn describe(&self, features: &mut Features) {
        features.stream_default = StreamDefault::Streamed;
        features.slash_commands = SlashCommands::On;
    }
}
