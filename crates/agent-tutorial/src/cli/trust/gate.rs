//! The CLI's [`WorkspaceTrust`]: the user's trust store for one workspace, and the one
//! stderr line that says what was not loaded and how to trust it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use agent_trust::{TrustKind, TrustStore, Verdict, WorkspaceTrust};

/// The trust store (when there is a config directory to keep it in) for the workspace at
/// `root`. Every failure to read it is an untrusted verdict: fail closed.
#[derive(Debug)]
pub struct StoreTrust {
    store: Option<TrustStore>,
    root: PathBuf,
    /// The kinds already reported, so an idle REPL asking for due schedules says it once.
    told: Mutex<BTreeSet<TrustKind>>,
}

impl StoreTrust {
    /// The store from `XDG_CONFIG_HOME` / `HOME`, for the workspace at `root`.
    pub fn from_env(root: &Path) -> Self {
        Self {
            store: TrustStore::from_env(|k| std::env::var_os(k)).ok(),
            root: root.to_path_buf(),
            told: Mutex::default(),
        }
    }
}

impl StoreTrust {
    /// Like [`WorkspaceTrust::verdict`], with a store that cannot be read as an error.
    pub fn try_verdict(
        &self,
        kind: TrustKind,
        fingerprint: &str,
    ) -> Result<Verdict, agent_trust::StoreError> {
        match &self.store {
            Some(store) => store.verdict(&self.root, kind, fingerprint),
            None => Ok(Verdict::Untrusted),
        }
    }
}

impl WorkspaceTrust for StoreTrust {
    fn verdict(&self, kind: TrustKind, fingerprint: &str) -> Verdict {
        let Some(store) = &self.store else {
            return Verdict::Untrusted;
        };
        store
            .verdict(&self.root, kind, fingerprint)
            .unwrap_or_else(|err| {
                tracing::warn!("trust: {err}; treating the {} as untrusted", kind.noun());
                Verdict::Untrusted
            })
    }

    fn record_written(&self, kind: TrustKind, fingerprint: &str) {
        let Some(store) = &self.store else {
            return;
        };
        if let Err(err) = store.record_written(&self.root, kind, fingerprint) {
            tracing::warn!(
                "trust: cannot record what this run wrote to {}: {err}",
                kind.location()
            );
        }
    }

    fn refused(&self, kind: TrustKind, verdict: Verdict, count: usize) {
        let first = self
            .told
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(kind);
        if first {
            eprintln!("{}", notice(kind, verdict, count, &self.root));
        }
    }
}

/// The one line a run prints for a kind it did not load.
pub fn notice(kind: TrustKind, verdict: Verdict, count: usize, root: &Path) -> String {
    let state = match verdict {
        Verdict::Changed => "changed since they were trusted",
        Verdict::Trusted | Verdict::Untrusted => "are not trusted",
    };
    let effect = match kind {
        TrustKind::Hooks => "none will run",
        TrustKind::Schedules => "none will run",
        TrustKind::Skills => "none is in the prompt",
        TrustKind::McpServers => "none will start",
    };
    format!(
        "{} in {} {state} ({count}), so {effect}; review and trust them with: agent-tutorial trust --workspace {}",
        kind.noun(),
        kind.location(),
        shell_word(&root.display().to_string())
    )
}

/// `text` as one shell word, safe to paste: plain text as is; otherwise single-quoted (no
/// expansion at all inside, so `$(…)` stays text); with a control or invisible character,
/// bash's `$'…'` form with every such byte as `\xHH` (only backslash escapes are read
/// inside it: `$(…)` stays text there too), so the line on the terminal holds no raw control.
pub fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    if !text.chars().any(agent_policy::sanitize::needs_escape) {
        return format!("'{}'", text.replace('\'', r"'\''"));
    }
    let mut word = String::from("$'");
    for c in text.chars() {
        match c {
            '\'' => word.push_str(r"\'"),
            '\\' => word.push_str(r"\\"),
            c if agent_policy::sanitize::needs_escape(c) => {
                let mut buf = [0u8; 4];
                for byte in c.encode_utf8(&mut buf).bytes() {
                    word.push_str(&format!("\\x{byte:02x}"));
                }
            }
            c => word.push(c),
        }
    }
    word.push('\'');
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/tmp/a-b_c.d"), "/tmp/a-b_c.d");
        assert_eq!(shell_word("/tmp/it's here"), r"'/tmp/it'\''s here'");
        assert_eq!(shell_word("/tmp/$(touch pwned)"), "'/tmp/$(touch pwned)'");
        assert_eq!(
            shell_word("/tmp/a\n$(touch x)\u{202e}'"),
            r"$'/tmp/a\x0a$(touch x)\xe2\x80\xae\''"
        );
    }

    /// The word, pasted into bash, is the path and runs nothing.
    #[test]
    fn a_pasted_word_runs_nothing_and_means_the_path() {
        let dir = tempfile::tempdir().unwrap();
        for path in [
            "/tmp/$(touch pwned)",
            "/tmp/`touch pwned`",
            "/tmp/x'$(touch pwned)'",
            "/tmp/a\n$(touch pwned)\u{1b}[2J\u{202e}",
            "/tmp/a b\\c\"$(touch pwned)\"",
        ] {
            let out = std::process::Command::new("bash")
                .current_dir(dir.path())
                .arg("-c")
                .arg(format!("printf %s {}", shell_word(path)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), path);
            assert!(!dir.path().join("pwned").exists(), "{path:?} ran a command");
        }
    }

    #[test]
    fn the_notice_names_the_kind_and_a_safe_command() {
        assert_eq!(
            notice(
                TrustKind::Schedules,
                Verdict::Untrusted,
                3000,
                Path::new("/w/$(id)")
            ),
            "durable schedules in .agent_tutorial/crons.json are not trusted (3000), so none will run; review and trust them with: agent-tutorial trust --workspace '/w/$(id)'"
        );
    }
}
