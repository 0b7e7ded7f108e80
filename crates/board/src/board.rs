//! The [`TaskBoard`] trait both backends implement, and the checks they share (text bounds,
//! token minting, the view of an expired lease).

use async_trait::async_trait;

use agent_protocol::AgentId;

use crate::error::{BoardError, Field};
use crate::model::{
    Claim, ClaimEnd, ClaimRecord, ClaimTarget, ClaimToken, ImportedTask, MAX_BLOCKED_BY,
    MAX_DESCRIPTION_BYTES, MAX_RESULT_BYTES, MAX_SUBJECT_CHARS, NewTask, Status, Task, TaskId,
};

/// A task board several teammates (tasks of one process, or processes on several machines)
/// claim work from. Every method is one transaction; the owner is always the caller's
/// identity, given by the runtime, never by the model.
///
/// ```
/// use agent_board::{BoardConfig, ClaimTarget, ErrorKind, NewTask, SqliteBoard, TaskBoard};
/// use agent_protocol::AgentId;
/// use agent_workspace::Workspace;
///
/// let dir = tempfile::tempdir().unwrap();
/// let board = SqliteBoard::open(&Workspace::new(dir.path()).unwrap(), BoardConfig::default())
///     .unwrap();
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let task = board
///     .create(NewTask { subject: "Fix the parser".into(), ..NewTask::default() })
///     .await
///     .unwrap();
/// let (alice, bob) = (AgentId::new("alice").unwrap(), AgentId::new("bob").unwrap());
///
/// let claim = board.claim(&alice, ClaimTarget::Task(task.id)).await.unwrap();
/// // One winner: the task is taken, whoever asks next.
/// let lost = board.claim(&bob, ClaimTarget::Task(task.id)).await.unwrap_err();
/// assert_eq!(lost.kind(), ErrorKind::Refused);
/// // Only the holder's token completes it.
/// let done = board.complete(&alice, task.id, &claim.token, "fixed").await.unwrap();
/// assert_eq!(done.result.as_deref(), Some("fixed"));
/// # });
/// ```
#[async_trait]
pub trait TaskBoard: Send + Sync + std::fmt::Debug {
    /// Adds a pending task. Every task it waits for must exist; nothing is stored when a
    /// check fails.
    async fn create(&self, new: NewTask) -> Result<Task, BoardError>;

    /// One task.
    async fn get(&self, id: TaskId) -> Result<Task, BoardError>;

    /// Every task, in creation order.
    async fn list(&self) -> Result<Vec<Task>, BoardError>;

    /// Claims a ready task for `owner` under a fresh lease and a token never issued before.
    /// Expired leases return to pending first. At most one caller wins a task, whatever
    /// process it runs in.
    async fn claim(&self, owner: &AgentId, target: ClaimTarget) -> Result<Claim, BoardError>;

    /// Extends the lease of a claim still held (same token, a new end).
    async fn renew(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
    ) -> Result<Claim, BoardError>;

    /// Fencing: succeeds only while `token` is the live claim of `owner` on `task`. A write
    /// made for a claimed task calls this first.
    async fn check_held(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
    ) -> Result<Claim, BoardError>;

    /// Completes a held task with its result; the claim ends.
    async fn complete(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
        result: &str,
    ) -> Result<Task, BoardError>;

    /// Gives a held task back (pending again); the claim ends with the reason.
    async fn release(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
        reason: &str,
    ) -> Result<Task, BoardError>;

    /// The claims made on `task`, oldest first: all of them, or the newest
    /// [`MAX_HISTORY`](crate::model::MAX_HISTORY).
    async fn history(&self, task: TaskId) -> Result<Vec<ClaimRecord>, BoardError>;

    /// Imports checked chapter 12 tasks with their ids, once: `Ok(false)` when an import was
    /// already recorded (nothing is written then). All or nothing.
    async fn import_once(&self, tasks: Vec<ImportedTask>) -> Result<bool, BoardError>;
}

/// A trimmed one-line text of at most `limit` characters.
pub(crate) fn check_line(field: Field, text: &str, limit: usize) -> Result<String, BoardError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(BoardError::Blank(field));
    }
    if text.chars().count() > limit {
        return Err(BoardError::TooLong {
            field,
            limit: format!("{limit} characters"),
        });
    }
    // One line: a subject is shown in lists and prompts, where a line break could pass for a
    // line of the harness's own.
    if text.chars().any(char::is_control) {
        return Err(BoardError::NotOneLine(field));
    }
    Ok(text.to_string())
}

