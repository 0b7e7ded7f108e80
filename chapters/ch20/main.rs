//! Chapter 20: `just ch20 --prompt "..."`. Runs profile P20 of the one harness program
//! (`agent-tutorial`, started as `ch20`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch20.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch20")
}
