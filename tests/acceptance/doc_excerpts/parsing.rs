//! How a page's quotes are read: the line links (`[x.rs:N](path#LN)`), the `rust` blocks after
//! them split into segments at `// …`, and the `// simplified` mark.
//!
//! Apart from the check because it is pure text in, values out, pinned by its own test on a
//! made-up page; the check then compares these values with the files.

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
