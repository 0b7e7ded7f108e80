//! Chapter 19: `just ch19 --prompt "..."`. Runs profile P19 of the one harness program
//! (`agent-tutorial`, started as `ch19`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch19.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch19")
}
