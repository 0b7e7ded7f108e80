//! A chapter's agent: the profile's capabilities and prompt context, built by the harness.

use agent_harness::{Agent, AgentDeps, AgentSpec, BuildError};
use agent_prompting::PromptContext;

use crate::Profile;

/// What the harness builds for `profile`: its capabilities, and the context chapter 10's
/// prompt names it by (`{"chapter":10,"profile":"P10"}`).
pub fn spec(profile: Profile) -> Result<AgentSpec, BuildError> {
    #[derive(serde::Serialize)]
    struct Context {
        chapter: u8,
        profile: String,
    }
    let context = PromptContext::from_serialize(&Context {
        chapter: profile.chapter,
        profile: profile.id(),
    })?;
    Ok(AgentSpec {
        capabilities: profile.capability_set(),
        context,
    })
}

/// Builds the agent of `profile`'s chapter.
pub fn build_agent(profile: Profile, deps: AgentDeps) -> Result<Agent, BuildError> {
    agent_harness::build_agent(&spec(profile)?, deps)
}

/// Builds an agent whose next request shows what a first turn with `prompt` would send (see
/// [`agent_harness::build_preview_agent`]).
pub fn build_preview_agent(
    profile: Profile,
    deps: AgentDeps,
    prompt: &str,
) -> Result<Agent, BuildError> {
    agent_harness::build_preview_agent(&spec(profile)?, deps, prompt)
}
