//! Chapter 5: `just ch05 --prompt "..."`. Runs profile P05 of the one harness program
//! (`agent-tutorial`, started as `ch05`; see `chapters/launcher.rs`); everything the chapter
//! teaches lives in the shared crates (see `docs/ch05.md`).

#[path = "../launcher.rs"]
mod launcher;

fn main() -> std::process::ExitCode {
    launcher::exec("ch05")
}
