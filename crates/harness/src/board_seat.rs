//! Chapter 17's board as the harness holds it: the [`BoardSeat`] a front end opens once and
//! every agent of the session shares, and what each agent keeps of its own claims.
//!
//! - **Renewal.** An agent that holds a claim extends its lease on every model request
//!   ([`RenewingModel`]) and every tool call ([`FencedHooks`]), against the board's clock.
//!   A model turn longer than one lease keeps its claim as long as it keeps working.
//! - **Fencing.** "A call made for a claimed task" is a call, in the same turn, by an agent
//!   that holds a claim or held one that it did not end itself: from the moment one of its
//!   claims is found lost (the lease ran out, or the token is no longer the task's claim), every
//!   call of that turn that changes files, runs a command or starts a subagent
//!   (effect `write`, `execute`, `external`) is refused before it runs, with
//!   `task_lease_expired` / `task_claim_mismatch`. Reads and board calls still run: the agent
//!   may look and claim again. A claim the agent completed or released is its own business and
//!   fences nothing; a lost claim stops fencing when the next turn starts.
//! - **Events.** Claims, completions and releases are told as [`AgentEvent::TaskChanged`],
//!   stamped with the agent that made them: the person (and the lead's screen) sees them.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_board::tools::ClaimObserver;
use agent_board::{BoardError, Claim, ClaimEnd, ClaimToken, ErrorKind, Task, TaskBoard, TaskId};
use agent_core::seams::{PostToolVerdict, PreToolVerdict, PromptBlocked};
use agent_core::{
    AgentEvent, AgentId, Events, FailureCode, Message, ModelClient, ModelError, ModelReply,
    ModelRequest, PreparedCall, ToolEffect, ToolFailure, TurnHooks,
};
use async_trait::async_trait;

/// The board of a session (chapter 17 on), shared by the lead and every teammate
/// ([`crate::AgentDeps::board`]). Cloning shares it.
#[derive(Debug, Clone)]
pub struct BoardSeat {
    board: Arc<dyn TaskBoard>,
    book: Arc<ClaimBook>,
}

impl BoardSeat {
    /// A seat on `board`.
    pub fn new(board: Arc<dyn TaskBoard>) -> Self {
        Self {
            board,
            book: Arc::default(),
        }
    }

    /// The board.
    pub fn board(&self) -> &Arc<dyn TaskBoard> {
        &self.board
    }

    /// What `owner` holds or lost, as its renewal and fencing see it; `events` is where the
    /// board changes it makes are told.
    pub fn claims(&self, owner: &AgentId, events: Events) -> Arc<AgentClaims> {
        self.book
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(owner.clone(), events.clone());
        Arc::new(AgentClaims {
            board: self.board.clone(),
            book: self.book.clone(),
            owner: owner.clone(),
            events,
        })
    }

    /// Records `claim` on `task`, made by the runtime for its owner (chapter 17's autonomy),
    /// as if the owner's own `claim_task` had made it: renewed and fenced from now on, and
    /// told where the owner's events go.
    pub fn adopt(&self, task: &Task, claim: &Claim) {
        self.book.held(&claim.owner).push(Held {
            task: claim.task,
            token: claim.token.clone(),
            lost: None,
        });
        let events = self
            .book
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&claim.owner)
            .cloned();
        if let Some(events) = events {
            tell(&events, task, format!("claimed by {}", claim.owner));
        }
    }

    /// Notified when the board may have a ready task it had not before: a task was created,
    /// completed or released through a tool of this session. A waiter registers (`enable`)
    /// before it looks at the board, so a change in between is not missed.
    pub fn changes(&self) -> &tokio::sync::Notify {
        &self.book.changed
    }

    /// How many such changes were told so far (read before a look: a later count means the
    /// look may be out of date).
    pub fn generation(&self) -> u64 {
        self.book.generation.load(Ordering::SeqCst)
    }

    /// Tells of a change made outside the tools (the runtime gave a task back).
    pub fn changed(&self) {
        self.book.bump();
    }

    /// The claims `owner` holds and has not lost, oldest first.
    pub fn live(&self, owner: &AgentId) -> Vec<(TaskId, ClaimToken)> {
        self.book
            .held(owner)
            .iter()
            .filter(|h| h.lost.is_none())
            .map(|h| (h.task, h.token.clone()))
            .collect()
    }
}

