//! The `MEMORY.md` index: one line per record, `- [name](file) - description`.

/// The index file inside `.memory/`.
pub const INDEX_FILE: &str = "MEMORY.md";

/// One line of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub(crate) name: String,
    pub(crate) file: String,
    pub(crate) description: String,
}

/// A name the index may list as a record file: a plain `.md` file in `.memory/` itself, not
/// the index and not hidden (hidden names are the store's own: the lock and temp files).
pub(crate) fn is_record_file(file: &str) -> bool {
    file.ends_with(".md") && file != INDEX_FILE && !file.contains('/') && !file.starts_with('.')
}

/// Why `MEMORY.md` is not an index; `line` is 1-based. The store reports it as the index's
/// [`crate::MemoryError::Invalid`] reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum IndexError {
    /// A line that is not `- [name](file) - description`.
    #[error("line {line}: expected `- [name](file) - description`")]
    Malformed { line: usize },
    /// A line whose file is not a record file of the folder (a path, the index, a hidden name).
    #[error("line {line}: `{file}` is not a record file name")]
    NotARecordFile { line: usize, file: String },
}

/// The entries of an index text, in order; blank lines and `#` headings are skipped.
pub(crate) fn parse_index(text: &str) -> Result<Vec<IndexEntry>, IndexError> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || IndexError::Malformed { line: i + 1 };
        let rest = line.strip_prefix("- [").ok_or_else(bad)?;
        let (name, rest) = rest.split_once("](").ok_or_else(bad)?;
        let (file, description) = rest.split_once(") - ").ok_or_else(bad)?;
        if !is_record_file(file) {
            return Err(IndexError::NotARecordFile {
                line: i + 1,
                file: file.to_string(),
            });
        }
        entries.push(IndexEntry {
            name: name.into(),
            file: file.into(),
            description: description.into(),
        });
    }
    Ok(entries)
}

pub(crate) fn render_index(entries: &[IndexEntry]) -> String {
    entries
        .iter()
        .map(|e| format!("- [{}]({}) - {}\n", e.name, e.file, e.description))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_is_named_by_its_number_with_the_same_text_as_before() {
        let text = "- [a](a-1.md) - one\n\nnot an entry\n";
        let error = parse_index(text).unwrap_err();
        assert_eq!(error, IndexError::Malformed { line: 3 });
        assert_eq!(
            error.to_string(),
            "line 3: expected `- [name](file) - description`"
        );
        let error = parse_index("- [a](../a.md) - one\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 1: `../a.md` is not a record file name"
        );
    }
}
