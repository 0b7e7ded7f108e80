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
//!
//! This file: which pages, in which order, and the two tests. How a page is read (its blocks
//! and what an expected line matches) is the submodule `extraction`, with its own tests; how a
//! block is run and a failure reported is `running` (both in `tests/acceptance/docs/`).

mod extraction;
mod running;

use std::path::{Path, PathBuf};

use running::{run_page_in, scratch};

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
