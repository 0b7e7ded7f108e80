//! The `agent-tutorial` binary; everything lives in the library so tests can reach it.

fn main() -> std::process::ExitCode {
    agent_tutorial::cli::main()
}
