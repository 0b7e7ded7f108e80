//! The deterministic fallback selector: keyword overlap, with CJK text split into bigrams
//! (Chinese and Japanese have no spaces, so words are approximated by character pairs).

use std::collections::BTreeSet;

use crate::record::MemoryRecord;

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF) // CJK Compatibility Ideographs
}

/// Lowercased ASCII/Latin words of 2+ characters, and bigrams of CJK runs (a lone CJK
/// character counts as itself).
pub fn tokens(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut run: Vec<char> = Vec::new();
    let flush_word = |word: &mut String, out: &mut BTreeSet<String>| {
        if word.chars().count() >= 2 {
            out.insert(word.to_lowercase());
        }
        word.clear();
    };
    let flush_run = |run: &mut Vec<char>, out: &mut BTreeSet<String>| {
        match run.len() {
            0 => {}
            1 => {
                out.insert(run[0].to_string());
            }
            _ => {
                for pair in run.windows(2) {
                    out.insert(pair.iter().collect());
                }
            }
        }
        run.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush_word(&mut word, &mut out);
            run.push(c);
        } else if c.is_alphanumeric() {
            flush_run(&mut run, &mut out);
            word.push(c);
        } else {
            flush_word(&mut word, &mut out);
            flush_run(&mut run, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_run(&mut run, &mut out);
    out
}

/// Up to `limit` records whose name and description share the most tokens with `query`;
/// ties go to the name that sorts first. Records with no overlap are not selected.
pub fn select<'a>(query: &str, records: &'a [MemoryRecord], limit: usize) -> Vec<&'a MemoryRecord> {
    let wanted = tokens(query);
    let mut scored: Vec<(usize, &MemoryRecord)> = records
        .iter()
        .map(|r| {
            let have = tokens(&format!(
                "{} {}",
                r.name.replace(['-', '_'], " "),
                r.description
            ));
            (have.intersection(&wanted).count(), r)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored.into_iter().take(limit).map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::MemoryType;

    #[test]
    fn cjk_runs_become_bigrams() {
        let t: Vec<String> = tokens("用户喜欢 Rust 的 tabs!").into_iter().collect();
        assert_eq!(t, vec!["rust", "tabs", "喜欢", "户喜", "用户", "的"]);
    }

    #[test]
    fn selects_by_overlap_then_name() {
        let records = vec![
            MemoryRecord::new(
                "indent-style",
                MemoryType::User,
                "The user indents Rust code with tabs",
                "",
            ),
            MemoryRecord::new(
                "deploy",
                MemoryType::Project,
                "Deploys go through the staging server",
                "",
            ),
            MemoryRecord::new("editor", MemoryType::User, "用户使用 Vim 编辑器", ""),
        ];
        let names = |q: &str| -> Vec<&str> {
            select(q, &records, 5)
                .iter()
                .map(|r| r.name.as_str())
                .collect()
        };
        assert_eq!(
            names("how should I indent this Rust file?"),
            vec!["indent-style"]
        );
        assert_eq!(names("打开编辑器"), vec!["editor"]);
        assert_eq!(names("nothing related"), Vec::<&str>::new());
    }
}
