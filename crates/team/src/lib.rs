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
//! - [`clock`]: injected time.

pub mod clock;
pub mod exchange;
pub mod gate;
pub mod mailbox;
pub mod message;
pub mod requests;
pub mod roster;
pub mod runtime;
pub mod tools;

pub use clock::{Clock, ManualClock, SystemClock};
pub use exchange::{AnswerError, Delivered, answer};
pub use gate::{GateState, PLAN_GATE, PlanGate, PlanRequirement};
pub use mailbox::{Acked, Counts, Failed, Folder, MailError, Mailbox};
pub use message::{MailKind, MailMessage, MessageId};
pub use requests::{
    Answered, Decision, NewRequest, ProtocolRequest, RequestError, RequestKind, RequestStatus,
    RequestStore, Response,
};
pub use roster::{Member, NameError, RecipientError, Roster, TeammateStatus};
pub use runtime::{RuntimeError, TeamRuntime, TeammateSpec};
pub use tools::TeamTools;
