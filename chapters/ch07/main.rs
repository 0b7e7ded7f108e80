//! Chapter 7: `just ch07 --prompt "..."`. Binds profile P07 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch07.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(7)
}
