//! Chapter 11: recovery. `cancel`: Ctrl-C stops a turn cleanly (exit 130, history closed);
//! `line_editor`: the interactive mode at a terminal.

mod cancel;
mod line_editor;
