//! How a page is read: its `sh offline` blocks (fences as CommonMark has them, the info
//! string's `exit=N`), the `text expected` block that belongs to each, and what an expected
//! line matches (`[…]` elisions).
//!
//! Apart from running the blocks because it is pure text in, values out: the convention the
//! pages follow is pinned here by small tests on made-up pages, without running anything.

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
