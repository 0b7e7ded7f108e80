//! Chapter 3: `just ch03 --prompt "..."`. Runs profile P03 of the one harness program
//! (`agent-tutorial`, started as `ch03`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch03.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch03")
}
