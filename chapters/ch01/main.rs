//! Chapter 1: `just ch01 --prompt "..."`. Binds profile P01 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch01.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(1)
}
