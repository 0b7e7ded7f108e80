//! `schedule_cron`, `list_crons` and `cancel_cron`: the model's side of the scheduler.

use std::sync::Arc;

use agent_core::{
    CallSummary, FailureCode, PreparedCall, ToolEffect, ToolFailure, ToolHandler,
    ToolRegistryBuilder, ToolSpec,
    tool::{parse_arguments, string_argument},
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::CronError;
use crate::schedule::{Durability, ScheduleId};
use crate::scheduler::{NewSchedule, Scheduler};
use crate::table::format_table;
use crate::when::{Zone, show_utc};

/// The tool that adds a schedule.
pub const SCHEDULE_CRON: &str = "schedule_cron";
/// The tool that lists the schedules.
pub const LIST_CRONS: &str = "list_crons";
/// The tool that cancels a schedule by id.
pub const CANCEL_CRON: &str = "cancel_cron";

/// Adds the three tools, sharing one scheduler (the one the REPL asks what is due).
pub fn add_cron_tools(
    builder: ToolRegistryBuilder,
    scheduler: &Arc<Scheduler>,
) -> ToolRegistryBuilder {
    builder
        .tool(
            schedule_spec(),
            Arc::new(ScheduleCron(Arc::clone(scheduler))),
        )
        .tool(list_spec(), Arc::new(ListCrons(Arc::clone(scheduler))))
        .tool(cancel_spec(), Arc::new(CancelCron(Arc::clone(scheduler))))
}

/// `schedule_cron` as the model sees it.
pub fn schedule_spec() -> ToolSpec {
    ToolSpec::new(
        SCHEDULE_CRON,
        "Schedule a prompt to run as a user turn on a cron schedule, between user prompts (never in the middle of a turn). `cron` is a standard 5-field expression: minute hour day-of-month month day-of-week, e.g. `0 9 * * 1-5` for 09:00 on weekdays. Missed runs while the harness was not running run once, not once each.",
        ToolEffect::Write,
        json!({
            "type": "object",
            "properties": {
                "cron": {"type": "string", "minLength": 1, "description": "5 fields: minute hour day-of-month month day-of-week."},
                "prompt": {"type": "string", "minLength": 1, "description": "What to do when the schedule fires."},
                "durable": {"type": "boolean", "description": "true: kept in .agent_tutorial/crons.json and runs after a restart; false (default): only for this session."},
                "timezone": {"type": "string", "description": "IANA time zone the expression is read in, e.g. Europe/Berlin (default UTC)."}
            },
            "required": ["cron", "prompt"]
        }),
    )
}

/// `list_crons` as the model sees it.
pub fn list_spec() -> ToolSpec {
    ToolSpec::new(
        LIST_CRONS,
        "List the scheduled prompts: id, durable or session, cron, time zone, next run (UTC), prompt.",
        ToolEffect::Read,
        json!({"type": "object", "properties": {}}),
    )
}

/// `cancel_cron` as the model sees it.
pub fn cancel_spec() -> ToolSpec {
    ToolSpec::new(
        CANCEL_CRON,
        "Cancel a scheduled prompt by the id list_crons shows (`1` for a durable one, `s1` for a session one).",
        ToolEffect::Write,
        json!({
            "type": "object",
            "properties": {"id": {"type": ["string", "integer"], "description": "The schedule's id."}},
            "required": ["id"]
        }),
    )
}

/// The file work happens on a blocking thread: taking the lock may wait for another process.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CronError> + Send + 'static,
) -> Result<T, ToolFailure> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ToolFailure::execution(format!("the schedule operation failed: {err}")))?
        .map_err(ToolFailure::from)
}

#[derive(Debug, Deserialize)]
struct ScheduleArgs {
    cron: String,
    prompt: String,
    #[serde(default)]
    durable: bool,
    timezone: Option<String>,
}

/// `schedule_cron`.
#[derive(Debug, Clone)]
pub struct ScheduleCron(pub Arc<Scheduler>);

#[async_trait]
impl ToolHandler for ScheduleCron {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: ScheduleArgs = parse_arguments(call)?;
        let durability = if args.durable {
            Durability::Durable
        } else {
            Durability::Session
        };
        let new = NewSchedule {
            cron: args.cron,
            prompt: args.prompt,
            timezone: args.timezone,
            durability,
        };
        let scheduler = Arc::clone(&self.0);
        let schedule = blocking(move || scheduler.add(new)).await?;
        let zone = Zone::parse(&schedule.timezone).map_err(ToolFailure::from)?;
        let kept = match schedule.durability {
            Durability::Durable => "durable: kept in .agent_tutorial/crons.json across restarts",
            Durability::Session => "session only: gone when this session ends",
        };
        Ok(format!(
            "Scheduled cron {id} ({kept}): `{cron}` in {tz}.\nNext run: {local} = {utc}.\nIt runs between user turns; cancel it with cancel_cron {{\"id\": \"{id}\"}}.",
            id = schedule.id,
            cron = schedule.cron,
            tz = schedule.timezone,
            local = zone.show(schedule.next_fire_utc),
            utc = show_utc(schedule.next_fire_utc),
        ))
    }

    /// The expression, the zone and the prompt: what a person approving the call must see.
    fn describe(&self, arguments: &Value) -> CallSummary {
        let timezone = match string_argument(arguments, "timezone") {
            "" => crate::DEFAULT_TIMEZONE,
            tz => tz,
        };
        let kind = match arguments.get("durable").and_then(Value::as_bool) {
            Some(true) => "durable",
            _ => "session",
        };
        CallSummary::text(format!(
            "{kind} `{}` {timezone}: {}",
            string_argument(arguments, "cron"),
            string_argument(arguments, "prompt")
        ))
    }
}

/// `list_crons`.
#[derive(Debug, Clone)]
pub struct ListCrons(pub Arc<Scheduler>);

#[async_trait]
impl ToolHandler for ListCrons {
    async fn handle(&self, _call: &PreparedCall) -> Result<String, ToolFailure> {
        let scheduler = Arc::clone(&self.0);
        let schedules = blocking(move || scheduler.list()).await?;
        Ok(format_table(&schedules))
    }

    fn describe(&self, _arguments: &Value) -> CallSummary {
        CallSummary::text("list schedules")
    }
}

/// `cancel_cron`.
#[derive(Debug, Clone)]
pub struct CancelCron(pub Arc<Scheduler>);

/// The id as the model sent it: a number or a string.
fn id_argument(arguments: &Value) -> Option<ScheduleId> {
    match arguments.get("id") {
        Some(Value::String(text)) => Some(ScheduleId::parse(text)),
        Some(Value::Number(n)) => Some(ScheduleId::parse(&n.to_string())),
        _ => None,
    }
}

#[async_trait]
impl ToolHandler for CancelCron {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let id = id_argument(&call.arguments).ok_or_else(|| {
            ToolFailure::new(
                FailureCode::InvalidArguments,
                "$.id: expected a schedule id",
            )
        })?;
        let scheduler = Arc::clone(&self.0);
        let schedule = blocking(move || scheduler.cancel(&id)).await?;
        Ok(format!(
            "Cancelled cron {} ({}): `{}` {}.",
            schedule.id, schedule.durability, schedule.cron, schedule.timezone
        ))
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        let id = id_argument(arguments).map(|id| id.to_string());
        CallSummary::text(format!("cancel cron {}", id.unwrap_or_default()))
    }
}
