//! The escaping of slot values (the rules are in the parent module's docs).
//!
//! Everything goes through one [`Writer`], template text and values alike, because whether a
//! value's `#` or `[` is at the start of a line depends on what the template wrote before it.

use std::sync::LazyLock;

use super::{FragmentKind, FragmentRole, Marker};

/// How a value is escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Inside quotes: also `"`, `<`, `>` and line breaks.
    Attr,
    /// On one line: also line breaks.
    Inline,
    /// Any number of lines.
    Text,
}

/// The text being rendered, and where its current line stands.
pub(super) struct Writer {
    out: String,
    /// Headings are escaped in `system` fragments only: a `user` message has no sections.
    headings: bool,
    /// How many blanks the current line holds so far, or `None` once it has anything else.
    indent: Option<usize>,
}

impl Writer {
    /// A writer for a fragment of `role`, about `capacity` bytes long.
    pub(super) fn new(role: FragmentRole, capacity: usize) -> Self {
        Self {
            out: String::with_capacity(capacity),
            headings: role == FragmentRole::System,
            indent: Some(0),
        }
    }

    pub(super) fn finish(self) -> String {
        self.out
    }

    fn push(&mut self, c: char) {
        self.out.push(c);
        self.indent = match c {
            '\n' | '\r' => Some(0),
            ' ' | '\t' => self.indent.map(|n| n + 1),
            _ => None,
        };
    }

    fn push_str(&mut self, s: &str) {
        self.out.push_str(s);
        let blanks = |tail: &str| tail.bytes().all(|b| b == b' ' || b == b'\t');
        self.indent = match s.rfind(['\n', '\r']) {
            Some(end) => Some(&s[end + 1..]).filter(|t| blanks(t)).map(str::len),
            None if blanks(s) => self.indent.map(|n| n + s.len()),
            None => None,
        };
    }

    /// The harness's own text: written as it is.
    pub(super) fn template(&mut self, text: &str) {
        self.push_str(text);
    }

    /// Text from outside: escaped by `mode`.
    pub(super) fn value(&mut self, value: &str, mode: Mode) {
        let one_line = mode != Mode::Text;
        let mut i = 0;
        while let Some(c) = value[i..].chars().next() {
            let rest = &value[i..];
            // Mid-line, only these bytes can matter: copy the run before the next one whole.
            if self.indent.is_none() {
                let run = rest
                    .bytes()
                    .position(|b| matches!(b, b'<' | b'>' | b'"' | b'\n' | b'\r'))
                    .unwrap_or(rest.len());
                if run > 0 {
                    // No line break in the run: the line stays one with text on it.
                    self.out.push_str(&rest[..run]);
                    i += run;
                    continue;
                }
            }
            i += c.len_utf8();
            match c {
                '\n' if one_line => self.push_str("\\n"),
                '\r' if one_line => self.push_str("\\r"),
                '"' if mode == Mode::Attr => self.push_str("&quot;"),
                '>' if mode == Mode::Attr => self.push_str("&gt;"),
                '<' if mode == Mode::Attr || opens_a_tag(rest) => self.push_str("&lt;"),
                _ => {
                    if self.starts_structure(rest) {
                        self.push('\\');
                    }
                    self.push(c);
                }
            }
        }
    }

    /// Whether `rest`, written here, would start a line marker or (where it matters) a
    /// heading.
    fn starts_structure(&self, rest: &str) -> bool {
        let Some(indent) = self.indent else {
            return false;
        };
        let heading = self.headings && indent <= 3 && is_heading(rest);
        heading || line_markers().any(|m| starts_with_ignoring_case(rest, m))
    }
}

/// `#` to `######`, then a blank or the end of the line: a Markdown heading.
fn is_heading(rest: &str) -> bool {
    let hashes = rest.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes)
        && matches!(
            rest.as_bytes().get(hashes),
            None | Some(b' ' | b'\t' | b'\n' | b'\r')
        )
}

/// Whether `rest` (starting with `<`) opens or closes the tag of any fragment kind: `<`,
/// blanks, an optional `/`, blanks, the name in any case, then anything but a name character.
/// A template never puts a tag name on the same line right after a slot, so a `<` ending a
/// value cannot combine with the template's text into a tag.
fn opens_a_tag(rest: &str) -> bool {
    let Some(after) = rest.strip_prefix('<') else {
        return false;
    };
    // Blanks but not line breaks: `<` at the end of a line opens nothing on the next.
    let blanks: &[char] = &[' ', '\t'];
    let after = after.trim_start_matches(blanks);
    let after = after
        .strip_prefix('/')
        .unwrap_or(after)
        .trim_start_matches(blanks);
    tag_names().any(|name| {
        starts_with_ignoring_case(after, name)
            && !after[name.len()..]
                .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

fn starts_with_ignoring_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The tag names and line markers of every kind, gathered once from the kinds' table.
static MARKERS: LazyLock<(Vec<&'static str>, Vec<&'static str>)> = LazyLock::new(|| {
    let (mut tags, mut lines) = (Vec::new(), Vec::new());
    for kind in FragmentKind::ALL {
        match kind.marker() {
            Marker::Tag(name) => tags.push(name),
            Marker::Line(prefix) => lines.push(prefix),
            Marker::Heading(_) | Marker::Unmarked => {}
        }
    }
    (tags, lines)
});

fn tag_names() -> impl Iterator<Item = &'static str> {
    MARKERS.0.iter().copied()
}

fn line_markers() -> impl Iterator<Item = &'static str> {
    MARKERS.1.iter().copied()
}
