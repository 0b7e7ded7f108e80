//! `agent-workspace`: the one boundary every path goes through, and the one way commands are
//! started (docs/architecture.md, "The security model").
//!
//! - [`Workspace::inside`] says which place inside the workspace a path names, or refuses it
//!   ([`PathError::Escape`]): `..` past the root, an absolute path elsewhere, a symlink that
//!   leads out, `..` after a folder that does not exist.
//! - Every file operation ([`Workspace::open_regular`], [`Workspace::write_atomic`],
//!   [`Workspace::append`], …) opens relative to a `cap-std` directory handle of the root with
//!   `O_NOFOLLOW`, so even a symlink swapped in after the check cannot lead out; reads refuse what
//!   is not a regular file and never hold more than the caller allows.
//! - [`process::Command`] starts a program or `bash -c` without the model server's
//!   credentials, in the OS sandbox (`agent_sandbox`), its [`process::Killer`] ends every
//!   process the command started, and [`process::Child::supervise`] waits for it under one
//!   deadline with bounded output ([`Capture`]).
//! - [`StateDir`]: a folder of the harness's own records under one lock ([`store`]): atomic
//!   and create-only JSON writes, bounded reads and ids.
//! - [`Clock`]: the one source of time (monotonic, wall, sleeps), real ([`SystemClock`]) or
//!   moved by a test ([`ManualClock`]).

#![warn(missing_docs)]

mod boundary;
mod capture;
pub mod clock;
mod error;
mod fs;
mod lock;
pub mod process;
pub mod store;

pub use boundary::{Inside, Workspace};
pub use capture::Capture;
pub use clock::{Clock, ManualClock, Sleep, Sleeping, SystemClock};
pub use error::{FileKind, Op, PathError};
pub use fs::{Entry, Existing, RegularFile, Stamp, TEMP_PREFIX};
pub use lock::FileLock;
pub use store::{StateDir, StateLock, StoreError};
