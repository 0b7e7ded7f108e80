//! Chapter 16: `just ch16 --prompt "..."`. Runs profile P16 of the one harness program
//! (`agent-tutorial`, started as `ch16`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch16.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch16")
}
