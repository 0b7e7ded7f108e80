//! Chapter 10: `just ch10 --prompt "..."`. Binds profile P10 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch10.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(10)
}
