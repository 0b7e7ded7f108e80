//! Chapter 6: `just ch06 --prompt "..."`. Runs profile P06 of the one harness program
//! (`agent-tutorial`, started as `ch06`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch06.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch06")
}
