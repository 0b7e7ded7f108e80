//! Chapter 12: `just ch12 --prompt "..."`. Runs profile P12 of the one harness program
//! (`agent-tutorial`, started as `ch12`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch12.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch12")
}
