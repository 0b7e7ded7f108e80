//! The handlers: arguments in, a store or the runtime called as the caller, one line out.

use std::sync::Arc;

use agent_core::{FailureCode, PreparedCall, ToolFailure, ToolHandler};
use agent_protocol::parse_arguments;
use agent_protocol::{AgentId, RequestId};
use async_trait::async_trait;
use serde::Deserialize;

use super::{Caller, MAX_ROLE_CHARS};
use crate::exchange::{AnswerError, Delivered, answer};
use crate::gate::PlanRequirement;
use crate::mailbox::{MAX_MESSAGE_BYTES, MailError};
use crate::message::MailKind;
use crate::requests::{Decision, NewRequest, RequestError, RequestKind, Response};
use crate::roster::{NameError, RecipientError};
use crate::runtime::{RuntimeError, TeammateSpec};

/// What a shutdown request says (the teammate's runtime answers it, not its model).
const SHUTDOWN_CONTENT: &str = "The lead asks you to finish or release what you hold and stop.";

impl From<MailError> for ToolFailure {
    fn from(err: MailError) -> Self {
        let code = match &err {
            MailError::Recipient(RecipientError::ToSelf(_)) => FailureCode::InvalidArguments,
            MailError::Recipient(_) => FailureCode::UnknownRecipient,
            MailError::TooLarge { .. } => FailureCode::MessageTooLarge,
            MailError::Full { .. } => FailureCode::MailboxFull,
            MailError::Storage(agent_workspace::PathError::Escape { .. }) => {
                FailureCode::PathEscape
            }
            _ => FailureCode::ToolExecutionError,
        };
        ToolFailure::new(code, err.to_string())
    }
}

impl From<RequestError> for ToolFailure {
    fn from(err: RequestError) -> Self {
        let code = match &err {
            RequestError::NotFound(_) => FailureCode::RequestNotFound,
            RequestError::Stale { .. } => FailureCode::RequestStale,
            RequestError::Conflict { .. } => FailureCode::RequestConflict,
            RequestError::WrongKind { .. } | RequestError::WrongSender { .. } => {
                FailureCode::RequestWrongSender
            }
            RequestError::Expired { .. } => FailureCode::RequestExpired,
            RequestError::TooLarge { .. } => FailureCode::MessageTooLarge,
            RequestError::Full | RequestError::Storage(_) | RequestError::Store(_) => {
                FailureCode::ToolExecutionError
            }
        };
        ToolFailure::new(code, err.to_string())
    }
}

impl From<NameError> for ToolFailure {
    fn from(err: NameError) -> Self {
        let code = match err {
            NameError::Full => FailureCode::TeamFull,
            NameError::Reserved | NameError::Taken(_) => FailureCode::InvalidArguments,
        };
        ToolFailure::new(code, err.to_string())
    }
}

impl From<RuntimeError> for ToolFailure {
    fn from(err: RuntimeError) -> Self {
        ToolFailure::execution(err)
    }
}

fn invalid(message: impl Into<String>) -> ToolFailure {
    ToolFailure::new(FailureCode::InvalidArguments, message)
}

/// A failure after the request was recorded: the record stands, the model is told both.
fn after_record(done: &str, err: MailError) -> ToolFailure {
    let failure = ToolFailure::from(err);
    ToolFailure::new(
        failure.code,
        format!("{done}, but it could not be delivered: {}", failure.message),
    )
}

impl Caller {
    /// Records a request, then sends it to its target's mailbox: a failed delivery leaves
    /// the request pending.
    fn request(&self, new: NewRequest) -> Result<RequestId, ToolFailure> {
        let request = self.tools.requests.create(new)?;
        let kind = MailKind::Request {
            request_id: request.id.clone(),
            request: request.kind,
        };
        let roster = self.tools.runtime.roster();
        let done = format!("request {} was recorded", request.id.0);
        let sent = self
            .tools
            .mailbox
            .send(
                &roster,
                &self.me,
                request.to.as_str(),
                kind,
                &request.content,
            )
            .map_err(|err| after_record(&done, err))?;
        self.tools.runtime.mail_sent(&sent.to);
        self.tools.runtime.request_sent(&request);
        Ok(request.id)
    }
}

/// `send_message`.
#[derive(Debug)]
pub struct SendMessage(pub(crate) Arc<Caller>);

#[derive(Deserialize)]
struct SendArgs {
    to: String,
    content: String,
}

#[async_trait]
impl ToolHandler for SendMessage {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: SendArgs = parse_arguments(call)?;
        let me = &self.0;
        let roster = me.tools.runtime.roster();
        let sent =
            me.tools
                .mailbox
                .send(&roster, &me.me, &args.to, MailKind::Message, &args.content)?;
        me.tools.runtime.mail_sent(&sent.to);
        Ok(format!("sent message {} to {}", sent.id, sent.to))
    }
}

/// `submit_plan`.
#[derive(Debug)]
pub struct SubmitPlan(pub(crate) Arc<Caller>);

#[derive(Deserialize)]
struct PlanArgs {
    plan: String,
}

#[async_trait]
impl ToolHandler for SubmitPlan {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: PlanArgs = parse_arguments(call)?;
        let me = &self.0;
        let id = me.request(NewRequest {
            kind: RequestKind::PlanApproval,
            from: me.me.clone(),
            to: AgentId::lead(),
            content: args.plan,
        })?;
        Ok(format!(
            "plan {} sent to the lead for review; until it is approved only read-only tools, send_message and submit_plan run",
            id.0
        ))
    }
}

