//! `agent-frontmatter`: the `---`-fenced YAML header of skill and memory files.
//!
//! ```text
//! ---
//! name: rust-test
//! description: How to write a focused Rust test
//! ---
//! The body, in Markdown.
//! ```
//!
//! [`read_header`] reads only up to the closing fence, so a catalog of many skills never
//! reads their bodies.

#![warn(missing_docs)]

use std::io::{self, BufRead};

use serde::de::DeserializeOwned;

/// Front matter larger than this is refused (it would not be a header any more).
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// Why a header could not be read; the skill and memory scanners turn it into a one-line
/// warning naming the file.
#[derive(Debug, thiserror::Error)]
pub enum FrontMatterError {
    /// The first line is not `---`: the file has no front matter at all.
    #[error("the file does not start with a `---` line")]
    MissingOpening,
    /// The text ends before the opening fence is closed.
    #[error("the front matter has no closing `---` line")]
    MissingClosing,
    /// The header grew past [`MAX_HEADER_BYTES`] before its closing fence.
    #[error("the front matter is larger than {MAX_HEADER_BYTES} bytes")]
    TooLarge,
    /// The header is not YAML of the expected shape.
    #[error("the front matter is not valid: {0}")]
    Yaml(#[from] serde_yaml_ng::Error),
    /// Reading the file failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Splits `text` into (YAML header, body). The body starts after the closing fence's line.
pub fn split(text: &str) -> Result<(&str, &str), FrontMatterError> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(FrontMatterError::MissingOpening)?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let header = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Ok((header, body));
        }
        offset += line.len();
        if offset > MAX_HEADER_BYTES {
            return Err(FrontMatterError::TooLarge);
        }
    }
    Err(FrontMatterError::MissingClosing)
}

/// Parses the header of `text` as `T` and returns it with the body.
///
/// ```
/// use agent_frontmatter::{FrontMatterError, parse};
///
/// #[derive(serde::Deserialize)]
/// struct Header {
///     name: String,
/// }
///
/// let (header, body) = parse::<Header>("---\nname: rust-test\n---\nThe body.\n").unwrap();
/// assert_eq!((header.name.as_str(), body), ("rust-test", "The body.\n"));
/// assert!(matches!(
///     parse::<Header>("no header"),
///     Err(FrontMatterError::MissingOpening)
/// ));
/// ```
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<(T, &str), FrontMatterError> {
    let (header, body) = split(text)?;
    Ok((serde_yaml_ng::from_str(header)?, body))
}

/// Reads and parses only the header from `reader`, stopping at the closing fence.
pub fn read_header<T: DeserializeOwned>(reader: impl BufRead) -> Result<T, FrontMatterError> {
    let mut lines = reader.lines();
    let first = lines.next().transpose()?;
    if first.as_deref().map(str::trim_end) != Some("---") {
        return Err(FrontMatterError::MissingOpening);
    }
    let mut header = String::new();
    for line in lines {
        let line = line?;
        if line.trim_end() == "---" {
            return Ok(serde_yaml_ng::from_str(&header)?);
        }
        header.push_str(&line);
        header.push('\n');
        if header.len() > MAX_HEADER_BYTES {
            return Err(FrontMatterError::TooLarge);
        }
    }
    Err(FrontMatterError::MissingClosing)
}

/// Renders a header and body back into a file's text.
pub fn render<T: serde::Serialize>(header: &T, body: &str) -> Result<String, FrontMatterError> {
    let yaml = serde_yaml_ng::to_string(header)?;
    Ok(format!("---\n{yaml}---\n\n{body}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn splits_header_and_body() {
        let text = "---\nname: a\n---\nbody\nmore\n";
        assert_eq!(split(text).unwrap(), ("name: a\n", "body\nmore\n"));
        let (map, body): (BTreeMap<String, String>, _) = parse(text).unwrap();
        assert_eq!(map.get("name").map(String::as_str), Some("a"));
        assert_eq!(body, "body\nmore\n");
    }

    #[test]
    fn says_what_is_wrong() {
        assert!(matches!(
            split("name: a\n"),
            Err(FrontMatterError::MissingOpening)
        ));
        assert!(matches!(
            split("---\nname: a\n"),
            Err(FrontMatterError::MissingClosing)
        ));
        let bad = parse::<BTreeMap<String, String>>("---\nname: [unclosed\n---\n");
        assert!(matches!(bad, Err(FrontMatterError::Yaml(_))));
    }

    #[test]
    fn read_header_stops_at_the_fence() {
        let text = "---\nname: a\n---\n\u{0}not read";
        let map: BTreeMap<String, String> = read_header(text.as_bytes()).unwrap();
        assert_eq!(map.len(), 1);
    }

    #[test]
    fn render_round_trips() {
        let mut map = BTreeMap::new();
        map.insert("name".to_string(), "a: b".to_string());
        let text = render(&map, "body\n").unwrap();
        let (back, body): (BTreeMap<String, String>, _) = parse(&text).unwrap();
        assert_eq!((back, body), (map, "\nbody\n"));
    }
}
