//! Chapter 13: `just ch13 --prompt "..."`. Runs profile P13 of the one harness program
//! (`agent-tutorial`, started as `ch13`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch13.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch13")
}
