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

pub(crate) fn parse_index(text: &str) -> Result<Vec<IndexEntry>, String> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("line {}: expected `- [name](file) - description`", i + 1);
        let rest = line.strip_prefix("- [").ok_or_else(bad)?;
        let (name, rest) = rest.split_once("](").ok_or_else(bad)?;
        let (file, description) = rest.split_once(") - ").ok_or_else(bad)?;
        if !is_record_file(file) {
            return Err(format!(
                "line {}: `{file}` is not a record file name",
                i + 1
            ));
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
