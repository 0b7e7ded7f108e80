//! Chapter 11: `just ch11 --prompt "..."`. Binds profile P11 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch11.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(11)
}
