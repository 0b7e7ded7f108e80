//! Chapter 2: `just ch02 --prompt "..."`. Binds profile P02 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch02.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(2)
}
