//! `agent-team`, chapters 15–16: what a team of agents keeps on disk and the rules it obeys,
//! written beside the session runtime that wires it.
//!
//! - [`mailbox`]: one JSON file per message, `ready/ processing/ done/ quarantine/` per
//!   recipient, atomic renames under a cross-process lock, at-least-once delivery.
//! - [`requests`]: durable protocol requests (shutdown, plan approval), recorded before they
//!   are sent, answered exactly once.
//! - [`exchange`]: answering a request end to end (record, then send to the requester).
//! - [`gate`]: the plan gate, a permission rule of `agent-policy`'s pipeline.
//! - [`tools`]: the team tools; the ones that need the session call [`runtime::TeamRuntime`].
//! - [`roster`]: who may receive mail and which names are free, as the runtime reports it.
//! - [`message`]: a stored message and the fragment its recipient's model reads.
//! - [`journal`]: what each agent's last delivered message came to, so a restart neither
//!   stores a message twice nor pays a second model call for it.
//! - [`team_file`]: the team as the last session left it, for `agent-tutorial team list`.
//!
//! Time comes from `agent_workspace::Clock` (its wall reading, in milliseconds since the Unix
//! epoch), so tests move it by hand; the locks and bounded listings are the workspace's.

#![warn(missing_docs)]

pub mod exchange;
pub mod gate;
pub mod journal;
pub mod mailbox;
pub mod message;
pub mod requests;
pub mod roster;
pub mod runtime;
pub mod team_file;
pub mod tools;

use std::time::UNIX_EPOCH;

use agent_workspace::Clock;

/// The wall time of `clock` in milliseconds since the Unix epoch (0 before it): what the
/// stores stamp and compare.
pub(crate) fn now_ms(clock: &dyn Clock) -> u64 {
    clock
        .wall()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

pub use exchange::{AnswerError, Delivered, answer};
pub use gate::{GateState, PLAN_GATE, PlanGate, PlanRequirement};
pub use journal::{Deliveries, DeliveryRecord, JournalError, TurnState};
pub use mailbox::{Acked, Counts, Failed, Folder, MailError, Mailbox};
pub use message::{MailKind, MailMessage, MessageId, stored_message_id};
pub use requests::{
    Answered, Decision, NewRequest, ProtocolRequest, RequestError, RequestKind, RequestStatus,
    RequestStore, Response,
};
pub use roster::{Member, NameError, RecipientError, Roster, TeammateStatus};
pub use runtime::{RuntimeError, TeamRuntime, TeammateSpec};
pub use team_file::{Loaded, TeamFile, TeamFileError, TeamRecord};
pub use tools::{Protocols, TeamTools};
