//! Everything that can go wrong with a schedule, as one typed error. Each message says what
//! failed and what to do, because the model reads it as a tool result and a person reads it
//! from `agent-tutorial cron list`.

use agent_core::{FailureCode, ToolFailure};
use agent_workspace::PathError;

use crate::schedule::ScheduleId;

/// Why a schedule could not be added, found, stored or computed. Its text is the tool result
/// the model reads, so each says what a valid value looks like.
#[derive(Debug, thiserror::Error)]
pub enum CronError {
    /// Not exactly five whitespace-separated fields: the parser would otherwise read a sixth
    /// field as seconds, which is not the standard syntax the tools promise.
    #[error(
        "`{expr}` has {count} fields; a cron expression has exactly 5: minute hour day-of-month month day-of-week (for example `0 9 * * 1-5`)"
    )]
    FieldCount {
        /// The expression as given.
        expr: String,
        /// How many fields it has.
        count: usize,
    },
    /// Five fields, but one of them is not valid cron syntax.
    #[error(
        "`{expr}` is not a valid cron expression (minute hour day-of-month month day-of-week): {source}"
    )]
    BadExpression {
        /// The expression as given.
        expr: String,
        /// The parser's error.
        #[source]
        source: croner::errors::CronError,
    },
    /// Not a time zone of the compiled-in IANA database.
    #[error(
        "unknown time zone `{name}`: use an IANA name such as `Europe/Berlin`, `America/New_York` or `UTC`"
    )]
    UnknownTimeZone {
        /// The name as given.
        name: String,
        /// The database's error.
        #[source]
        source: jiff::Error,
    },
    /// The expression parses but names no time that exists (`0 0 31 2 *`).
    #[error("`{expr}` never fires after {after}: {source}")]
    NoNextFire {
        /// The expression.
        expr: String,
        /// The instant searched from.
        after: jiff::Timestamp,
        /// The parser's error.
        #[source]
        source: croner::errors::CronError,
    },
    /// The prompt is empty or only spaces.
    #[error("the prompt is empty: say what should run on the schedule")]
    EmptyPrompt,
    /// The prompt is over [`crate::MAX_PROMPT_BYTES`].
    #[error("the prompt is {len} bytes, over the limit of {max} bytes")]
    PromptTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A control, bidirectional or invisible character (line breaks and tabs are fine): the
    /// prompt is shown in `cron list` and becomes a user turn.
    #[error("the prompt holds the hidden character U+{code:04X}: write it without")]
    HiddenCharacter {
        /// The character's code point.
        code: u32,
    },
    /// [`crate::MAX_SCHEDULES`] schedules of this durability exist already.
    #[error("there are already {max} {kind} schedules: cancel one first")]
    TooMany {
        /// "durable" or "session".
        kind: &'static str,
        /// The limit.
        max: usize,
    },
    /// No schedule has this id.
    #[error("no schedule has the id `{id}`: list_crons shows the ids")]
    NotFound {
        /// The id as given.
        id: ScheduleId,
    },
    /// The whole file is unreadable as JSON: nothing is written over it, so nothing is lost.
    #[error(
        "`{path}` is not a valid schedule file ({source}); it was left as it is: fix or move it away"
    )]
    Corrupt {
        /// The file, workspace-relative.
        path: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The boundary refused the file or the disk failed (an outward symlink, a FIFO, a file
    /// over the size limit, an I/O error).
    #[error("cannot use the schedule file: {source}")]
    Store {
        /// What the boundary or the file system said.
        #[source]
        source: PathError,
    },
    /// The schedules could not be written as JSON.
    #[error("cannot encode the schedules: {source}")]
    Encode {
        /// The encoder's error.
        #[source]
        source: serde_json::Error,
    },
}

impl From<PathError> for CronError {
    fn from(source: PathError) -> Self {
        Self::Store { source }
    }
}

impl From<CronError> for ToolFailure {
    /// What the model got wrong is `invalid_arguments` (it can fix the call); an escape is
    /// `path_escape` as for every tool; the rest failed while running.
    fn from(err: CronError) -> Self {
        let code = match &err {
            CronError::FieldCount { .. }
            | CronError::BadExpression { .. }
            | CronError::UnknownTimeZone { .. }
            | CronError::NoNextFire { .. }
            | CronError::EmptyPrompt
            | CronError::PromptTooLong { .. }
            | CronError::HiddenCharacter { .. }
            | CronError::TooMany { .. }
            | CronError::NotFound { .. } => FailureCode::InvalidArguments,
            CronError::Store {
                source: PathError::Escape { .. },
            } => FailureCode::PathEscape,
            CronError::Corrupt { .. } | CronError::Store { .. } | CronError::Encode { .. } => {
                FailureCode::ToolExecutionError
            }
        };
        ToolFailure::new(code, err.to_string())
    }
}
