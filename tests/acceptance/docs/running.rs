//! How a block runs and how a failure is told: a scratch copy of the example workspace per
//! page (or per reader's path), `bash -euo pipefail` with the binaries first on `PATH` and a
//! timeout, and a report naming the page, the block, the exit code, the missing lines and the
//! tail of the output.
//!
//! Apart from the page reading (`extraction.rs`) because this is the part with side effects:
//! processes, temp dirs, the environment a block sees.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::extraction::{blocks, line_matches};

/// A block that runs longer than this is killed and reported.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);

/// How many trailing lines of stdout and stderr a failure report shows.
const TAIL_LINES: usize = 15;

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// What one block did.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

/// Runs `code` with `bash -euo pipefail` in `cwd`, the binaries first on `PATH`.
fn run_block(code: &str, cwd: &Path, scratch: &Path, bin_dir: &Path, scripts: &Path) -> Ran {
    let out_path = scratch.join("stdout");
    let err_path = scratch.join("stderr");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.args(["-euo", "pipefail", "-c", code])
        .current_dir(cwd)
        .env("PATH", path)
        .env("SCRIPTS", scripts)
        .env("XDG_CONFIG_HOME", scratch.join("config"))
        .env("HOME", scratch.join("home"))
        .env_remove("RUST_LOG")
        // Chapter 17's board is the workspace's SQLite file.
        .env_remove("AGENT_TUTORIAL_BOARD")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap());
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            cmd.env_remove(key);
        }
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break (Some(status), false);
        }
        if started.elapsed() > BLOCK_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    Ran {
        code: status.and_then(|s| s.code()),
        stdout: read(&out_path),
        stderr: read(&err_path),
        timed_out,
    }
}

/// The expected lines that are no whole line of stdout or stderr.
fn missing<'a>(expected: &'a [String], stdout: &str, stderr: &str) -> Vec<&'a str> {
    expected
        .iter()
        .filter(|want| {
            !stdout
                .lines()
                .chain(stderr.lines())
                .any(|line| line_matches(want, line))
        })
        .map(String::as_str)
        .collect()
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    lines[from..]
        .iter()
        .map(|l| format!("      | {l}\n"))
        .collect()
}

/// A scratch area: a copy of the example workspace (`workspace/`, the blocks' working
/// directory) and the `config/` and `home/` folders the blocks' environment points to.
pub(super) struct Scratch {
    dir: tempfile::TempDir,
    cwd: PathBuf,
}

pub(super) fn scratch(root: &Path) -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("workspace");
    copy_dir(&root.join("examples/workspace"), &cwd).unwrap();
    std::fs::create_dir_all(dir.path().join("config")).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    Scratch { dir, cwd }
}

fn page_name(page: &Path, root: &Path) -> String {
    page.strip_prefix(root)
        .unwrap_or(page)
        .display()
        .to_string()
}

/// Runs one page's blocks in `scratch`; failures appended to `report`. Returns how many
/// blocks ran.
pub(super) fn run_page_in(
    page: &Path,
    root: &Path,
    bin_dir: &Path,
    scratch: &Scratch,
    report: &mut String,
) -> usize {
    let name = page_name(page, root);
    let text = std::fs::read_to_string(page).unwrap();
    let blocks = match blocks(&text) {
        Ok(blocks) => blocks,
        Err(err) => {
            let _ = writeln!(report, "{name}: {err}\n");
            return 0;
        }
    };
    let scripts = root
        .join("examples/scripts")
        .canonicalize()
        .unwrap_or_else(|_| root.join("examples/scripts"));
    for (n, block) in blocks.iter().enumerate() {
        let ran = run_block(
            &block.code,
            &scratch.cwd,
            scratch.dir.path(),
            bin_dir,
            &scripts,
        );
        let missing = missing(&block.expected, &ran.stdout, &ran.stderr);
        if ran.code == Some(block.exit) && missing.is_empty() {
            continue;
        }
        let first = block.code.lines().next().unwrap_or("");
        let _ = writeln!(
            report,
            "{name} block {} (line {}): {first}",
            n + 1,
            block.line
        );
        let got = match (ran.timed_out, ran.code) {
            (true, _) => format!("killed after {}s", BLOCK_TIMEOUT.as_secs()),
            (false, Some(code)) => format!("exit {code}"),
            (false, None) => "killed by a signal".to_string(),
        };
        let _ = writeln!(report, "  wanted exit {}, got {got}", block.exit);
        for line in &missing {
            let _ = writeln!(report, "  missing: {line}");
        }
        let _ = write!(
            report,
            "  stdout (tail):\n{}  stderr (tail):\n{}\n",
            tail(&ran.stdout),
            tail(&ran.stderr)
        );
    }
    blocks.len()
}
