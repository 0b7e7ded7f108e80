//! Chapter 15: `just ch15 --prompt "..."`. Binds profile P15 and runs the shared CLI;
//! everything the chapter teaches lives in the shared crates (see `docs/ch15.md`).

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::chapter_main(15)
}
