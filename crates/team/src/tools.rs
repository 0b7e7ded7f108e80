//! The team tools (chapters 15–16). No schema has a sender field: every handler is built for
//! one caller ([`TeamTools::for_caller`]) and sends as that caller.
//!
//! Effects: `state` for the tools that change only the harness's own bookkeeping (mailboxes,
//! requests) and no file of the person's — the plan gate lets `send_message` and
//! `submit_plan` through by name; `read` for `list_teammates`; `external` for
//! `spawn_teammate`, which starts model calls the person pays for.

mod handlers;

use std::sync::Arc;

use agent_core::{ToolEffect, ToolRegistryBuilder, ToolSpec};
use agent_protocol::AgentId;
use serde_json::json;

use crate::mailbox::{MAX_MESSAGE_BYTES, Mailbox};
use crate::requests::RequestStore;
use crate::runtime::TeamRuntime;

pub use handlers::{
    ListTeammates, RequestShutdown, ReviewPlan, SendMessage, SpawnTeammate, SubmitPlan,
};

/// The lead starts a teammate.
pub const SPAWN_TEAMMATE: &str = "spawn_teammate";
/// Anyone writes to another agent.
pub const SEND_MESSAGE: &str = "send_message";
/// The lead lists its teammates.
pub const LIST_TEAMMATES: &str = "list_teammates";
/// The lead asks teammates to stop.
pub const REQUEST_SHUTDOWN: &str = "request_shutdown";
/// The lead answers a plan.
pub const REVIEW_PLAN: &str = "review_plan";
/// A teammate asks for its plan's approval.
pub const SUBMIT_PLAN: &str = "submit_plan";

/// The longest role, in characters.
pub const MAX_ROLE_CHARS: usize = 200;

/// Whether the protocols of chapter 16 (shutdown, plan approval) are on: they add tools and
/// `spawn_teammate`'s `require_plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocols {
    /// Chapter 15: teammates and mail only.
    Off,
    /// Chapter 16: `request_shutdown`, `review_plan`, `submit_plan` and the plan gate.
    On,
}

/// `spawn_teammate{name, role, prompt}` (lead), with `require_plan?` when the protocols are
/// on.
pub fn spawn_teammate_spec_for(protocols: Protocols) -> ToolSpec {
    if protocols == Protocols::On {
        return spawn_teammate_spec();
    }
    ToolSpec::new(
        SPAWN_TEAMMATE,
        "Start a named teammate: its own agent that works beside you on `prompt` and reports back by message. It keeps its history between messages.",
        ToolEffect::External,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "Lowercase letters, digits and single hyphens, at most 32 characters (like `reviewer-2`); not `lead`."},
                "role": {"type": "string", "minLength": 1, "description": format!("What it is for, one line of at most {MAX_ROLE_CHARS} characters.")},
                "prompt": {"type": "string", "minLength": 1, "description": "Its first task."}
            },
            "required": ["name", "role", "prompt"]
        }),
    )
}

/// `spawn_teammate{name, role, prompt, require_plan?}` (lead).
pub fn spawn_teammate_spec() -> ToolSpec {
    ToolSpec::new(
        SPAWN_TEAMMATE,
        "Start a named teammate: its own agent that works beside you on `prompt` and reports back by message. It keeps its history between messages. With require_plan, it must submit a plan you approve (review_plan) before it changes anything.",
        ToolEffect::External,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "Lowercase letters, digits and single hyphens, at most 32 characters (like `reviewer-2`); not `lead`."},
                "role": {"type": "string", "minLength": 1, "description": format!("What it is for, one line of at most {MAX_ROLE_CHARS} characters.")},
                "prompt": {"type": "string", "minLength": 1, "description": "Its first task."},
                "require_plan": {"type": "boolean", "description": "Gate its changes on a plan you approve (default false)."}
            },
            "required": ["name", "role", "prompt"]
        }),
    )
}

/// `send_message{to, content}` (everyone).
pub fn send_message_spec() -> ToolSpec {
    ToolSpec::new(
        SEND_MESSAGE,
        "Send a message to another agent of the session by name (`lead` or a teammate). It is stored and delivered even if the recipient is busy.",
        ToolEffect::State,
        json!({
            "type": "object",
            "properties": {
                "to": {"type": "string", "minLength": 1, "description": "The recipient's name."},
                "content": {"type": "string", "minLength": 1, "description": format!("The message, at most {MAX_MESSAGE_BYTES} bytes.")}
            },
            "required": ["to", "content"]
        }),
    )
}

/// `list_teammates{}` (lead).
pub fn list_teammates_spec() -> ToolSpec {
    ToolSpec::new(
        LIST_TEAMMATES,
        "List your teammates: name, status (running, idle, failed, shut down) and role.",
        ToolEffect::Read,
        json!({"type": "object", "properties": {}}),
    )
}

/// `request_shutdown{teammate?}` (lead).
pub fn request_shutdown_spec() -> ToolSpec {
    ToolSpec::new(
        REQUEST_SHUTDOWN,
        "Ask a teammate to finish and stop (without `teammate`: every running or idle teammate). Its runtime answers; you are told when it has stopped.",
        ToolEffect::State,
        json!({
            "type": "object",
            "properties": {
                "teammate": {"type": "string", "minLength": 1, "description": "The teammate's name; leave out for all."}
            }
        }),
    )
}

