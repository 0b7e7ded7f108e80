//! Chapter 11: `just ch11 --prompt "..."`. Runs profile P11 of the one harness program
//! (`agent-tutorial`, started as `ch11`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch11.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch11")
}
