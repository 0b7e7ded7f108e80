//! The docs run as written: every fenced block whose info string is `sh offline` in
//! `README.md`, `README.zh.md`, `docs/*.md` and `docs/zh/*.md` is executed, and its exit code
//! and the lines of the `text expected` block after it are checked.
//!
//! The convention (also in `docs/scripts.md`):
//!
//! - A page's blocks run in order, each with `bash -euo pipefail -c`, in ONE fresh copy of
//!   `examples/workspace/` per page, which is the working directory: a later block sees what an
//!   earlier one left.
//! - `PATH` starts with the folder of the built binaries (`agent-tutorial`, `ch01` … `ch10`);
//!   `$SCRIPTS` is the absolute path of `examples/scripts/`; `XDG_CONFIG_HOME` and `HOME` point
//!   into the scratch area; `OPENAI_*` and `RUST_LOG` are unset.
//! - The block must exit 0, unless the info string says otherwise: `sh offline exit=2`.
//! - A `text expected` block right after it (only blank lines between) lists lines; each
//!   non-empty line must BE one whole line of the block's stdout or stderr (trailing spaces
//!   aside), verbatim. `[…]` in an expected line stands for an elided part (any text, also
//!   none): `[memory] selected: […]` matches any selection. Nothing else is left out silently.
//!
//! Two tests: every page in a fresh copy of its own (each page can be read alone), and the
//! reader's path — `README.md`, then `docs/ch01.md` … the last chapter, in order, in ONE copy,
//! as a reader who made one scratch folder works through them (the same for 中文). Each reports
//! every failing block at once.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A block that runs longer than this is killed and reported.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);

/// How many trailing lines of stdout and stderr a failure report shows.
const TAIL_LINES: usize = 15;

/// One `sh offline` block of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The 1-based line of the opening fence.
    pub line: usize,
    pub code: String,
    /// The exit code the block must end with.
    pub exit: i32,
    /// The lines of the `text expected` block after it, empty lines dropped.
    pub expected: Vec<String>,
}

/// A fenced block as it appears on the page.
#[derive(Debug)]
struct Fenced {
    line: usize,
    /// The line after the closing fence (1-based), to see whether the next block follows it.
    end: usize,
    info: String,
    body: String,
}

/// The opening fence of `line`, if any: the fence text (``` or ~~~, 3 or more) and the info
/// string. A fence indented by 4 spaces or more is text of an indented code block, not a fence.
fn opening_fence(line: &str) -> Option<(String, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let fence: String = rest.chars().take_while(|c| *c == ch).collect();
    if fence.len() < 3 {
        return None;
    }
    let info = rest[fence.len()..].trim().to_string();
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((fence, info))
}

fn is_closing_fence(line: &str, fence: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = line.trim();
    let ch = fence.chars().next().unwrap_or('`');
    rest.len() >= fence.len() && rest.chars().all(|c| c == ch)
}

fn fenced_blocks(markdown: &str) -> Vec<Fenced> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((fence, info)) = opening_fence(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i;
        let mut body = String::new();
        i += 1;
        while i < lines.len() && !is_closing_fence(lines[i], &fence) {
            body.push_str(lines[i]);
            body.push('\n');
            i += 1;
        }
        // Past the closing fence (or the end of the page, which closes an open block).
        i += 1;
        out.push(Fenced {
            line: start + 1,
            end: i + 1,
            info,
            body,
        });
    }
    out
}

/// What an info string asks for: `Some(exit)` for `sh offline [exit=N]`, `None` for any other
/// block; an error for a `sh offline` block with words it does not know.
fn offline_exit(info: &str) -> Result<Option<i32>, String> {
    let mut words = info.split_whitespace();
    if words.next() != Some("sh") || words.next() != Some("offline") {
        return Ok(None);
    }
    let mut exit = 0;
    for word in words {
        match word.strip_prefix("exit=").map(str::parse::<i32>) {
            Some(Ok(code)) => exit = code,
            _ => return Err(format!("unknown word `{word}` in the info string `{info}`")),
        }
    }
    Ok(Some(exit))
}

