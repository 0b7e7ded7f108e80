//! Durable protocol requests (chapter 16): shutdown and plan approval.
//!
//! Every request lives in one state file, `.agent_tutorial/requests.json`, changed only under
//! the lock `.agent_tutorial/requests.lock` (read, check, write atomically), and is recorded
//! **before** it is sent: a delivery that fails leaves it `pending`, never lost. A response
//! is matched on the request's id, kind, sender and recipient, and a request makes exactly one
//! terminal transition (approved, rejected, expired, superseded). The same response replayed
//! is idempotent; a different one, a superseded id, a response from the wrong agent or one
//! after the expiry each fail with their own error.

mod state;

use std::fmt;
use std::sync::Arc;

use agent_protocol::{AgentId, RequestId};
use agent_workspace::{Clock, PathError, StateDir, StoreError, Workspace};
use serde::{Deserialize, Serialize};

pub use state::{MAX_CONTENT_BYTES, MAX_REQUESTS, READ_LIMIT, REQUESTS_FILE};

/// How long a request waits for its answer by default.
pub const DEFAULT_EXPIRY_MS: u64 = 300_000;

/// Which protocol a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// The lead asks a teammate to stop.
    Shutdown,
    /// A teammate asks the lead to approve its plan.
    PlanApproval,
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Shutdown => "shutdown",
            Self::PlanApproval => "plan_approval",
        })
    }
}

/// The answer to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Yes.
    Approve,
    /// No.
    Reject,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Approve => "approved",
            Self::Reject => "rejected",
        })
    }
}

/// Where a request stands; every status but `Pending` is terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    /// Waiting for its answer.
    Pending,
    /// Answered yes.
    Approved,
    /// Answered no.
    Rejected,
    /// No answer came before the expiry.
    Expired,
    /// A newer request of the same kind from the same sender replaced it (a new plan).
    Superseded,
    /// A shutdown the target did not answer in time: its requester stopped it by force.
    Forced,
}

impl fmt::Display for RequestStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Superseded => "superseded",
            Self::Forced => "stopped by force",
        })
    }
}

/// A recorded answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// What was decided.
    pub decision: Decision,
    /// The responder's words (may be empty).
    pub feedback: String,
    /// When it was recorded (ms since the Unix epoch).
    pub at: u64,
}

/// One request, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolRequest {
    /// Unique in this workspace (`req-<n>`).
    pub id: RequestId,
    /// Which protocol.
    pub kind: RequestKind,
    /// Who asks.
    pub from: AgentId,
    /// Who must answer.
    pub to: AgentId,
    /// Where it stands.
    pub status: RequestStatus,
    /// What is asked (the plan; the reason for a shutdown).
    pub content: String,
    /// When it was recorded (ms since the Unix epoch).
    pub created_at: u64,
    /// When it stops taking answers.
    pub expires_at: u64,
    /// The answer, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
}

/// A new request's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRequest {
    /// Which protocol.
    pub kind: RequestKind,
    /// Who asks (the caller's identity).
    pub from: AgentId,
    /// Who must answer.
    pub to: AgentId,
    /// What is asked.
    pub content: String,
}

/// An answer as it arrives: matched against the request on all four of id, kind, sender
/// and recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The request answered.
    pub request_id: RequestId,
    /// Its protocol.
    pub kind: RequestKind,
    /// Who answers: must be the request's target.
    pub from: AgentId,
    /// Whom the answer is for: must be the request's sender.
    pub to: AgentId,
    /// Yes or no.
    pub decision: Decision,
    /// The responder's words (may be empty).
    pub feedback: String,
}

/// What answering did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answered {
    /// The request moved to its terminal status now.
    Recorded(ProtocolRequest),
    /// The same answer was recorded before; nothing changed.
    Replayed(ProtocolRequest),
}

impl Answered {
    /// The request after the answer.
    pub fn request(&self) -> &ProtocolRequest {
        match self {
            Self::Recorded(r) | Self::Replayed(r) => r,
        }
    }
}

