//! What a schedule is, and what the scheduler hands the REPL when one is due.

use std::fmt;

use agent_core::fragment::{Fragment, FragmentKind, Template};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::CronError;
use crate::when::{CronExpr, Zone, show_utc};

/// Whether a schedule outlives the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// Kept in `.agent_tutorial/crons.json`; runs again after a restart.
    Durable,
    /// Kept in memory; gone when the session ends.
    Session,
}

impl Durability {
    /// The name the tools take and `cron list` shows.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Durable => "durable",
            Self::Session => "session",
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A short id a person and a model can type: `1`, `2`, … for durable schedules (numbered in
/// the file, so two processes never hand out the same one), `s1`, `s2`, … for session ones
/// (numbered in memory, so a session schedule never has to touch the disk).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ScheduleId(String);

impl ScheduleId {
    pub(crate) fn durable(n: u64) -> Self {
        Self(n.to_string())
    }

    pub(crate) fn session(n: u64) -> Self {
        Self(format!("s{n}"))
    }

    /// An id as typed: surrounding spaces are dropped, and `S3` is `s3`.
    pub fn parse(text: &str) -> Self {
        Self(text.trim().to_ascii_lowercase())
    }

    /// The id as shown (`3`, `s2`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number of a durable id (`"7"` → 7), used to keep the file's counter ahead.
    pub(crate) fn durable_number(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// Ids sort as numbers within their kind (`2` before `10`), durable ones first.
    pub(crate) fn sort_key(&self) -> (bool, u64, String) {
        let session = self.0.starts_with('s');
        let digits = if session { &self.0[1..] } else { &self.0[..] };
        (session, digits.parse().unwrap_or(u64::MAX), self.0.clone())
    }
}

impl fmt::Display for ScheduleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One schedule: the prompt, when it fires, and the next instant it fires at (in UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// Its id.
    pub id: ScheduleId,
    /// The 5-field expression, normalised to single spaces.
    pub cron: String,
    /// What runs as a user turn when it fires.
    pub prompt: String,
    /// The IANA name the expression is read in.
    pub timezone: String,
    /// Whether it outlives the process.
    pub durability: Durability,
    /// The next instant the schedule is due.
    pub next_fire_utc: Timestamp,
    /// When it was added.
    pub created: Timestamp,
}

impl Schedule {
    /// The expression and the zone, parsed again: a stored record is checked on every load.
    pub(crate) fn when(&self) -> Result<(CronExpr, Zone), CronError> {
        Ok((CronExpr::parse(&self.cron)?, Zone::parse(&self.timezone)?))
    }
}

/// A schedule that came due, handed to the caller once. Missed fire times coalesce: a schedule
/// that should have fired five times while the process was down is one `Due` with
/// `missed == 4`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The schedule that came due.
    pub schedule_id: ScheduleId,
    /// Its expression (for the marker line).
    pub cron: String,
    /// Its time zone (for the marker line).
    pub timezone: String,
    /// Whether it is durable.
    pub durability: Durability,
    /// What runs.
    pub prompt: String,
    /// The first fire time that was not run yet (the one this run is for).
    pub scheduled_for: Timestamp,
    /// Fire times after `scheduled_for` that passed too and are folded into this one run
    /// (counted up to [`crate::MAX_COUNTED_MISSES`]).
    pub missed: u32,
    /// When the schedule fires next.
    pub next_fire_utc: Timestamp,
}

/// The scheduled turn's layout, in its own file: the marker line, then the prompt.
const SCHEDULED_RUN: Template =
    Template::new(FragmentKind::ScheduledRun, include_str!("scheduled_run.md"));

impl Due {
    /// One line that says this turn was started by a schedule, not typed by the user: the
    /// REPL shows it, and it heads the user message so the model knows too.
    pub fn marker(&self) -> String {
        // The fragment's first line: no slot of the marker line can break it.
        let text = self.fragment().into_text();
        text.lines().next().unwrap_or_default().to_string()
    }

    /// The text of the user turn: the marker line, then the prompt.
    pub fn turn_text(&self) -> String {
        self.fragment().into_text()
    }

    /// The scheduled turn as a fragment. The prompt was written by whoever added the
    /// schedule (the person, the model, or a planted `crons.json`): it is escaped, so it
    /// cannot forge a second marker or another fragment.
    pub fn fragment(&self) -> Fragment {
        let missed = match self.missed {
            0 => String::new(),
            1 => ", 1 more missed run folded into this one".to_string(),
            n => format!(", {n} more missed runs folded into this one"),
        };
        SCHEDULED_RUN
            .fill()
            .inline("id", &self.schedule_id)
            .inline("cron", &self.cron)
            .inline("timezone", &self.timezone)
            .inline("due", show_utc(self.scheduled_for))
            .inline("missed", missed)
            .text("prompt", self.prompt.as_str())
            .render()
    }
}