/// One claim an agent made (or was given), until it ends.
#[derive(Debug, Clone)]
struct Held {
    task: TaskId,
    token: ClaimToken,
    /// Why it is lost, once renewal found out.
    lost: Option<ToolFailure>,
}

/// Every agent's claims, and the wake-up of board changes.
#[derive(Debug, Default)]
struct ClaimBook {
    held: Mutex<BTreeMap<AgentId, Vec<Held>>>,
    changed: tokio::sync::Notify,
    /// How many changes were told so far: a waiter that looked at an older count has not
    /// seen the latest one.
    generation: std::sync::atomic::AtomicU64,
    /// Where each agent's board changes are told (its own event sink).
    events: Mutex<BTreeMap<AgentId, Events>>,
}

/// The claims an agent holds are few (one task at a time, in practice); more than this and the
/// oldest are forgotten (they are the board's business still, only no longer renewed).
const MAX_HELD: usize = 16;

impl ClaimBook {
    /// A change that may make a task ready: counted, and every waiter woken.
    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<AgentId, Vec<Held>>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn held(&self, owner: &AgentId) -> HeldGuard<'_> {
        HeldGuard {
            guard: self.lock(),
            owner: owner.clone(),
        }
    }
}

/// One agent's claims, under the book's lock.
struct HeldGuard<'a> {
    guard: MutexGuard<'a, BTreeMap<AgentId, Vec<Held>>>,
    owner: AgentId,
}

impl HeldGuard<'_> {
    fn list(&mut self) -> &mut Vec<Held> {
        self.guard.entry(self.owner.clone()).or_default()
    }

    fn push(&mut self, held: Held) {
        let list = self.list();
        list.retain(|h| h.task != held.task || h.token != held.token);
        list.push(held);
        if list.len() > MAX_HELD {
            let over = list.len() - MAX_HELD;
            list.drain(..over);
        }
    }

    fn iter(&mut self) -> std::slice::Iter<'_, Held> {
        self.list().iter()
    }
}

/// One agent's view of its claims: the board tools' observer, the renewal and the fence.
#[derive(Debug)]
pub struct AgentClaims {
    board: Arc<dyn TaskBoard>,
    book: Arc<ClaimBook>,
    owner: AgentId,
    events: Events,
}

/// What a renewal found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Every claim is held (or there is none).
    Held,
    /// A claim was lost: the failure a fenced call gets.
    Lost(ToolFailure),
    /// The board could not say (busy, down): a fenced call is refused with this, to be safe.
    Unknown(ToolFailure),
}

impl AgentClaims {
    /// Extends the lease of every claim the agent holds; a claim the board no longer holds for
    /// it is marked lost. What the fence of the next call goes by.
    pub async fn renew(&self) -> Standing {
        let live: Vec<(TaskId, ClaimToken)> = self
            .book
            .held(&self.owner)
            .iter()
            .filter(|h| h.lost.is_none())
            .map(|h| (h.task, h.token.clone()))
            .collect();
        let mut unknown = None;
        for (task, token) in live {
            match self.board.renew(&self.owner, task, &token).await {
                Ok(_) => {}
                Err(err) => match err.kind() {
                    ErrorKind::LeaseExpired | ErrorKind::ClaimMismatch => {
                        let failure = lost(task, &err);
                        let mut held = self.book.held(&self.owner);
                        if let Some(h) = held
                            .list()
                            .iter_mut()
                            .find(|h| h.task == task && h.token == token)
                        {
                            h.lost = Some(failure);
                        }
                    }
                    // The board itself failed: nothing is known about the claim.
                    ErrorKind::Storage | ErrorKind::Refused => {
                        tracing::warn!("board: the claim on task {task} was not renewed: {err}");
                        unknown = Some(ToolFailure::new(
                            FailureCode::ToolExecutionError,
                            format!(
                                "refused: the claim on task {task} could not be confirmed ({err}); nothing was changed"
                            ),
                        ));
                    }
                },
            }
        }
        let first_lost = self
            .book
            .held(&self.owner)
            .iter()
            .find_map(|h| h.lost.clone());
        match (first_lost, unknown) {
            (Some(failure), _) => Standing::Lost(failure),
            (None, Some(failure)) => Standing::Unknown(failure),
            (None, None) => Standing::Held,
        }
    }

