//! The escaping of slot values (the rules are in the parent module's docs).
//!
//! Everything goes through one [`Writer`], template text and values alike, because whether a
//! value's `#` or `[` is at the start of a line depends on what the template wrote before it.

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
    pub(super) fn new(role: FragmentRole) -> Self {
        Self {
            out: String::new(),
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
        s.chars().for_each(|c| self.push(c));
    }

    /// The harness's own text: written as it is.
    pub(super) fn template(&mut self, text: &str) {
        self.push_str(text);
    }

    /// Text from outside: escaped by `mode`.
    pub(super) fn value(&mut self, value: &str, mode: Mode) {
        let one_line = mode != Mode::Text;
        for (i, c) in value.char_indices() {
            let rest = &value[i..];
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
fn opens_a_tag(rest: &str) -> bool {
    let Some(after) = rest.strip_prefix('<') else {
        return false;
    };
    let after = after.trim_start();
    let after = after.strip_prefix('/').unwrap_or(after).trim_start();
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

fn tag_names() -> impl Iterator<Item = &'static str> {
    FragmentKind::ALL
        .into_iter()
        .filter_map(|k| match k.marker() {
            Marker::Tag(name) => Some(name),
            _ => None,
        })
}

fn line_markers() -> impl Iterator<Item = &'static str> {
    FragmentKind::ALL
        .into_iter()
        .filter_map(|k| match k.marker() {
            Marker::Line(prefix) => Some(prefix),
            _ => None,
        })
}
