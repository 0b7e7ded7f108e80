//! Chapter 17: `just ch17 --prompt "..."`. Runs profile P17 of the one harness program
//! (`agent-tutorial`, started as `ch17`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch17.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch17")
}
