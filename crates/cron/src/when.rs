//! When a schedule fires: a standard 5-field cron expression read in an IANA time zone.
//!
//! Instants are kept in UTC ([`Timestamp`]); the zone is kept by name only to compute the
//! following fire time, because "09:00 in Berlin" is a different UTC instant in summer and in
//! winter. The DST rules are croner's (the Open Cron Pattern Specification): a fixed time that
//! falls in a spring-forward gap runs once, at the first instant after the gap; a fixed time
//! that occurs twice in a fall-back fold runs once, at its first occurrence.

use std::str::FromStr;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::error::CronError;

/// The zone used when a schedule names none.
pub const DEFAULT_TIMEZONE: &str = "UTC";

/// A parsed 5-field cron expression, with the text it came from.
#[derive(Debug, Clone)]
pub struct CronExpr {
    text: String,
    cron: Cron,
}

impl CronExpr {
    /// Parses exactly five fields (minute hour day-of-month month day-of-week); seconds and
    /// years, which croner also knows, are refused so the syntax is the one `crontab` reads.
    pub fn parse(text: &str) -> Result<Self, CronError> {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let count = text.split(' ').filter(|f| !f.is_empty()).count();
        if count != 5 {
            return Err(CronError::FieldCount { expr: text, count });
        }
        let parser = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(&text)
            .map_err(|source| CronError::BadExpression {
                expr: text.clone(),
                source,
            })?;
        Ok(Self { text, cron })
    }

    /// The expression as stored and shown: fields separated by one space.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for CronExpr {
    type Err = CronError;

    fn from_str(text: &str) -> Result<Self, CronError> {
        Self::parse(text)
    }
}

/// An IANA time zone from the database compiled into the binary, so the answer is the same on
/// every machine, with or without `/usr/share/zoneinfo`.
#[derive(Debug, Clone)]
pub struct Zone {
    name: String,
    tz: TimeZone,
}

impl Zone {
    /// Looks `name` up (case-insensitively) and keeps the database's spelling of it.
    pub fn parse(name: &str) -> Result<Self, CronError> {
        let name = name.trim();
        let tz = jiff::tz::db()
            .get(name)
            .map_err(|source| CronError::UnknownTimeZone {
                name: name.to_string(),
                source,
            })?;
        let name = tz.iana_name().unwrap_or(name).to_string();
        Ok(Self { name, tz })
    }

    /// UTC, the zone of a schedule that names none.
    pub fn utc() -> Self {
        Self {
            name: DEFAULT_TIMEZONE.to_string(),
            tz: TimeZone::UTC,
        }
    }

    /// The database's name of the zone (`Europe/Berlin`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `at` as a person in this zone reads it: `2026-03-30 09:00 +02:00 (Europe/Berlin)`.
    pub fn show(&self, at: Timestamp) -> String {
        format!(
            "{} ({})",
            at.to_zoned(self.tz.clone()).strftime("%Y-%m-%d %H:%M %:z"),
            self.name
        )
    }
}

/// The first fire time strictly after `after`.
pub fn next_fire(expr: &CronExpr, zone: &Zone, after: Timestamp) -> Result<Timestamp, CronError> {
    let start = after.to_zoned(zone.tz.clone());
    expr.cron
        .find_next_occurrence(&start, false)
        .map(|zoned| zoned.timestamp())
        .map_err(|source| CronError::NoNextFire {
            expr: expr.text.clone(),
            after,
            source,
        })
}

/// `at` in UTC as the tables and answers show it: `2026-03-30 07:00 UTC`.
pub fn show_utc(at: Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}
