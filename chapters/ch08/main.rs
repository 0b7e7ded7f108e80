//! Chapter 8: `just ch08 --prompt "..."`. Binds profile P08 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch08.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(8)
}
