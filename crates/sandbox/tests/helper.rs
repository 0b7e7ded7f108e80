//! The helper binary on the real kernel, started the way the agent starts it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use agent_sandbox::{HELPER_ARG, Level, Mode, Network, Plan};

const HELPER: &str = env!("CARGO_BIN_EXE_agent-sandbox");

fn plan(level: Level, mode: Mode) -> Plan {
    Plan {
        level,
        helper: Some(HELPER.into()),
        mode,
        network: Network::Off,
    }
}

/// The helper's argv for `bash -c line` in `ws`, as `Plan::argv` builds it.
fn helper_command(plan: &Plan, ws: &Path, line: &str) -> Command {
    let tmp = ws.join(format!("tmp-{}", line.len()));
    let (program, args) = plan.argv(ws, Some(&tmp), "bash".as_ref(), &["-c".into(), line.into()]);
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(ws);
    cmd
}

#[test]
fn the_helper_outlives_the_thread_that_started_it() {
    // PR_SET_PDEATHSIG would kill it when that thread ended; the helper watches the process.
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(Level::Namespaces, Mode::WorkspaceWrite);
    let mut cmd = helper_command(&plan, dir.path(), "sleep 0.3; echo survived > out.txt");
    let mut child = std::thread::spawn(move || cmd.spawn().unwrap())
        .join()
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "survived\n"
    );
}

#[test]
fn exit_codes_and_signals_come_back_as_the_command_left() {
    let dir = tempfile::tempdir().unwrap();
    for level in [Level::Namespaces, Level::Landlock] {
        let plan = plan(level, Mode::WorkspaceWrite);
        let code = helper_command(&plan, dir.path(), "exit 7")
            .status()
            .unwrap()
            .code();
        let signal = std::os::unix::process::ExitStatusExt::signal(
            &helper_command(&plan, dir.path(), "kill -TERM $$")
                .status()
                .unwrap(),
        );
        assert_eq!((code, signal), (Some(7), Some(libc::SIGTERM)), "{level:?}");
    }
}

#[test]
fn the_plan_runs_the_command_itself_when_unconfined() {
    let plan = Plan {
        level: Level::Unconfined,
        helper: None,
        mode: Mode::Off,
        network: Network::On,
    };
    let (program, args) = plan.argv(Path::new("/ws"), None, "git".as_ref(), &["status".into()]);
    assert_eq!((program, args), ("git".into(), vec!["status".into()]));
    assert_eq!(plan.refusal_hint(), None);
}

#[test]
fn the_helper_refuses_arguments_it_does_not_know() {
    let out = Command::new(HELPER)
        .args([
            HELPER_ARG,
            "everything",
            "off",
            "namespaces",
            "1",
            "/",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()),
        (
            Some(125),
            "agent-sandbox: usage: __agent-sandbox MODE NETWORK LEVEL PARENT WORKSPACE TMP -- PROGRAM [ARG…]\n"
                .to_string()
        )
    );
}

#[test]
fn modes_and_network_settings_parse_their_command_line_words() {
    let modes: Vec<Mode> = ["read-only", "workspace-write", "repository-write", "off"]
        .iter()
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(
        modes,
        [
            Mode::ReadOnly,
            Mode::WorkspaceWrite,
            Mode::RepositoryWrite,
            Mode::Off
        ]
    );
    assert_eq!("on".parse::<Network>().unwrap(), Network::On);
    assert_eq!(
        "full".parse::<Mode>().unwrap_err().to_string(),
        "unknown sandbox mode `full` (expected one of: read-only, workspace-write, repository-write, off)"
    );
}

#[test]
fn repository_write_opens_git_and_nothing_outside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    let line = format!(
        "for p in .git/config {}/x; do if echo changed > $p 2>/dev/null; then echo \"$p: written\"; \
         else echo \"$p: refused\"; fi; done",
        outside.path().display()
    );
    let mut seen = Vec::new();
    for mode in [Mode::WorkspaceWrite, Mode::RepositoryWrite] {
        let out = helper_command(&plan(Level::Namespaces, mode), dir.path(), &line)
            .output()
            .unwrap();
        seen.push(
            String::from_utf8_lossy(&out.stdout)
                .replace(&outside.path().display().to_string(), "<outside>"),
        );
    }
    assert_eq!(
        seen,
        [
            ".git/config: refused\n<outside>/x: refused\n",
            ".git/config: written\n<outside>/x: refused\n",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".git/config")).unwrap(),
        "changed\n"
    );
}
