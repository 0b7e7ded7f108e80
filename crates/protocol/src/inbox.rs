//! What arrives for an agent from outside its own loop: a background job's completion notice
//! (chapter 13), a scheduled run (chapter 14), and from chapter 15 on a teammate's message or
//! a protocol request. One typed item for all of them, so the session can wake an idle agent
//! for any of them and the loop stores each exactly once.

use serde::{Deserialize, Serialize};

use crate::ids::AgentId;

/// Who sent an inbox item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "id", rename_all = "snake_case")]
pub enum Sender {
    /// Another agent of the session (a teammate, the lead).
    Agent(AgentId),
    /// A background job, by its id (chapter 13).
    Job(u64),
    /// A schedule, by its id (`s1`, chapter 14).
    Schedule(String),
}

/// What kind of item it is: decides how it reaches the model and whether it starts a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxKind {
    /// A background job ended; the notice joins the next request, it starts no turn.
    JobNotice,
    /// A schedule came due; it runs as a turn of its own.
    ScheduledRun,
    /// A message from another agent (chapter 15).
    Mail,
    /// A request of a protocol (shutdown, plan approval; chapter 16), answered by id.
    Request,
    /// The answer to a request, carrying its id.
    Response,
}

/// The id that ties a protocol response to its request (chapter 16).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RequestId(pub String);

/// One item in an agent's inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxItem {
    /// Who sent it.
    pub from: Sender,
    /// What it is.
    pub kind: InboxKind,
    /// The request it belongs to, for requests and responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// The text as the model will read it, already marked and escaped by the feature that
    /// made it.
    pub body: String,
}
