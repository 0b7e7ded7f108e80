//! Chapter 12: `just ch12 --prompt "..."`. Binds profile P12 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch12.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(12)
}
