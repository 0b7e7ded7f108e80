//! Chapter 15: `just ch15 --prompt "..."`. Runs profile P15 of the one harness program
//! (`agent-tutorial`, started as `ch15`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch15.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch15")
}
