//! Chapter 1: `just ch01 --prompt "..."`. Runs profile P01 of the one harness program
//! (`agent-tutorial`, started as `ch01`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch01.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch01")
}