/// A trimmed text of at most `limit` bytes (may be empty unless `field` is a result).
pub(crate) fn check_text(field: Field, text: &str, limit: usize) -> Result<String, BoardError> {
    let text = text.trim();
    if text.len() > limit {
        return Err(BoardError::TooLong {
            field,
            limit: format!("{limit} bytes"),
        });
    }
    if text.is_empty() && field == Field::Result {
        return Err(BoardError::Blank(field));
    }
    Ok(text.to_string())
}

/// A new task with its texts checked and its dependencies deduplicated (first-seen order).
pub(crate) fn check_new(new: NewTask) -> Result<NewTask, BoardError> {
    let subject = check_line(Field::Subject, &new.subject, MAX_SUBJECT_CHARS)?;
    let description = check_text(Field::Description, &new.description, MAX_DESCRIPTION_BYTES)?;
    let mut blocked_by: Vec<TaskId> = Vec::with_capacity(new.blocked_by.len());
    for id in new.blocked_by {
        if !blocked_by.contains(&id) {
            blocked_by.push(id);
        }
    }
    if blocked_by.len() > MAX_BLOCKED_BY {
        return Err(BoardError::TooManyDependencies);
    }
    Ok(NewTask {
        subject,
        description,
        blocked_by,
    })
}

/// A completion result.
pub(crate) fn check_result(text: &str) -> Result<String, BoardError> {
    check_text(Field::Result, text, MAX_RESULT_BYTES)
}

/// A release reason.
pub(crate) fn check_reason(text: &str) -> Result<String, BoardError> {
    check_line(Field::Reason, text, MAX_SUBJECT_CHARS)
}

/// A new token: 128 random bits, so another teammate cannot guess it. "Never issued twice"
/// is the token history's UNIQUE constraint: the history is never pruned, so a repeat (odds
/// of 2^-64 after 2^32 claims) fails the claim instead of reviving an old token.
pub(crate) fn mint_token() -> Result<ClaimToken, BoardError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|err| BoardError::Interrupted(format!("no randomness for a token: {err}")))?;
    Ok(ClaimToken(
        bytes.iter().map(|b| format!("{b:02x}")).collect(),
    ))
}

/// A token shown for `task` that cannot be one we issued (not 32 lowercase hex digits) is a
/// mismatch before any query: a model cannot make the board look up megabytes of text.
pub(crate) fn check_token(task: TaskId, token: &ClaimToken) -> Result<(), BoardError> {
    let text = token.as_str();
    if text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(BoardError::ClaimMismatch(task))
    }
}

/// The task row a fenced call (renew, check, complete, release) looks at.
#[derive(Debug)]
pub(crate) struct HeldRow {
    pub status: Status,
    pub token: Option<String>,
    /// `now >= lease_expires`, on the backend's clock.
    pub expired: bool,
}

/// The token history's row for the token shown.
#[derive(Debug)]
pub(crate) struct TokenRow {
    pub seq: i64,
    pub task: TaskId,
    pub owner: String,
    pub ended: Option<ClaimEnd>,
}

/// What a fenced call may do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The claim with this sequence number is live.
    Held(i64),
    /// The claim is the task's, but its lease has run out and nobody wrote that down yet:
    /// the caller expires it, commits, and fails with `LeaseExpired`.
    ExpireNow(i64),
}

/// The one rule every backend applies to a token shown for `task` by `owner`.
pub(crate) fn judge(
    task: TaskId,
    owner: &AgentId,
    token: &ClaimToken,
    row: Option<HeldRow>,
    claim: Option<TokenRow>,
) -> Result<Verdict, BoardError> {
    let row = row.ok_or(BoardError::NotFound(task))?;
    let claim = match claim {
        Some(claim) if claim.task == task && claim.owner == owner.as_str() => claim,
        // Unknown, another task's, or another teammate's: never say which.
        _ => return Err(BoardError::ClaimMismatch(task)),
    };
    match claim.ended {
        Some(ClaimEnd::Expired) => return Err(BoardError::LeaseExpired(task)),
        Some(_) => return Err(BoardError::ClaimMismatch(task)),
        None => {}
    }
    if row.status != Status::InProgress || row.token.as_deref() != Some(token.as_str()) {
        return Err(BoardError::BadRow(format!(
            "claim {} of task {task} is open but the task is not held with it",
            claim.seq
        )));
    }
    if row.expired {
        Ok(Verdict::ExpireNow(claim.seq))
    } else {
        Ok(Verdict::Held(claim.seq))
    }
}

/// Reads a stored owner name back (a row that is not a name was not written by us).
pub(crate) fn stored_owner(name: &str) -> Result<AgentId, BoardError> {
    AgentId::new(name).map_err(|err| BoardError::BadRow(err.to_string()))
}
