//! Chapter 11: recovery. `recovery`: retries, the fallback model, truncation and overflow
//! around the model client; `cancel`: Ctrl-C stops a turn cleanly (exit 130, history closed);
//! `line_editor`: the interactive mode at a terminal.

pub(crate) mod cancel;
mod line_editor;
mod output;
mod recovery;
mod sessions;
mod stream;
mod terminal;
