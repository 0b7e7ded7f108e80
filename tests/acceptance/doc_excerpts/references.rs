//! What a page or a source file points at: relative link targets, repository paths named in
//! inline code, cited issue numbers, and the lists of pages and source files to look in.
//!
//! Apart from the quoted excerpts (`parsing`) because these are references, not quotes: they
//! must lead somewhere that exists, whatever the text around them says.

use std::path::{Path, PathBuf};

/// The lines of a page outside its fenced blocks.
fn unfenced(markdown: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    markdown.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The page's prose: fenced blocks and inline code spans left out (a link shown as code is
/// not a link).
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    for line in unfenced(markdown) {
        // Every other piece between backticks is code.
        for (n, piece) in line.split('`').enumerate() {
            if n % 2 == 0 {
                out.push_str(piece);
            }
        }
        out.push('\n');
    }
    out
}

/// The relative link targets of a page (`](target)`), without their `#anchor`; web links,
/// pure anchors and links shown as code left out.
pub fn relative_links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let text = prose(markdown);
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target.to_string());
        }
        rest = &rest[end..];
    }
    out
}

/// The repository paths a page names in inline code (`crates/core/src/runner.rs`): those
/// starting with a top folder of the repository, without placeholders (`chNN`, `<id>`, `*`).
pub fn code_paths(markdown: &str) -> Vec<String> {
    const TOP: [&str; 6] = [
        "crates/",
        "tests/",
        "scripts/",
        "examples/",
        "chapters/",
        "docs/",
    ];
    let mut out = Vec::new();
    for line in unfenced(markdown) {
        for (n, piece) in line.split('`').enumerate() {
            let path = piece.trim_end_matches('.');
            let plain = path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
            if n % 2 == 1
                && plain
                && !path.contains("NN")
                && TOP.iter().any(|top| path.starts_with(top))
            {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// Every page a reader gets: the READMEs, AGENTS.md, docs/ and docs/zh/.
pub fn all_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = ["README.md", "README.zh.md", "AGENTS.md"]
        .iter()
        .map(|p| root.join(p))
        .collect();
    pages.extend(chapter_pages(root));
    pages
}

/// The pages under docs/ and docs/zh/, each folder's in name order.
pub fn chapter_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = Vec::new();
    for dir in ["docs", "docs/zh"] {
        let mut md: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        md.sort();
        pages.extend(md);
    }
    pages
}

/// Every Rust source file under `dir`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The number of the first "issue N" in `text`, any case: a reader of the repository cannot
/// open the tracker it names.
pub fn cited_issue(text: &str) -> Option<u32> {
    let lower = text.to_ascii_lowercase();
    // Split so that this file does not name what it looks for.
    let word = concat!("iss", "ue ");
    lower.match_indices(word).find_map(|(at, _)| {
        let digits: String = lower[at + word.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}
