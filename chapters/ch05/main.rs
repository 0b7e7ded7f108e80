//! Chapter 5: `just ch05 --prompt "..."`. Binds profile P05 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch05.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(5)
}