/// `review_plan`.
#[derive(Debug)]
pub struct ReviewPlan(pub(crate) Arc<Caller>);

#[derive(Deserialize)]
struct ReviewArgs {
    request_id: String,
    approve: bool,
    #[serde(default)]
    feedback: String,
}

#[async_trait]
impl ToolHandler for ReviewPlan {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: ReviewArgs = parse_arguments(call)?;
        let me = &self.0;
        let id = RequestId(args.request_id);
        let request = me
            .tools
            .requests
            .get(&id)?
            .ok_or_else(|| RequestError::NotFound(id.0.clone()))?;
        let decision = if args.approve {
            Decision::Approve
        } else {
            Decision::Reject
        };
        let response = Response {
            request_id: id.clone(),
            kind: RequestKind::PlanApproval,
            from: me.me.clone(),
            to: request.from.clone(),
            decision,
            feedback: args.feedback,
        };
        let roster = me.tools.runtime.roster();
        let done = format!("plan {} of {} {decision}", id.0, request.from);
        match answer(&me.tools.requests, &me.tools.mailbox, &roster, &response) {
            Ok(Delivered { mail: None, .. }) => {
                return Ok(format!("{done} already (the same answer, nothing changed)"));
            }
            Ok(Delivered {
                mail: Some(mail), ..
            }) => me.tools.runtime.mail_sent(&mail.to),
            Err(AnswerError::Request(err)) => return Err(err.into()),
            Err(AnswerError::Undelivered { source, .. }) => {
                return Err(after_record(&done, source));
            }
        }
        Ok(done)
    }
}

/// `spawn_teammate`.
#[derive(Debug)]
pub struct SpawnTeammate(pub(crate) Arc<Caller>);

#[derive(Deserialize)]
struct SpawnArgs {
    name: String,
    role: String,
    prompt: String,
    #[serde(default)]
    require_plan: bool,
}

#[async_trait]
impl ToolHandler for SpawnTeammate {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: SpawnArgs = parse_arguments(call)?;
        let name = AgentId::new(&args.name).map_err(|err| invalid(err.to_string()))?;
        let role = args.role.trim();
        if role.chars().count() > MAX_ROLE_CHARS || role.chars().any(char::is_control) {
            return Err(invalid(format!(
                "the role must be one line of at most {MAX_ROLE_CHARS} characters"
            )));
        }
        if args.prompt.len() > MAX_MESSAGE_BYTES {
            return Err(MailError::TooLarge {
                size: args.prompt.len(),
            }
            .into());
        }
        let runtime = &self.0.tools.runtime;
        runtime.roster().admit(&name)?;
        let plan = if args.require_plan {
            PlanRequirement::Required
        } else {
            PlanRequirement::Optional
        };
        runtime
            .spawn(TeammateSpec {
                name: name.clone(),
                role: role.to_string(),
                prompt: args.prompt,
                plan,
            })
            .await?;
        let gated = match plan {
            PlanRequirement::Required => {
                "; it must submit a plan you approve before it changes anything"
            }
            PlanRequirement::Optional => "",
        };
        Ok(format!("started teammate {name} ({role}){gated}"))
    }
}

/// `list_teammates`.
#[derive(Debug)]
pub struct ListTeammates(pub(crate) Arc<Caller>);

#[async_trait]
impl ToolHandler for ListTeammates {
    async fn handle(&self, _call: &PreparedCall) -> Result<String, ToolFailure> {
        let roster = self.0.tools.runtime.roster();
        if roster.members.is_empty() {
            return Ok("no teammates yet; start one with spawn_teammate".to_string());
        }
        Ok(roster
            .members
            .iter()
            .map(|m| format!("{}: {} ({})", m.name, m.status, m.role))
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

/// `request_shutdown`.
#[derive(Debug)]
pub struct RequestShutdown(pub(crate) Arc<Caller>);

#[derive(Deserialize)]
struct ShutdownArgs {
    teammate: Option<String>,
}

#[async_trait]
impl ToolHandler for RequestShutdown {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: ShutdownArgs = parse_arguments(call)?;
        let me = &self.0;
        let roster = me.tools.runtime.roster();
        let targets: Vec<AgentId> = match &args.teammate {
            Some(name) => {
                let name = roster
                    .recipient(&me.me, name)
                    .map_err(|err| ToolFailure::from(MailError::from(err)))?;
                if name.is_lead() {
                    return Err(invalid("`lead` is not a teammate; name a teammate"));
                }
                vec![name]
            }
            None => roster
                .members
                .iter()
                .filter(|m| m.status.receives_mail())
                .map(|m| m.name.clone())
                .collect(),
        };
        if targets.is_empty() {
            return Ok("no running or idle teammate to shut down".to_string());
        }
        let mut lines = Vec::new();
        for teammate in targets {
            let id = me.request(NewRequest {
                kind: RequestKind::Shutdown,
                from: me.me.clone(),
                to: teammate.clone(),
                content: SHUTDOWN_CONTENT.to_string(),
            })?;
            lines.push(format!("shutdown of {teammate} requested ({})", id.0));
        }
        Ok(lines.join("\n"))
    }
}
