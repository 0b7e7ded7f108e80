//! `agent-sandbox`: the sandbox helper as a program of its own, for programs that are not
//! `agent-tutorial` (test binaries, other embedders): `agent-sandbox __agent-sandbox …` is what
//! the agent runs; `agent-sandbox check` prints what this machine supports.

fn main() -> std::process::ExitCode {
    agent_sandbox::enter_if_helper();
    if std::env::args().nth(1).as_deref() == Some("check") {
        let me = std::path::PathBuf::from("/proc/self/exe");
        print!("{}", agent_sandbox::support(&me).summary());
        return std::process::ExitCode::SUCCESS;
    }
    eprintln!("usage: agent-sandbox check");
    std::process::ExitCode::from(2)
}
