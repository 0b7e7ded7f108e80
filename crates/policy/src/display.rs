//! Showing a call to a person exactly as it will run.
//!
//! The approval question is the user's only view of what the model wants to run, so it must
//! not be cut (`ls; : xxxx…; touch pwned` hid its tail behind an ellipsis) and the text must
//! not be able to drive the terminal: a raw `ESC [2K \r` erases the line it is printed on, a
//! right-to-left override (U+202E) reorders what follows, a zero-width space hides a
//! difference. Every such character is replaced by a visible escape (the one sanitizer,
//! [`crate::sanitize`](mod@crate::sanitize)); everything else, backslashes included, is shown as is, so an
//! ordinary command reads as typed.

pub use crate::sanitize::escape_controls;

use crate::approval::ApprovalRequest;

/// Detail lines kept at most (the tools bound their previews below this already; a provider
/// fed by other code is bounded here too).
pub const MAX_DETAIL_LINES: usize = 256;

/// `detail` as escaped lines (a `\r` or an escape sequence inside a line shows as an escape),
/// at most [`MAX_DETAIL_LINES`], then one line saying how many were left out.
pub fn detail_lines(detail: &str) -> Vec<String> {
    let lines: Vec<&str> = detail.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_DETAIL_LINES)
        .map(|line| escape_controls(line))
        .collect();
    if lines.len() > MAX_DETAIL_LINES {
        out.push(format!(
            "… [{} more lines not shown]",
            lines.len() - MAX_DETAIL_LINES
        ));
    }
    out
}

/// The approval question. It fits on one line when it can (`Allow bash ls -la? [y/N] `);
/// otherwise the tool is named on a line of its own and the summary follows, indented by two
/// spaces and wrapped at `width` so nothing is cut off:
///
/// ```text
/// Allow bash (212 characters):
///   ls -la; : xxxx…
///   xxxx; touch pwned
/// [y/N]
/// ```
///
/// A request with detail (a write's content, an edit's diff) shows it under the summary,
/// every line indented by four spaces, before `[y/N]`. Every field is escaped here again,
/// which changes nothing for escaped text and keeps a provider fed by other code from
/// printing control characters.
pub fn approval_question(request: &ApprovalRequest, width: usize) -> String {
    let tool = escape_controls(&request.tool);
    let summary = escape_controls(&request.summary);
    let single = format!("Allow {tool} {summary}? [y/N] ");
    let mut text = if single.chars().count() <= width && request.detail.is_empty() {
        return single;
    } else if request.detail.is_empty()
        || format!("Allow {tool} {summary}:").chars().count() > width
    {
        let mut text = format!("Allow {tool} ({} characters):\n", summary.chars().count());
        for line in wrap_escaped(&summary, width.saturating_sub(2)) {
            text.push_str("  ");
            text.push_str(&line);
            text.push('\n');
        }
        text
    } else {
        format!("Allow {tool} {summary}:\n")
    };
    for line in &request.detail {
        text.push_str("    ");
        text.push_str(&escape_controls(line));
        text.push('\n');
    }
    text.push_str("[y/N] ");
    text
}

/// Escaped text as display units: one shown character, or one whole escape (`\e`, `\x07`,
/// `\u{202e}`), so wrapping never splits an escape across lines. A literal backslash in the
/// text is grouped with the character after it, which only keeps the two on one line.
fn units(escaped: &str) -> Vec<&str> {
    let mut units = Vec::new();
    let mut rest = escaped;
    while let Some(first) = rest.chars().next() {
        let len = if first == '\\' {
            escape_len(rest)
        } else {
            first.len_utf8()
        };
        let (unit, tail) = rest.split_at(len);
        units.push(unit);
        rest = tail;
    }
    units
}

