//! Chapter 14: `just ch14 --prompt "..."`. Binds profile P14 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch14.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(14)
}
