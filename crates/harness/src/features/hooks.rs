//! Chapter 4: lifecycle hooks.

use std::sync::Arc;

use agent_hooks::HookRegistry;

use super::{Assembly, Feature, Features, ShellHooks};
use crate::{BuildError, Capability};

/// The hooks the caller registered run around every call and turn (a subagent's too).
pub(crate) struct Hooks;

impl Feature for Hooks {
    fn capability(&self) -> Capability {
        Capability::Hooks
    }

    fn describe(&self, features: &mut Features) {
        features.shell_hooks = ShellHooks::Loaded;
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let mut hooks = std::mem::replace(&mut agent.deps.hooks, HookRegistry::new());
        hooks.set_events(agent.events.clone());
        agent.hooks = Arc::new(hooks);
        Ok(())
    }
}
