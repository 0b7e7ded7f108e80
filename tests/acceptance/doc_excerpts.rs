//! The code the chapter pages quote is the code in the repository.
//!
//! A page quotes code as a ```` ```rust ```` block after a line link such as
//! `[runner.rs:317](../crates/core/src/runner.rs#L317)`. The convention:
//!
//! - A block is made of segments, split at elision lines (`// …`); a segment is lines of the
//!   named file, verbatim and consecutive (trailing spaces aside).
//! - The links since the previous block name the segments of the blocks that follow (only
//!   blank lines between them), in order: the k-th link's line is the first line of the k-th
//!   segment. Segments past the last link come from the last link's file, later in it.
//! - A block whose first line is `// simplified` is exempt: it shows the idea, not the code, and
//!   says so.
//!
//! One test reads every page (English and 中文) and reports every mismatch at once.
//!
//! A second test checks that every page and source file points only at what the repository
//! has: relative links and repository paths named in code lead to files that exist, and
//! nothing cites a document or tracker outside it.
//!
//! This file: the checks, as tests. How a page's quotes and links are read is the submodule
//! `parsing`, how its references are found `references` (both in
//! `tests/acceptance/doc_excerpts/`); the small tests of `references` stay here, so that their
//! names (`doc_excerpts::…`) are the ones they had before the split.

mod parsing;
mod references;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use parsing::{SIMPLIFIED, Segment, quotes};
use references::{all_pages, chapter_pages, cited_issue, code_paths, relative_links, rust_files};

/// Where `segment` occurs in `file` (1-based first lines), as consecutive lines.
fn occurrences(file: &[&str], segment: &Segment) -> Vec<usize> {
    let want = &segment.lines;
    if want.is_empty() || want.len() > file.len() {
        return Vec::new();
    }
    (0..=file.len() - want.len())
        .filter(|&at| {
            want.iter()
                .zip(&file[at..])
                .all(|(w, f)| w.as_str() == f.trim_end())
        })
        .map(|at| at + 1)
        .collect()
}

/// The mismatches of one page, one line each.
fn check_page(page: &Path, root: &Path) -> Vec<String> {
    let name = page
        .strip_prefix(root)
        .unwrap_or(page)
        .display()
        .to_string();
    let text = std::fs::read_to_string(page).unwrap();
    let mut problems = Vec::new();
    for quote in quotes(&text) {
        let first_line = quote.segments.first().map_or(0, |s| s.page_line);
        let Some(last_link) = quote.links.last() else {
            if !quote.segments.is_empty() {
                problems.push(format!(
                    "{name}:{first_line}: a quoted block with no line link before it"
                ));
            }
            continue;
        };
        if quote.links.len() > quote.segments.len() && !quote.simplified {
            problems.push(format!(
                "{name}:{first_line}: {} links for {} quoted segments",
                quote.links.len(),
                quote.segments.len()
            ));
        }
        // Segments past the last link continue in its file, after the previous segment.
        let mut after = 0;
        for (n, segment) in quote.segments.iter().enumerate() {
            let link = quote.links.get(n).unwrap_or(last_link);
            let path: PathBuf = page.parent().unwrap().join(&link.path);
            let Ok(source) = std::fs::read_to_string(&path) else {
                problems.push(format!(
                    "{name}:{}: {} does not exist",
                    segment.page_line, link.path
                ));
                continue;
            };
            let file: Vec<&str> = source.lines().collect();
            let found = occurrences(&file, segment);
            let here = match quote.links.get(n) {
                Some(link) => found.iter().copied().find(|&at| at == link.line),
                None => found.iter().copied().find(|&at| at > after),
            };
            match (here, found.as_slice()) {
                (Some(at), _) => after = at,
                (None, []) => problems.push(format!(
                    "{name}:{}: these lines are not in {} as quoted (mark the block `{SIMPLIFIED}` if it is not the code)",
                    segment.page_line, link.path
                )),
                (None, found) => {
                    problems.push(format!(
                        "{name}:{}: the quoted lines are at {} line {found:?}, the link says {}",
                        segment.page_line,
                        link.path,
                        quote.links.get(n).map_or(0, |l| l.line)
                    ));
                    after = found[0];
                }
            }
        }
    }
    problems
}

#[test]
fn every_quoted_excerpt_is_the_code_at_its_line_link() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pages = chapter_pages(&root);
    let mut report = String::new();
    let mut quoted = 0;
    for page in &pages {
        quoted += quotes(&std::fs::read_to_string(page).unwrap()).len();
        for problem in check_page(page, &root) {
            let _ = writeln!(report, "{problem}");
        }
    }
    assert!(quoted > 0, "no quoted code found under {}", root.display());
    assert!(
        report.is_empty(),
        "quoted code that is not the code at its link:\n{report}"
    );
}

#[test]
fn docs_and_comments_point_only_at_files_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut problems = Vec::new();
    for page in all_pages(&root) {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page
            .strip_prefix(&root)
            .unwrap_or(&page)
            .display()
            .to_string();
        for target in relative_links(&text) {
            if !page.parent().unwrap().join(&target).exists() {
                problems.push(format!("{name}: link to {target}, which does not exist"));
            }
        }
        if text.contains(concat!("DESIGN", " §")) {
            problems.push(format!(
                "{name}: cites the design notes, a document outside the repository"
            ));
        }
        for path in code_paths(&text) {
            if !root.join(&path).exists() {
                problems.push(format!("{name}: names {path}, which does not exist"));
            }
        }
    }
    let mut sources = vec![root.join("Cargo.toml"), root.join("justfile")];
    for dir in ["crates", "chapters", "tests"] {
        rust_files(&root.join(dir), &mut sources);
    }
    for source in sources {
        let text = std::fs::read_to_string(&source).unwrap();
        let name = source.strip_prefix(&root).unwrap_or(&source).display();
        // Split so that this file does not name what it looks for.
        if text.contains(concat!("DESIGN", " §")) {
            problems.push(format!(
                "{name}: cites the design notes, a document outside the repository"
            ));
        }
        if let Some(number) = cited_issue(&text) {
            problems.push(format!(
                "{name}: cites issue {number} of a tracker outside the repository; say what it was instead"
            ));
        }
    }
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn an_issue_number_is_found_in_any_case() {
    assert_eq!(cited_issue(concat!("see Iss", "ue 25 item 3")), Some(25));
    assert_eq!(cited_issue("an issue with the cache (no number)"), None);
}

#[test]
fn links_in_code_are_not_links() {
    let page = "See [a](a.md#x) and `[b](b.md)`.\n```text\n[c](c.md)\n```\n[d](https://e) [f](#g) [h](../h.rs#L3)\n";
    assert_eq!(relative_links(page), vec!["a.md", "../h.rs"]);
}

#[test]
fn repository_paths_in_inline_code_are_found() {
    let page = "In `crates/core/src/runner.rs`, `tests/acceptance/chNN.rs`, `cargo test`, `docs/x.md`.\n```sh\ncat `crates/no.rs`\n```\n";
    assert_eq!(
        code_paths(page),
        vec!["crates/core/src/runner.rs", "docs/x.md"]
    );
}