/// `review_plan{request_id, approve, feedback?}` (lead).
pub fn review_plan_spec() -> ToolSpec {
    ToolSpec::new(
        REVIEW_PLAN,
        "Approve or reject a plan a teammate submitted, by its request id. Your feedback reaches the teammate either way; a rejected teammate must submit a new plan.",
        ToolEffect::State,
        json!({
            "type": "object",
            "properties": {
                "request_id": {"type": "string", "minLength": 1, "description": "The id from the plan request (like `req-3`)."},
                "approve": {"type": "boolean", "description": "true to approve, false to reject."},
                "feedback": {"type": "string", "description": "What the teammate should know or change."}
            },
            "required": ["request_id", "approve"]
        }),
    )
}

/// `submit_plan{plan}` (teammate).
pub fn submit_plan_spec() -> ToolSpec {
    ToolSpec::new(
        SUBMIT_PLAN,
        "Submit your plan to the lead for approval. Until it is approved you can only use read-only tools, send_message and submit_plan; a new plan replaces the one under review.",
        ToolEffect::State,
        json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "minLength": 1, "description": "What you will change and how you will check it."}
            },
            "required": ["plan"]
        }),
    )
}

/// The stores and the runtime the team tools work on.
#[derive(Clone)]
pub struct TeamTools {
    /// The mailboxes.
    pub mailbox: Arc<Mailbox>,
    /// The protocol requests.
    pub requests: Arc<RequestStore>,
    /// The session.
    pub runtime: Arc<dyn TeamRuntime>,
}

impl std::fmt::Debug for TeamTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamTools")
            .field("mailbox", &self.mailbox)
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

/// The tools with one caller's identity.
#[derive(Debug, Clone)]
pub struct Caller {
    pub(crate) tools: TeamTools,
    pub(crate) me: AgentId,
}

impl TeamTools {
    /// The handlers for `caller`: every message and request they make is from `caller`.
    pub fn for_caller(&self, caller: AgentId) -> Arc<Caller> {
        Arc::new(Caller {
            tools: self.clone(),
            me: caller,
        })
    }

    /// `spawn_teammate` for the lead, with `require_plan` when the protocols are on.
    pub fn add_spawn_teammate(
        &self,
        tools: ToolRegistryBuilder,
        protocols: Protocols,
    ) -> ToolRegistryBuilder {
        let me = self.for_caller(AgentId::lead());
        tools.tool(
            spawn_teammate_spec_for(protocols),
            Arc::new(SpawnTeammate(me)),
        )
    }

    /// `list_teammates` for the lead.
    pub fn add_list_teammates(&self, tools: ToolRegistryBuilder) -> ToolRegistryBuilder {
        let me = self.for_caller(AgentId::lead());
        tools.tool(list_teammates_spec(), Arc::new(ListTeammates(me)))
    }

    /// `send_message`, sending as `caller`.
    pub fn add_send_message(
        &self,
        tools: ToolRegistryBuilder,
        caller: AgentId,
    ) -> ToolRegistryBuilder {
        tools.tool(
            send_message_spec(),
            Arc::new(SendMessage(self.for_caller(caller))),
        )
    }

    /// The lead's side of the protocols: `request_shutdown`, `review_plan`.
    pub fn add_lead_protocols(&self, tools: ToolRegistryBuilder) -> ToolRegistryBuilder {
        let me = self.for_caller(AgentId::lead());
        tools
            .tool(
                request_shutdown_spec(),
                Arc::new(RequestShutdown(me.clone())),
            )
            .tool(review_plan_spec(), Arc::new(ReviewPlan(me)))
    }

    /// A teammate's side of the protocols: `submit_plan`, submitting as `teammate`.
    pub fn add_submit_plan(
        &self,
        tools: ToolRegistryBuilder,
        teammate: AgentId,
    ) -> ToolRegistryBuilder {
        tools.tool(
            submit_plan_spec(),
            Arc::new(SubmitPlan(self.for_caller(teammate))),
        )
    }

    /// The lead's tools: `spawn_teammate`, `send_message`, `list_teammates`, and with the
    /// protocols `request_shutdown`, `review_plan` (the harness adds the same tools one
    /// feature at a time).
    pub fn register_lead(
        &self,
        tools: ToolRegistryBuilder,
        protocols: Protocols,
    ) -> ToolRegistryBuilder {
        let tools = self.add_spawn_teammate(tools, protocols);
        let tools = self.add_send_message(tools, AgentId::lead());
        let tools = self.add_list_teammates(tools);
        match protocols {
            Protocols::Off => tools,
            Protocols::On => self.add_lead_protocols(tools),
        }
    }

    /// A teammate's team tools: `send_message`, and with the protocols `submit_plan` (no
    /// spawning, so no recursion).
    pub fn register_teammate(
        &self,
        tools: ToolRegistryBuilder,
        teammate: AgentId,
        protocols: Protocols,
    ) -> ToolRegistryBuilder {
        let tools = self.add_send_message(tools, teammate.clone());
        match protocols {
            Protocols::Off => tools,
            Protocols::On => self.add_submit_plan(tools, teammate),
        }
    }
}
