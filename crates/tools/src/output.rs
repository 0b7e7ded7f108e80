//! Output shaping shared by tools. [`Capture`] lives in `agent_workspace` because the process
//! supervisor there (used by `bash` and the shell hooks) fills it.

pub use agent_workspace::Capture;
