//! Chapter 20: the full harness, every capability on one runner. The first request in full;
//! the lead's tool list pinned whole, a teammate's and a subagent's without MCP or team
//! management (`tools`); the loop's order in one turn (`order`); every tool path wrapped by
//! the permission pipeline, the plan gate and the hooks (`paths`); the close (`close`); a
//! killed session started again (`restart`); a whole team session, every request of every
//! agent compared (`session`).

mod close;
mod compact;
mod order;
mod paths;
mod restart;
mod session;
mod tools;

// The repository, board seat and MCP hubs chapter 19's tests set up: chapter 20 runs on the same.
pub(crate) use crate::ch19::{empty_hub, hub, repository};

use std::sync::Arc;

/// A model that answers each request by a function of it and keeps every request, in order
/// (a team's agents ask at the same time: a script's order would be a race).
pub(crate) struct Recorder {
    answer: fn(&agent_core::ModelRequest) -> agent_core::ModelReply,
    requests: std::sync::Mutex<Vec<agent_core::ModelRequest>>,
}

impl Recorder {
    pub(crate) fn new(
        answer: fn(&agent_core::ModelRequest) -> agent_core::ModelReply,
    ) -> Arc<Self> {
        Arc::new(Self {
            answer,
            requests: std::sync::Mutex::default(),
        })
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<agent_core::ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl agent_core::ModelClient for Recorder {
    async fn complete(
        &self,
        request: &agent_core::ModelRequest,
    ) -> Result<agent_core::ModelReply, agent_core::ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        Ok((self.answer)(request))
    }
}

/// Chapter 17's autonomy on a short leash: an idle teammate looks at the board every 20 ms
/// and rests after 100 ms without work, so a one-shot session ends soon after the work does.
pub(crate) fn rest_soon(t: &crate::team_support::Team) {
    t.team
        .set_autonomy(Some(agent_harness::team_runtime::AutonomyConfig {
            poll: std::time::Duration::from_millis(20),
            idle_limit: std::time::Duration::from_millis(100),
        }));
}
