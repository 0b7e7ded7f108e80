//! Chapter 9: `just ch09 --prompt "..."`. Runs profile P09 of the one harness program
//! (`agent-tutorial`, started as `ch09`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch09.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch09")
}