/// Byte length of the escape at the start of `text` (which starts with a backslash).
fn escape_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    match bytes.get(1) {
        Some(b'x') if bytes.len() >= 4 && bytes[2..4].iter().all(u8::is_ascii_hexdigit) => 4,
        Some(b'u') if bytes.get(2) == Some(&b'{') => match text.find('}') {
            Some(end) if end <= 10 => end + 1,
            _ => 2,
        },
        Some(_) => 1 + text[1..].chars().next().map_or(0, char::len_utf8),
        None => 1,
    }
}

/// `text`, escaped as [`escape_controls`] does (escaping is idempotent, so already escaped
/// text such as an approval summary comes out unchanged), in lines of at most `width`
/// characters (at least one unit per line, so a tiny width cannot loop or drop anything).
/// The lines joined give back the whole escaped text: nothing is cut, and no escape is
/// split. Breaks fall at the width, not at spaces, so no space is hidden at a line end.
pub fn wrap_escaped(text: &str, width: usize) -> Vec<String> {
    let escaped = escape_controls(text);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for unit in units(&escaped) {
        let len = unit.chars().count();
        if used > 0 && used + len > width {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        line.push_str(unit);
        used += len;
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, summary: &str, detail: &[&str]) -> ApprovalRequest {
        ApprovalRequest {
            tool: tool.into(),
            summary: summary.into(),
            reason: "changing a file needs approval".into(),
            detail: detail.iter().map(|l| l.to_string()).collect(),
            protection: crate::Protection::Ordinary,
        }
    }

    #[test]
    fn a_write_is_asked_with_its_content_under_it() {
        assert_eq!(
            approval_question(
                &request("write_file", "x.txt", &["new file, 1 line, 2 bytes:", "+x"]),
                100
            ),
            "Allow write_file x.txt:\n    new file, 1 line, 2 bytes:\n    +x\n[y/N] "
        );
        assert_eq!(
            approval_question(&request("bash", "ls", &[]), 100),
            "Allow bash ls? [y/N] "
        );
    }

    #[test]
    fn detail_lines_are_escaped_and_bounded() {
        assert_eq!(
            detail_lines("+a\r\u{1b}]52;c;eA==\u{7}\n+\u{202e}b"),
            vec![r"+a\r\e]52;c;eA==\x07", r"+\u{202e}b"]
        );
        let many = "x\n".repeat(MAX_DETAIL_LINES + 3);
        let lines = detail_lines(&many);
        assert_eq!(lines.len(), MAX_DETAIL_LINES + 1);
        assert_eq!(lines[MAX_DETAIL_LINES], "… [3 more lines not shown]");
    }

    #[test]
    fn wrapping_keeps_every_character_and_cuts_nothing() {
        let command = format!("ls -la; : {}; touch pwned", "x".repeat(200));
        let lines = wrap_escaped(&command, 100);
        assert_eq!(
            lines,
            vec![
                format!("ls -la; : {}", "x".repeat(90)),
                "x".repeat(100),
                format!("{}; touch pwned", "x".repeat(10)),
            ]
        );
        assert_eq!(lines.concat(), command);
    }

    #[test]
    fn wrapping_never_splits_an_escape() {
        assert_eq!(
            wrap_escaped("abc\u{1b}d\u{202e}", 4),
            vec!["abc", r"\ed", r"\u{202e}"]
        );
    }

    #[test]
    fn wrapping_escaped_text_gives_the_same_lines_as_the_raw_text() {
        let raw = "ab\u{1b}[2K\u{7}\u{202e}c\\d";
        for width in 1..12 {
            assert_eq!(
                wrap_escaped(&escape_controls(raw), width),
                wrap_escaped(raw, width)
            );
        }
        assert_eq!(
            wrap_escaped(raw, 5),
            vec![r"ab\e[", r"2K", r"\x07", r"\u{202e}", r"c\d"]
        );
    }

    #[test]
    fn wrapping_empty_text_or_a_zero_width_still_shows_everything() {
        assert_eq!(wrap_escaped("", 10), vec![""]);
        assert_eq!(wrap_escaped("ab", 0), vec!["a", "b"]);
    }
}
