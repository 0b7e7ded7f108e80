//! Chapter 13: `just ch13 --prompt "..."`. Binds profile P13 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch13.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(13)
}