fn is_expected(info: &str) -> bool {
    info.split_whitespace().collect::<Vec<_>>() == ["text", "expected"]
}

/// The `sh offline` blocks of a page, each with its expected lines. An error names the line of
/// a block that breaks the convention (bad info string, `text expected` after no `sh offline`).
pub fn blocks(markdown: &str) -> Result<Vec<Block>, String> {
    let fenced = fenced_blocks(markdown);
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out: Vec<Block> = Vec::new();
    // The end line of the last `sh offline` block still waiting for its expected block.
    let mut open: Option<usize> = None;
    for block in &fenced {
        if is_expected(&block.info) {
            let follows = open.is_some_and(|end| {
                (end..block.line).all(|n| lines.get(n - 1).is_none_or(|l| l.trim().is_empty()))
            });
            if !follows {
                return Err(format!(
                    "line {}: a `text expected` block must follow a `sh offline` block (only blank lines between)",
                    block.line
                ));
            }
            if let Some(last) = out.last_mut() {
                last.expected = block
                    .body
                    .lines()
                    .map(str::trim_end)
                    .filter(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect();
            }
            open = None;
            continue;
        }
        open = None;
        match offline_exit(&block.info) {
            Ok(Some(exit)) => {
                out.push(Block {
                    line: block.line,
                    code: block.body.clone(),
                    exit,
                    expected: Vec::new(),
                });
                open = Some(block.end);
            }
            Ok(None) => {}
            Err(err) => return Err(format!("line {}: {err}", block.line)),
        }
    }
    Ok(out)
}

/// The repository's top folder.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages the test runs: the READMEs, then `docs/` and `docs/zh/`, each folder sorted.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["README.md", "README.zh.md"]
        .iter()
        .map(|p| root.join(p))
        .filter(|p| p.is_file())
        .collect();
    for dir in ["docs", "docs/zh"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut md: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
            .collect();
        md.sort();
        out.extend(md);
    }
    out
}

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

/// The marker for an elided part of an expected line.
pub const ELIDED: &str = "[…]";

/// Whether the output line `got` is the expected line `want`: equal, trailing spaces aside, or
/// with each `[…]` of `want` standing for any text.
pub fn line_matches(want: &str, got: &str) -> bool {
    let got = got.trim_end();
    let parts: Vec<&str> = want.split(ELIDED).collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return want == got;
    };
    if middle.is_empty() && parts.len() == 1 {
        return want == got;
    }
    let Some(mut rest) = got.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
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
struct Scratch {
    dir: tempfile::TempDir,
    cwd: PathBuf,
}

fn scratch(root: &Path) -> Scratch {
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
fn run_page_in(
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

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_agent-tutorial"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn every_offline_block_in_the_docs_runs_as_written() {
    let root = repo_root();
    let bin_dir = bin_dir();
    let mut report = String::new();
    let mut ran = 0;
    for page in pages(&root) {
        ran += run_page_in(&page, &root, &bin_dir, &scratch(&root), &mut report);
    }
    // The README has offline blocks: finding none means the test looked in the wrong place.
    assert!(
        ran > 0,
        "no `sh offline` block found under {}",
        root.display()
    );
    assert!(
        report.is_empty(),
        "doc blocks that fail as written:\n\n{report}"
    );
}

/// The reader's path of one language: the README, then every chapter page in order.
fn readers_path(root: &Path, readme: &str, docs: &str) -> Vec<PathBuf> {
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root.join(docs))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ch") && n.ends_with(".md"))
        })
        .collect();
    chapters.sort();
    std::iter::once(root.join(readme)).chain(chapters).collect()
}