    /// A new turn: claims lost in an earlier turn stop fencing.
    pub fn turn_started(&self) {
        self.book
            .held(&self.owner)
            .list()
            .retain(|h| h.lost.is_none());
    }

    fn tell(&self, task: &Task, status: String) {
        tell(&self.events, task, status);
    }
}

/// Tells `events` that `task` changed.
fn tell(events: &Events, task: &Task, status: String) {
    events.emit(AgentEvent::TaskChanged {
        id: u64::try_from(task.id.0).unwrap_or_default(),
        subject: task.subject.clone(),
        status,
    });
}

/// The failure a fenced call gets once the claim on `task` is lost.
fn lost(task: TaskId, err: &BoardError) -> ToolFailure {
    let code = match err.kind() {
        ErrorKind::LeaseExpired => FailureCode::TaskLeaseExpired,
        _ => FailureCode::TaskClaimMismatch,
    };
    ToolFailure::new(
        code,
        format!(
            "refused: your claim on task {task} was lost ({err}); this call was not run and nothing was changed. Claim a task again before changing files or running commands"
        ),
    )
}

impl ClaimObserver for AgentClaims {
    fn created(&self, task: &Task) {
        self.tell(task, "created".to_string());
        self.book.bump();
    }

    fn claimed(&self, task: &Task, claim: &Claim) {
        self.book.held(&self.owner).push(Held {
            task: claim.task,
            token: claim.token.clone(),
            lost: None,
        });
        self.tell(task, format!("claimed by {}", self.owner));
    }

    fn ended(&self, task: &Task, token: &ClaimToken, end: ClaimEnd) {
        self.book
            .held(&self.owner)
            .list()
            .retain(|h| !(h.task == task.id && &h.token == token));
        self.tell(task, format!("{end} by {}", self.owner));
        // A completion may make a waiting task ready; a release gives one back.
        self.book.bump();
    }

    fn token(&self, task: TaskId) -> Option<ClaimToken> {
        // The newest claim on it, lost or not: a lost one is refused by the board with the
        // reason (the lease ran out), which is what the model should read.
        self.book
            .held(&self.owner)
            .iter()
            .rev()
            .find(|h| h.task == task)
            .map(|h| h.token.clone())
    }
}

/// The model an agent with a board asks: each request first renews the agent's claims.
pub(crate) struct RenewingModel {
    pub(crate) inner: Arc<dyn ModelClient>,
    pub(crate) claims: Arc<AgentClaims>,
}

#[async_trait]
impl ModelClient for RenewingModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        // The verdict matters to the next fenced call, not to the model call.
        let _ = self.claims.renew().await;
        self.inner.complete(request).await
    }
}

/// The hooks of an agent with a board: each call first renews the agent's claims, and a
/// fenced call of a turn whose claim was lost is refused before it runs.
pub(crate) struct FencedHooks {
    pub(crate) inner: Arc<dyn TurnHooks>,
    pub(crate) claims: Arc<AgentClaims>,
    /// Calls let through whose result is not in yet. A subagent shares these hooks (its
    /// writes are fenced by its parent's claims too); its turn starts inside its parent's
    /// `task` call, so a prompt while a call is open is not a new turn of the agent.
    pub(crate) open_calls: std::sync::atomic::AtomicUsize,
}

