//! Chapter 16: `just ch16 --prompt "..."`. Binds profile P16 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch16.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(16)
}