/// Why a request could not be recorded or answered.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// No request has that id.
    #[error("there is no request `{0}`")]
    NotFound(String),
    /// The request was replaced by a newer one and takes no answer.
    #[error("request `{rid}` was superseded by a newer request and takes no answer", rid = .id.0)]
    Stale {
        /// The request.
        id: RequestId,
    },
    /// The request was answered differently already.
    #[error("request `{rid}` was already {status}; a different answer is refused", rid = .id.0)]
    Conflict {
        /// The request.
        id: RequestId,
        /// How it was answered.
        status: RequestStatus,
    },
    /// The answer is for a different kind of request.
    #[error("request `{rid}` is a {expected} request, not {got}", rid = .id.0)]
    WrongKind {
        /// The request.
        id: RequestId,
        /// Its kind.
        expected: RequestKind,
        /// The kind the answer is for.
        got: RequestKind,
    },
    /// The answer comes from (or goes to) someone the request is not between.
    #[error("request `{rid}` is from `{from}` to `{to}`; `{responder}` cannot answer it for `{requester}`", rid = .id.0)]
    WrongSender {
        /// The request.
        id: RequestId,
        /// Who sent it.
        from: AgentId,
        /// Who it was sent to.
        to: AgentId,
        /// Who tried to answer it.
        responder: AgentId,
        /// Who the answer was to go to.
        requester: AgentId,
    },
    /// No answer came in time; the request is now expired.
    #[error("request `{rid}` expired before it was answered", rid = .id.0)]
    Expired {
        /// The request.
        id: RequestId,
    },
    /// The content is over [`MAX_CONTENT_BYTES`].
    #[error("the request is {size} bytes, over the limit of {MAX_CONTENT_BYTES} bytes")]
    TooLarge {
        /// Its size in bytes.
        size: usize,
    },
    /// [`MAX_REQUESTS`] requests are pending.
    #[error("{MAX_REQUESTS} requests are pending; answer some first")]
    Full,
    /// The state folder or its lock cannot be used.
    #[error("the request store is not usable: {0}")]
    Storage(#[from] PathError),
    /// The state file cannot be read (not a request list, too large, not a file) or written.
    #[error("the request store is not usable: {0}")]
    Store(#[from] StoreError),
}

/// The protocol requests of one workspace.
#[derive(Debug, Clone)]
pub struct RequestStore {
    state: StateDir,
    clock: Arc<dyn Clock>,
    expiry_ms: u64,
}

impl RequestStore {
    /// The store in [`REQUESTS_FILE`], requests expiring after [`DEFAULT_EXPIRY_MS`].
    pub fn new(workspace: Workspace, clock: Arc<dyn Clock>) -> Self {
        Self {
            state: state::dir(&workspace),
            clock,
            expiry_ms: DEFAULT_EXPIRY_MS,
        }
    }

    /// The same store with requests expiring `ms` after they are recorded.
    pub fn with_expiry(mut self, ms: u64) -> Self {
        self.expiry_ms = ms;
        self
    }

    /// Records a new pending request (before it is sent). A pending request of the same kind
    /// from the same sender is superseded by it (a new plan replaces the one under review).
    pub fn create(&self, new: NewRequest) -> Result<ProtocolRequest, RequestError> {
        if new.content.len() > MAX_CONTENT_BYTES {
            return Err(RequestError::TooLarge {
                size: new.content.len(),
            });
        }
        let now = crate::now_ms(self.clock.as_ref());
        self.change(|state| {
            if new.kind == RequestKind::PlanApproval {
                for old in state.requests.iter_mut().filter(|r| {
                    r.status == RequestStatus::Pending && r.kind == new.kind && r.from == new.from
                }) {
                    old.status = RequestStatus::Superseded;
                }
            }
            state.make_room()?;
            state.next_id += 1;
            let request = ProtocolRequest {
                id: RequestId(format!("req-{}", state.next_id)),
                kind: new.kind,
                from: new.from,
                to: new.to,
                status: RequestStatus::Pending,
                content: new.content,
                created_at: now,
                expires_at: now.saturating_add(self.expiry_ms),
                answer: None,
            };
            state.requests.push(request.clone());
            Ok(request)
        })
    }

    /// Answers a request: exactly one terminal transition (see the module docs).
    pub fn respond(&self, response: &Response) -> Result<Answered, RequestError> {
        let now = crate::now_ms(self.clock.as_ref());
        self.change(|state| {
            let request = state
                .requests
                .iter_mut()
                .find(|r| r.id == response.request_id)
                .ok_or_else(|| RequestError::NotFound(response.request_id.0.clone()))?;
            check_match(request, response)?;
            let id = request.id.clone();
            match request.status {
                RequestStatus::Pending if now >= request.expires_at => {
                    request.status = RequestStatus::Expired;
                    // Recorded, then refused: the transition stays even though this call fails.
                    Ok(Err(RequestError::Expired { id }))
                }
                RequestStatus::Pending => {
                    request.status = match response.decision {
                        Decision::Approve => RequestStatus::Approved,
                        Decision::Reject => RequestStatus::Rejected,
                    };
                    request.answer = Some(Answer {
                        decision: response.decision,
                        feedback: response.feedback.clone(),
                        at: now,
                    });
                    Ok(Ok(Answered::Recorded(request.clone())))
                }
                RequestStatus::Approved | RequestStatus::Rejected => {
                    let same = request.answer.as_ref().is_some_and(|a| {
                        a.decision == response.decision && a.feedback == response.feedback
                    });
                    if same {
                        Ok(Ok(Answered::Replayed(request.clone())))
                    } else {
                        Err(RequestError::Conflict {
                            id,
                            status: request.status,
                        })
                    }
                }
                RequestStatus::Expired | RequestStatus::Forced => Err(RequestError::Expired { id }),
                RequestStatus::Superseded => Err(RequestError::Stale { id }),
            }
        })?
    }

    /// Records that the target of a shutdown request was stopped by force because it did not
    /// answer (by the request's sender, while it is pending or expired). Idempotent; a
    /// request that was answered is [`RequestError::Conflict`].
    pub fn force(&self, id: &RequestId, by: &AgentId) -> Result<ProtocolRequest, RequestError> {
        self.change(|state| {
            let request = state
                .requests
                .iter_mut()
                .find(|r| &r.id == id)
                .ok_or_else(|| RequestError::NotFound(id.0.clone()))?;
            if request.kind != RequestKind::Shutdown {
                return Err(RequestError::WrongKind {
                    id: id.clone(),
                    expected: request.kind,
                    got: RequestKind::Shutdown,
                });
            }
            if &request.from != by {
                return Err(RequestError::WrongSender {
                    id: id.clone(),
                    from: request.from.clone(),
                    to: request.to.clone(),
                    responder: by.clone(),
                    requester: request.from.clone(),
                });
            }
            match request.status {
                RequestStatus::Pending | RequestStatus::Expired | RequestStatus::Forced => {
                    request.status = RequestStatus::Forced;
                    Ok(request.clone())
                }
                RequestStatus::Approved | RequestStatus::Rejected => Err(RequestError::Conflict {
                    id: id.clone(),
                    status: request.status,
                }),
                RequestStatus::Superseded => Err(RequestError::Stale { id: id.clone() }),
            }
        })
    }

    /// The request with `id`.
    pub fn get(&self, id: &RequestId) -> Result<Option<ProtocolRequest>, RequestError> {
        Ok(self
            .load_locked()?
            .requests
            .into_iter()
            .find(|r| &r.id == id))
    }

    /// Every request, oldest first.
    pub fn all(&self) -> Result<Vec<ProtocolRequest>, RequestError> {
        Ok(self.load_locked()?.requests)
    }

    /// The latest plan `teammate` submitted, if any.
    pub fn latest_plan(&self, teammate: &AgentId) -> Result<Option<ProtocolRequest>, RequestError> {
        Ok(self
            .load_locked()?
            .requests
            .into_iter()
            .rev()
            .find(|r| r.kind == RequestKind::PlanApproval && &r.from == teammate))
    }
}

/// Checks that `response` answers `request`: same kind, from its target, to its sender.
fn check_match(request: &ProtocolRequest, response: &Response) -> Result<(), RequestError> {
    if request.kind != response.kind {
        return Err(RequestError::WrongKind {
            id: request.id.clone(),
            expected: request.kind,
            got: response.kind,
        });
    }
    if request.to != response.from || request.from != response.to {
        return Err(RequestError::WrongSender {
            id: request.id.clone(),
            from: request.from.clone(),
            to: request.to.clone(),
            responder: response.from.clone(),
            requester: response.to.clone(),
        });
    }
    Ok(())
}
