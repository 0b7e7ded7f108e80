//! `agent-cron` (chapter 14): prompts that run on a schedule.
//!
//! - [`when`]: a standard 5-field cron expression ([`CronExpr`]) read in an IANA time zone
//!   ([`Zone`], from a database compiled in), and its next fire time in UTC ([`next_fire`]).
//! - [`Scheduler`]: durable schedules in `.agent_tutorial/crons.json` (through the workspace
//!   boundary, locked, replaced atomically), session ones in memory; [`Scheduler::due`] answers
//!   "what is due now?" once per schedule, however many fire times it missed.
//! - The tools `schedule_cron`, `list_crons`, `cancel_cron` ([`add_cron_tools`]) and the table
//!   `agent-tutorial cron list` prints ([`durable_table`]).
//!
//! Nothing fires by itself: the caller asks [`Scheduler::due`] when it is idle between user
//! turns and runs each [`Due`] as a user turn headed by [`Due::marker`].

#![warn(missing_docs)]

mod error;
mod schedule;
mod scheduler;
mod store;
mod table;
mod tools;
pub mod trust_gate;
pub mod when;

/// The workspace's clock, re-exported: the scheduler reads its wall time.
pub use agent_workspace::{Clock, ManualClock, SystemClock};
pub use error::CronError;
pub use jiff::Timestamp;
pub use schedule::{Due, Durability, Schedule, ScheduleId};
pub use scheduler::{MAX_COUNTED_MISSES, MAX_PROMPT_BYTES, MAX_SCHEDULES, NewSchedule, Scheduler};
pub use store::{CRONS_FILE, CRONS_LOCK, READ_LIMIT};
pub use table::{durable_table, format_table};
pub use tools::{
    CANCEL_CRON, CancelCron, LIST_CRONS, ListCrons, SCHEDULE_CRON, ScheduleCron, add_cron_tools,
    cancel_spec, list_spec, schedule_spec,
};
pub use when::{CronExpr, DEFAULT_TIMEZONE, Zone, next_fire};
