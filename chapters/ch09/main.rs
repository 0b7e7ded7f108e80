//! Chapter 9: `just ch09 --prompt "..."`. Binds profile P09 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch09.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(9)
}
