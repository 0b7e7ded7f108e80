//! Chapter 4: `just ch04 --prompt "..."`. Runs profile P04 of the one harness program
//! (`agent-tutorial`, started as `ch04`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch04.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch04")
}
