//! Processes the harness starts for the model (`bash`, background jobs), for the user's shell
//! hooks, and later for git and MCP servers: how they are described ([`Command`]), started
//! ([`Command::spawn`], [`Command::spawn_stdio`]), supervised under one deadline
//! ([`Child::supervise`], [`Child::run`]) and ended ([`Killer`]).
//!
//! Two promises: a command never sees the model server's credentials ([`inherits`]), and when
//! its call ends, every process it started is gone — also the ones that left its process group
//! with `setsid` or were double-forked away from it. [`Command`] keeps the handle that ends the
//! tree itself, so no spawner can forget to record the group leader.
//!
//! Every command runs in the OS sandbox (`agent_sandbox`, docs/sandbox.md): the spawn starts
//! the sandbox helper, which runs the command as the child of a PID namespace's init. Ending the
//! call kills the helper's process group; the init dies with the helper, and the kernel kills
//! every process of the namespace — nothing is searched for, whatever the machine runs.
//!
//! Where the machine has no namespaces (the fallbacks, and `--sandbox off`) the command also
//! carries a marker in its environment (`AGENT_TUTORIAL_CALL=<id>`), which every descendant
//! inherits; ending the call kills the group, then every process whose environment carries the
//! marker, until none is left. Not covered there: a descendant that both clears its environment
//! (`env -i`) and leaves the process group.

mod command;
mod stdio;
mod supervise;
mod tree;

pub use command::{Child, Command, Stdin};
pub use stdio::{CLOSE_SETTLE, StdioChild};
pub use supervise::{Captures, Ended, Finished, Output, PIPE_GRACE, Stream};
pub use tree::Killer;

/// The environment variable that marks every process one call started.
pub const CALL_MARKER: &str = "AGENT_TUTORIAL_CALL";

/// Whether an environment variable is passed to commands the model or a hook runs: the model
/// server's credentials are not, so `echo $OPENAI_API_KEY` cannot put the key into the
/// conversation, a transcript or an artifact file.
pub fn inherits(name: &str) -> bool {
    !name.starts_with("OPENAI_")
}
