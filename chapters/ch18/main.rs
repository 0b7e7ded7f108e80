//! Chapter 18: `just ch18 --prompt "..."`. Runs profile P18 of the one harness program
//! (`agent-tutorial`, started as `ch18`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch18.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch18")
}
