//! Chapter 18's routing: a teammate working on a claimed task that has a worktree works in
//! that worktree — its file tools and `bash` resolve every path there — and any doubt about
//! the worktree refuses the call instead of falling back to the repository's root.
//!
//! The tools are registered once with the specs the root's tools have (so the request bytes do
//! not depend on where the teammate works); each call asks the [`Router`] where it runs and is
//! handed to the same tools built for that workspace.
//!
//! Routing follows the claim, call by call (a batch runs in order): a call made after the
//! teammate completed or released its task — or with no claim at all — runs at the repository's
//! root, as in chapter 17. Worktrees keep concurrent tasks' files apart; they are not a wall
//! around a teammate, which could work at the root without a claim anyway (the sandbox and the
//! permission pipeline are those walls). A lost claim is not a way out either: chapter 17's
//! fencing refuses the turn's writes before any routing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::{
    AgentId, CallSummary, PreparedCall, ToolFailure, ToolHandler, ToolOutput, ToolRegistry,
    ToolRegistryBuilder,
};
use agent_workspace::Workspace;
use agent_worktree::Worktrees;
use async_trait::async_trait;
use serde_json::Value;

use crate::board_seat::BoardSeat;

/// The most workspaces whose tools one routed set keeps built (a worktree each); past it the
/// cache starts again.
const MAX_BUILT: usize = 32;

/// Adds tools to a registry for one workspace: `add_file_tools`, `add_bash`.
pub(crate) type BuildTools =
    Arc<dyn Fn(ToolRegistryBuilder, &Workspace) -> ToolRegistryBuilder + Send + Sync>;

/// Where one agent's calls run.
#[derive(Debug)]
pub(crate) struct Router {
    /// The repository's root: where an agent with no claimed worktree works.
    pub(crate) root: Workspace,
    /// The worktrees and their bindings.
    pub(crate) trees: Worktrees,
    /// The board, for the agent's live claims.
    pub(crate) seat: BoardSeat,
    /// The agent.
    pub(crate) me: AgentId,
}

/// Where a call runs.
enum Place {
    /// The repository's root: no live claim, or a claimed task with no worktree.
    Root,
    /// The worktree of the task the agent holds.
    Worktree {
        /// Its name, for the approval line.
        name: String,
        /// Its workspace.
        workspace: Workspace,
    },
}

impl Router {
    /// The place of the agent's newest live claim: its task's active worktree, the root when
    /// the task has none, an error when the task has one that cannot be used.
    fn place(&self) -> Result<Place, ToolFailure> {
        let Some((task, _)) = self.seat.live(&self.me).pop() else {
            return Ok(Place::Root);
        };
        let refused = |why: String| {
            ToolFailure::execution(format!(
                "the worktree of task {task} cannot be used, so nothing ran: {why}"
            ))
        };
        let binding = self
            .trees
            .bindings()
            .get(task)
            .map_err(|err| refused(err.to_string()))?;
        let Some(binding) = binding else {
            return Ok(Place::Root);
        };
        let workspace = self
            .trees
            .route(task)
            .map_err(|err| refused(err.to_string()))?;
        Ok(Place::Worktree {
            name: binding.name.to_string(),
            workspace,
        })
    }
}

/// One set of tools (the file tools, or `bash`) registered for an agent whose calls are
/// routed.
pub(crate) fn add_routed(
    tools: ToolRegistryBuilder,
    router: Arc<Router>,
    build: BuildTools,
) -> ToolRegistryBuilder {
    let root = match build(ToolRegistry::builder(), &router.root).build() {
        Ok(root) => Arc::new(root),
        // The same tools unrouted: the agent's registry reports the same error when built.
        Err(_) => return build(tools, &router.root),
    };
    let set = Arc::new(RoutedSet {
        router,
        build,
        root: root.clone(),
        built: Mutex::default(),
    });
    root.specs().into_iter().fold(tools, |tools, spec| {
        let handler = Arc::new(RoutedTool {
            set: set.clone(),
            name: spec.name.clone(),
        });
        tools.tool(spec, handler)
    })
}

/// The tools of one set, built for each workspace a call was routed to.
struct RoutedSet {
    router: Arc<Router>,
    build: BuildTools,
    root: Arc<ToolRegistry>,
    built: Mutex<BTreeMap<PathBuf, Arc<ToolRegistry>>>,
}

impl RoutedSet {
    /// The registry for where the agent's call runs, and the worktree's name if it is one.
    fn registry(&self) -> Result<(Arc<ToolRegistry>, Option<String>), ToolFailure> {
        let (name, workspace) = match self.router.place()? {
            Place::Root => return Ok((self.root.clone(), None)),
            Place::Worktree { name, workspace } => (name, workspace),
        };
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(registry) = built.get(workspace.root()) {
            return Ok((registry.clone(), Some(name)));
        }
        let registry = (self.build)(ToolRegistry::builder(), &workspace)
            .build()
            .map(Arc::new)
            .map_err(ToolFailure::execution)?;
        if built.len() >= MAX_BUILT {
            built.clear();
        }
        built.insert(workspace.root().to_path_buf(), registry.clone());
        Ok((registry, Some(name)))
    }
}

/// One tool of a routed set.
struct RoutedTool {
    set: Arc<RoutedSet>,
    /// The name it is registered under: the same tool in the routed registry.
    name: String,
}

#[async_trait]
impl ToolHandler for RoutedTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        self.call(call).await.map(ToolOutput::into_text)
    }

    async fn call(&self, call: &PreparedCall) -> Result<ToolOutput, ToolFailure> {
        let (registry, _) = self.set.registry()?;
        registry.execute_output(call).await
    }

    /// The tool's own summary for where the call will run, marked with the worktree so the
    /// person approving it sees where the paths lead.
    fn describe(&self, arguments: &Value) -> CallSummary {
        let summary = |registry: &ToolRegistry| {
            registry
                .revalidate(&PreparedCall {
                    call_id: String::new(),
                    name: self.name.clone(),
                    summary: CallSummary::default(),
                    arguments: arguments.clone(),
                    effect: agent_core::ToolEffect::Read,
                })
                .map_or_else(|_| CallSummary::arguments(arguments), |p| p.summary)
        };
        match self.set.registry() {
            Ok((registry, worktree)) => {
                let summary = summary(&registry);
                match worktree {
                    None => summary,
                    Some(tree) => CallSummary {
                        text: format!("[worktree {tree}] {}", summary.text),
                        ..summary
                    },
                }
            }
            Err(failure) => {
                CallSummary::text(format!("{} (refused: {})", arguments, failure.message))
            }
        }
    }
}
