//! Shared helpers: a scripted agent of the session, a clock that follows tokio's.

mod approvals;
mod history_log;
mod session;
mod team;
mod team_close;
mod team_cut_short;
mod team_restart;
mod team_wake;

use std::sync::Arc;

use agent_core::{AgentId, ModelReply, ToolCall};
use agent_harness::session::{Session, SessionEvent};
use agent_harness::{Agent, AgentDeps, AgentSpec, Capabilities, Capability, build_agent};
use agent_prompting::PromptContext;
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use tokio::sync::mpsc::UnboundedReceiver;

pub fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

pub fn caps(list: &[Capability]) -> Capabilities {
    list.iter().copied().collect()
}

/// An agent with `capabilities` on `replies`, built for `session` as `id`.
pub fn session_agent(
    session: &mut Session,
    id: &AgentId,
    dir: &std::path::Path,
    capabilities: Capabilities,
    replies: Vec<ModelReply>,
    adjust: impl FnOnce(&mut AgentDeps),
) -> (Agent, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::replies(replies).recording(Recording::Requests));
    let mut deps = AgentDeps::new(model.clone(), Workspace::new(dir).unwrap());
    deps.events = session.sink(id);
    adjust(&mut deps);
    let spec = AgentSpec {
        capabilities,
        context: PromptContext::from_value(serde_json::json!({})).unwrap(),
    };
    (build_agent(&spec, deps).unwrap(), model)
}

/// The next event, skipping none.
pub async fn next(events: &mut UnboundedReceiver<SessionEvent>) -> SessionEvent {
    events.recv().await.expect("the session's stream ended")
}
