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

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The line that splits a quoted block into segments.
pub const ELISION: &str = "// …";
/// The first line of a block that does not quote the code verbatim.
pub const SIMPLIFIED: &str = "// simplified";

/// A line link to a Rust file: the path as written (relative to the page) and the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineLink {
    pub path: String,
    pub line: usize,
}

/// One quoted segment: the page line of its first line, and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub page_line: usize,
    pub lines: Vec<String>,
}

/// A run of consecutive `rust` blocks and the links that name their code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    pub links: Vec<LineLink>,
    pub segments: Vec<Segment>,
    /// A block of it is marked `// simplified`: its link names the code it stands for.
    pub simplified: bool,
}

/// The links `[...](path.rs#LN)` in `line`.
fn links_in(line: &str) -> Vec<LineLink> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if let Some((path, anchor)) = target.split_once("#L")
            && path.ends_with(".rs")
            && let Ok(line) = anchor.parse::<usize>()
        {
            out.push(LineLink {
                path: path.to_string(),
                line,
            });
        }
        rest = &rest[end..];
    }
    out
}

/// The segments of a block body starting at page line `first`; `None` for a simplified block.
fn segments(body: &[&str], first: usize) -> Option<Vec<Segment>> {
    if body.first().map(|l| l.trim()) == Some(SIMPLIFIED) {
        return None;
    }
    let mut out = vec![Segment {
        page_line: first,
        lines: Vec::new(),
    }];
    for (n, line) in body.iter().enumerate() {
        if line.trim() == ELISION {
            out.push(Segment {
                page_line: first + n + 1,
                lines: Vec::new(),
            });
        } else if let Some(last) = out.last_mut() {
            last.lines.push(line.trim_end().to_string());
        }
    }
    out.retain(|s| s.lines.iter().any(|l| !l.is_empty()));
    Some(out)
}

/// Every quote of a page.
pub fn quotes(markdown: &str) -> Vec<Quote> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out: Vec<Quote> = Vec::new();
    let mut links: Vec<LineLink> = Vec::new();
    // Whether the last thing seen was a rust block (blank lines aside): the next one continues
    // its quote.
    let mut continuing = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some(info) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                continuing = false;
                links.extend(links_in(line));
            }
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].starts_with("```") {
            end += 1;
        }
        if info.trim() == "rust" {
            let segs = segments(&lines[start..end], start + 1);
            let simplified = segs.is_none();
            if continuing && let Some(last) = out.last_mut() {
                last.segments.extend(segs.unwrap_or_default());
                last.simplified |= simplified;
            } else {
                out.push(Quote {
                    links: std::mem::take(&mut links),
                    segments: segs.unwrap_or_default(),
                    simplified,
                });
            }
            continuing = true;
        } else {
            continuing = false;
            links.clear();
        }
        i = end + 1;
    }
    out
}

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

mod parsing {
    use super::{LineLink, Quote, Segment, quotes};

    fn link(path: &str, line: usize) -> LineLink {
        LineLink {
            path: path.to_string(),
            line,
        }
    }

    fn segment(page_line: usize, lines: &[&str]) -> Segment {
        Segment {
            page_line,
            lines: lines.iter().map(|l| l.to_string()).collect(),
        }
    }

    #[test]
    fn links_name_the_segments_of_the_blocks_that_follow() {
        let page = "\
`merge` ([a.rs:4](../a.rs#L4), [a.rs:9](../a.rs#L9)):

```rust
fn a() {}
```

```rust
fn b() {}
// …
fn c() {}
```

Text.

```rust
// simplified
fn d() {}
```

```sh
not rust
```
";
        assert_eq!(
            quotes(page),
            vec![
                Quote {
                    links: vec![link("../a.rs", 4), link("../a.rs", 9)],
                    segments: vec![
                        segment(4, &["fn a() {}"]),
                        segment(8, &["fn b() {}"]),
                        segment(10, &["fn c() {}"]),
                    ],
                    simplified: false,
                },
                Quote {
                    links: vec![],
                    segments: vec![],
                    simplified: true,
                },
            ]
        );
    }
}

/// The page's prose: fenced blocks and inline code spans left out (a link shown as code is
/// not a link).
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
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
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
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
fn all_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = ["README.md", "README.zh.md", "AGENTS.md"]
        .iter()
        .map(|p| root.join(p))
        .collect();
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
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
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

/// The number of the first "issue N" in `text`, any case: a reader of the repository cannot
/// open the tracker it names.
fn cited_issue(text: &str) -> Option<u32> {
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
