//! Chapter 6: `just ch06 --prompt "..."`. Binds profile P06 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch06.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(6)
}
