//! Chapter 10: `just ch10 --prompt "..."`. Runs profile P10 of the one harness program
//! (`agent-tutorial`, started as `ch10`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch10.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch10")
}
