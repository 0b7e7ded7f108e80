//! Chapter 14: `just ch14 --prompt "..."`. Runs profile P14 of the one harness program
//! (`agent-tutorial`, started as `ch14`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch14.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch14")
}
