//! Chapter 11: recovery. `cancel`: Ctrl-C stops a turn cleanly (exit 130, history closed).

mod cancel;
