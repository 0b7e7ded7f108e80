//! 中文 pages use one term per concept: the words `docs/zh/glossary.md` lists as "不用" (not
//! used) occur in no page of `docs/zh/` and not in `README.zh.md`.

use std::path::{Path, PathBuf};

/// The avoided words of the glossary's table: the third column, split at `、`.
pub fn avoided(glossary: &str) -> Vec<String> {
    glossary
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1) // the header
        .filter_map(|l| l.split('|').nth(3))
        .flat_map(|cell| cell.split('、'))
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn chinese_pages_use_the_glossary_terms() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let glossary = std::fs::read_to_string(root.join("docs/zh/glossary.md")).unwrap();
    let avoided = avoided(&glossary);
    assert!(avoided.len() >= 6, "{avoided:?}");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs/zh"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("glossary.md"))
        .collect();
    pages.sort();
    pages.push(root.join("README.zh.md"));
    let mut found = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (n, line) in text.lines().enumerate() {
            for word in &avoided {
                if line.contains(word.as_str()) {
                    let name = page.strip_prefix(&root).unwrap_or(page).display();
                    found.push(format!("{name}:{}: {word}", n + 1));
                }
            }
        }
    }
    assert_eq!(found, Vec::<String>::new(), "see docs/zh/glossary.md");
}

#[test]
fn the_avoided_column_is_read_word_by_word() {
    let table = "| English | 中文 | 不用 | 说明 |\n|---|---|---|---|\n| a | 甲 | 乙、丙 | x |\n| b | 丁 | | y |\n";
    assert_eq!(avoided(table), vec!["乙".to_string(), "丙".to_string()]);
}
