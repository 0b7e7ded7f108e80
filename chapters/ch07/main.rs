//! Chapter 7: `just ch07 --prompt "..."`. Runs profile P07 of the one harness program
//! (`agent-tutorial`, started as `ch07`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch07.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch07")
}