/// Whether a call of this effect is fenced: it changes files, runs a command, or starts a
/// subagent that could.
fn fenced(effect: ToolEffect) -> bool {
    match effect {
        ToolEffect::Write | ToolEffect::Execute | ToolEffect::External => true,
        ToolEffect::Read | ToolEffect::State => false,
    }
}

#[async_trait]
impl TurnHooks for FencedHooks {
    async fn user_prompt_submit(&self, prompt: &str) -> Result<Vec<Message>, PromptBlocked> {
        if self.open_calls.load(Ordering::SeqCst) == 0 {
            self.claims.turn_started();
        }
        self.inner.user_prompt_submit(prompt).await
    }

    async fn pre_tool_use(&self, call: PreparedCall) -> PreToolVerdict {
        let standing = self.claims.renew().await;
        if fenced(call.effect) {
            match standing {
                Standing::Held => {}
                Standing::Lost(failure) | Standing::Unknown(failure) => {
                    return PreToolVerdict::Block(failure);
                }
            }
        }
        let verdict = self.inner.pre_tool_use(call).await;
        if matches!(verdict, PreToolVerdict::Continue { .. }) {
            self.open_calls.fetch_add(1, Ordering::SeqCst);
        }
        verdict
    }

    async fn post_tool_use(
        &self,
        call: &PreparedCall,
        output: Result<String, ToolFailure>,
    ) -> PostToolVerdict {
        // Saturating: a count that went wrong must not wrap into "a call is open" forever.
        let _ = self
            .open_calls
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        self.inner.post_tool_use(call, output).await
    }

    async fn stop(&self, final_text: &str) -> Option<String> {
        self.inner.stop(final_text).await
    }
}

/// The board of a preview (`agent-tutorial prompt`): the tools are registered, nothing is
/// opened, read or written, and every call fails.
#[derive(Debug)]
struct PreviewBoard;

fn previewed() -> BoardError {
    BoardError::Interrupted("a preview has no board".to_string())
}

#[async_trait]
impl TaskBoard for PreviewBoard {
    async fn create(&self, _new: agent_board::NewTask) -> Result<Task, BoardError> {
        Err(previewed())
    }

    async fn get(&self, _id: TaskId) -> Result<Task, BoardError> {
        Err(previewed())
    }

    async fn list(&self) -> Result<Vec<Task>, BoardError> {
        Err(previewed())
    }

    async fn claim(
        &self,
        _owner: &AgentId,
        _target: agent_board::ClaimTarget,
    ) -> Result<Claim, BoardError> {
        Err(previewed())
    }

    async fn renew(
        &self,
        _owner: &AgentId,
        _task: TaskId,
        _token: &ClaimToken,
    ) -> Result<Claim, BoardError> {
        Err(previewed())
    }

    async fn check_held(
        &self,
        _owner: &AgentId,
        _task: TaskId,
        _token: &ClaimToken,
    ) -> Result<Claim, BoardError> {
        Err(previewed())
    }

    async fn complete(
        &self,
        _owner: &AgentId,
        _task: TaskId,
        _token: &ClaimToken,
        _result: &str,
    ) -> Result<Task, BoardError> {
        Err(previewed())
    }

    async fn release(
        &self,
        _owner: &AgentId,
        _task: TaskId,
        _token: &ClaimToken,
        _reason: &str,
    ) -> Result<Task, BoardError> {
        Err(previewed())
    }

    async fn history(&self, _task: TaskId) -> Result<Vec<agent_board::ClaimRecord>, BoardError> {
        Err(previewed())
    }

    async fn import_once(
        &self,
        _tasks: Vec<agent_board::ImportedTask>,
    ) -> Result<bool, BoardError> {
        Err(previewed())
    }
}

impl BoardSeat {
    /// The seat of a preview of the first request (`agent-tutorial prompt`): the same tools,
    /// over a board that opens nothing (every call fails).
    pub fn preview() -> Self {
        Self::new(Arc::new(PreviewBoard))
    }
}
