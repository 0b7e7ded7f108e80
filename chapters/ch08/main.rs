//! Chapter 8: `just ch08 --prompt "..."`. Runs profile P08 of the one harness program
//! (`agent-tutorial`, started as `ch08`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch08.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch08")
}
