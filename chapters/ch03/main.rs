//! Chapter 3: `just ch03 --prompt "..."`. Binds profile P03 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch03.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(3)
}