#[test]
fn the_readers_path_runs_in_one_folder() {
    let root = repo_root();
    let bin_dir = bin_dir();
    let mut report = String::new();
    for (readme, docs) in [("README.md", "docs"), ("README.zh.md", "docs/zh")] {
        let path = readers_path(&root, readme, docs);
        // README and chapters 1 to 14 at least: a shorter path means the pages moved.
        assert!(path.len() >= 15, "{readme}: {path:?}");
        let scratch = scratch(&root);
        for page in &path {
            run_page_in(page, &root, &bin_dir, &scratch, &mut report);
        }
    }
    assert!(
        report.is_empty(),
        "on the reader's path (README, then chapter 1, 2, … in one folder), blocks that fail:\n\n{report}"
    );
}

mod extraction {
    use super::{Block, blocks, line_matches};

    #[test]
    fn an_expected_line_is_a_whole_line_with_explicit_elisions() {
        let cases = [
            ("[result] ok", "[result] ok", true),
            ("[result] ok", "[result] ok   ", true),
            ("[result] ok", "[result] ok: 2 files", false),
            ("result] ok", "[result] ok", false),
            (" INFO request", "INFO request", false),
            ("[result] ok[…]", "[result] ok: 2 files", true),
            ("[…] more missed runs", "756 more missed runs", true),
            ("a […] c […] e", "a b c d e", true),
            ("a […] c […] e", "a b d e", false),
            ("ab[…]ba", "aba", false),
        ];
        for (want, got, matches) in cases {
            assert_eq!(line_matches(want, got), matches, "{want:?} vs {got:?}");
        }
    }

    fn block(line: usize, code: &str, exit: i32, expected: &[&str]) -> Block {
        Block {
            line,
            code: code.to_string(),
            exit,
            expected: expected.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn only_sh_offline_blocks_are_taken_with_their_exit_code() {
        let page = "\
# T

```sh
not run
```

```sh offline
ch01 --help
```

```rust
fn main() {}
```

```sh offline exit=2
agent-tutorial prompt --chapter 1 --diff
echo done
```

``` sh   offline  
spaced
```

```shell offline
not ours
```
";
        assert_eq!(
            blocks(page).unwrap(),
            vec![
                block(7, "ch01 --help\n", 0, &[]),
                block(
                    15,
                    "agent-tutorial prompt --chapter 1 --diff\necho done\n",
                    2,
                    &[]
                ),
                block(20, "spaced\n", 0, &[]),
            ]
        );
    }

    #[test]
    fn the_expected_block_right_after_belongs_to_it() {
        let page = "\
```sh offline
ch01 --prompt x
```

```text expected
[tool] bash {\"command\":\"ls\"}

  [result] ok
```
Text.
```text
not expected lines
```
";
        assert_eq!(
            blocks(page).unwrap(),
            vec![block(
                1,
                "ch01 --prompt x\n",
                0,
                &["[tool] bash {\"command\":\"ls\"}", "  [result] ok"]
            )]
        );
    }

    #[test]
    fn an_expected_block_after_text_or_after_nothing_is_an_error() {
        let after_text = "```sh offline\ntrue\n```\nSome words.\n```text expected\nx\n```\n";
        assert_eq!(
            blocks(after_text).unwrap_err(),
            "line 5: a `text expected` block must follow a `sh offline` block (only blank lines between)"
        );
        let alone = "```text expected\nx\n```\n";
        assert_eq!(
            blocks(alone).unwrap_err(),
            "line 1: a `text expected` block must follow a `sh offline` block (only blank lines between)"
        );
    }

    #[test]
    fn a_bad_exit_word_is_an_error() {
        assert_eq!(
            blocks("```sh offline exit=two\ntrue\n```\n").unwrap_err(),
            "line 1: unknown word `exit=two` in the info string `sh offline exit=two`"
        );
    }

    #[test]
    fn fences_in_indented_code_and_longer_fences_are_respected() {
        let page = [
            "    ```sh offline",
            "    indented: an example of the convention, not a block",
            "    ```",
            "",
            "````md",
            "```sh offline",
            "inside a longer fence",
            "```",
            "````",
            "",
            "~~~sh offline",
            "tilde",
            "~~~",
        ]
        .join("\n");
        assert_eq!(blocks(&page).unwrap(), vec![block(11, "tilde\n", 0, &[])]);
    }
}
