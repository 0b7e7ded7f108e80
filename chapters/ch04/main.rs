//! Chapter 4: `just ch04 --prompt "..."`. Binds profile P04 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch04.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(4)
}
