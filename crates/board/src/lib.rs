#![doc = include_str!("../README.md")]
//!
//! Modules: [`board`] (the trait and the rules both backends share), [`model`], [`error`],
//! [`clock`], [`sqlite`], [`postgres`], [`import`] (chapter 12's files), [`tools`] (the six
//! tool specs and handlers, ready to register).

#![warn(missing_docs)]

pub mod board;
pub mod clock;
pub mod error;
pub mod import;
pub mod model;
pub mod postgres;
pub mod sqlite;
pub mod tools;

pub use board::TaskBoard;
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{BoardError, ErrorKind, Field};
pub use model::{
    BoardConfig, Claim, ClaimEnd, ClaimRecord, ClaimTarget, ClaimToken, DEFAULT_LEASE, Holder,
    ImportedTask, Millis, NewTask, Status, Task, TaskId,
};
pub use postgres::{PG_URL_VAR, PgBoard};
pub use sqlite::{FirstOpen, SqliteBoard};
