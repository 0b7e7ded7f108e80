//! What a tool hands back: [`ToolOutput`], a list of content parts.
//!
//! Text is the only part today. An MCP server (chapter 19) answers a call with content
//! blocks — text, images, embedded resources — so the output is a list of parts from the start
//! and a new kind of part is one more variant, not a change of every handler's signature.

/// One piece of a tool's output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputPart {
    /// Text the model reads as it is.
    Text(String),
}

/// What a tool returns to the model when it succeeds. Failures are [`crate::ToolFailure`]s.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    parts: Vec<OutputPart>,
}

impl ToolOutput {
    /// An output of one text part: the tool result the model reads is exactly `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            parts: vec![OutputPart::Text(text.into())],
        }
    }

    /// An output of several parts, in the order the model reads them.
    pub fn from_parts(parts: Vec<OutputPart>) -> Self {
        Self { parts }
    }

    /// The parts, in order.
    pub fn parts(&self) -> &[OutputPart] {
        &self.parts
    }

    /// The tool-result content the model reads: one text part exactly as it is (so a tool
    /// that returns text sends the same bytes as before outputs had parts), several joined by
    /// a newline, none as the empty text.
    pub fn into_text(self) -> String {
        let mut parts = self.parts.into_iter().map(|part| match part {
            OutputPart::Text(text) => text,
        });
        let Some(first) = parts.next() else {
            return String::new();
        };
        parts.fold(first, |mut text, next| {
            text.push('\n');
            text.push_str(&next);
            text
        })
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::{OutputPart, ToolOutput};

    #[test]
    fn one_text_part_is_the_content_byte_for_byte() {
        for text in ["", "a", "line\n", "\n\ntwo\r\n", "ünïcödé\u{0}"] {
            assert_eq!(ToolOutput::text(text).into_text(), text);
        }
    }

    #[test]
    fn several_parts_are_joined_by_a_newline_and_none_is_empty() {
        let parts = vec![
            OutputPart::Text("first".into()),
            OutputPart::Text("second\n".into()),
            OutputPart::Text("third".into()),
        ];
        assert_eq!(
            ToolOutput::from_parts(parts).into_text(),
            "first\nsecond\n\nthird"
        );
        assert_eq!(ToolOutput::default().into_text(), "");
    }
}
