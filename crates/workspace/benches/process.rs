//! The cost of one trivial `bash -c true` call, start to end, on a quiet and a busy machine,
//! with the sandbox and without it.
//!
//! ```sh
//! cargo build --profile bench -p agent-sandbox   # the helper, next to the bench binary's folder
//! cargo bench -p agent-workspace --bench process
//! ```
//!
//! `background` is how many extra processes (`sleep 600`, started by the bench and all killed
//! after) run on the machine: without the sandbox a call's end sweeps `/proc` and costs more
//! as the machine gets busier; in the sandbox it ends by killing its init, whatever runs.

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use agent_sandbox::{Mode, Network, Sandbox};
use agent_workspace::Workspace;
use agent_workspace::process::{Command, Stdin};
use divan::Bencher;

fn main() {
    divan::main();
}

/// Extra processes on the machine while a benchmark runs; killed when dropped.
struct Load(Vec<Child>);

impl Load {
    fn new(count: usize) -> Self {
        Self(
            (0..count)
                .filter_map(|_| {
                    std::process::Command::new("sleep")
                        .arg("600")
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .ok()
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The `agent-sandbox` helper: `AGENT_SANDBOX_HELPER`, or next to the folder of this binary
/// (`target/release/deps/process-…` → `target/release/agent-sandbox`).
fn helper() -> PathBuf {
    std::env::var_os("AGENT_SANDBOX_HELPER")
        .map(PathBuf::from)
        .or_else(|| {
            let exe = std::env::current_exe().ok()?;
            Some(exe.parent()?.parent()?.join("agent-sandbox"))
        })
        .unwrap_or_default()
}

fn call(bencher: Bencher, background: usize, sandbox: Sandbox) {
    let _load = Load::new(background);
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("temp dir: {err}"));
    let ws = Workspace::new(dir.path()).unwrap_or_else(|err| panic!("workspace: {err}"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|err| panic!("runtime: {err}"));
    bencher.bench_local(|| {
        rt.block_on(async {
            Command::shell(&ws, "true")
                .sandbox(sandbox.clone())
                .spawn(Stdin::Null)
                .unwrap_or_else(|err| panic!("spawn: {err}"))
                .run(None, Duration::from_secs(10), 1000)
                .await
                .unwrap_or_else(|err| panic!("run: {err}"))
        })
    });
}

#[divan::bench(args = [0, 1000, 3000], sample_count = 100, sample_size = 1)]
fn bash_true_sandboxed(bencher: Bencher, background: usize) {
    call(
        bencher,
        background,
        Sandbox::new(Mode::WorkspaceWrite, Network::Off).with_helper(helper()),
    );
}

#[divan::bench(args = [0, 1000, 3000], sample_count = 100, sample_size = 1)]
fn bash_true_unsandboxed(bencher: Bencher, background: usize) {
    call(bencher, background, Sandbox::new(Mode::Off, Network::Off));
}
