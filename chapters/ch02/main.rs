//! Chapter 2: `just ch02 --prompt "..."`. Runs profile P02 of the one harness program
//! (`agent-tutorial`, started as `ch02`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch02.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch02")
}
