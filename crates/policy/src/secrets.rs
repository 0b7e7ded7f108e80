//! "Reading a secret asks" (P03+): a read of a file whose name looks like a credential is an
//! `ask`, like a write. Reading is otherwise free, so without this rule a prompt-injected
//! model could read `.env` or a private key and quote it in its answer or a later command.

use std::path::Path;

use agent_core::{Behavior, PreparedCall, ToolEffect, Verdict};
use agent_workspace::Workspace;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::display::escape_controls;
use crate::pipeline::{PermissionRule, RuleError};

/// File names (globs over the last path component, case-insensitive) treated as secrets:
/// dotenv files, TLS/SSH private keys and keystores, and the credential files of common
/// tools. Short on purpose: every match costs the user a question.
pub const SECRET_FILE_NAMES: &[&str] = &[
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    "credentials*",
];

/// Asks before a read-effect call one of whose paths (as its tool lists them) names a
/// secret-looking file, either as given or after following symlinks (a link
/// `notes.txt -> .env` asks too).
#[derive(Debug, Clone)]
pub struct SecretReads {
    workspace: Workspace,
    /// Built from [`SECRET_FILE_NAMES`]; an error here (a bad pattern, a bug) makes every
    /// read fail closed instead of silently asking about nothing.
    names: Result<GlobSet, globset::Error>,
}

impl SecretReads {
    /// The rule's name, as verdicts and the audit log name it.
    pub const NAME: &'static str = "secret_reads_ask";

    /// `workspace` is where the tools resolve paths: the rule resolves them the same way.
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            names: build(SECRET_FILE_NAMES),
        }
    }

    fn is_secret(names: &GlobSet, path: &Path) -> bool {
        path.file_name().is_some_and(|name| names.is_match(name))
    }
}

fn build(patterns: &[&str]) -> Result<GlobSet, globset::Error> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        set.add(
            GlobBuilder::new(pattern)
                .case_insensitive(true)
                .literal_separator(true)
                .build()?,
        );
    }
    set.build()
}

impl PermissionRule for SecretReads {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        if call.effect != ToolEffect::Read || call.summary.paths.is_empty() {
            return Ok(Verdict::passthrough(Self::NAME));
        }
        let names = self.names.as_ref().map_err(|err| err.clone())?;
        let secret = call.summary.paths.iter().find(|path| {
            let given = Path::new(path.as_str());
            // The real name behind a symlink, as the boundary resolves it (nothing is opened;
            // a path that leads out is refused by the tool itself).
            let resolved = self.workspace.resolve(path).ok();
            Self::is_secret(names, given)
                || resolved.is_some_and(|real| Self::is_secret(names, &real))
        });
        Ok(match secret {
            Some(path) => Verdict::new(
                Behavior::Ask,
                Self::NAME,
                format!(
                    "`{}` may hold secrets, so reading it needs approval",
                    escape_controls(path)
                ),
            ),
            None => Verdict::passthrough(Self::NAME),
        })
    }
}

#[cfg(test)]
mod tests {
    use agent_core::CallSummary;
    use serde_json::json;

    use super::*;

    fn read(path: &str) -> PreparedCall {
        PreparedCall {
            call_id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({ "path": path }),
            effect: ToolEffect::Read,
            summary: CallSummary::path(path),
        }
    }

    /// A workspace with nothing in it, so only the names given decide.
    fn empty_workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        (dir, workspace)
    }

    fn behaviors(rule: &SecretReads, paths: &[&str]) -> Vec<(String, Behavior)> {
        paths
            .iter()
            .map(|p| (p.to_string(), rule.evaluate(&read(p)).unwrap().behavior))
            .collect()
    }

    #[test]
    fn secret_looking_names_ask_and_others_pass() {
        let (_dir, workspace) = empty_workspace();
        let rule = SecretReads::new(workspace);
        let asks = [
            ".env",
            "app/.env.local",
            "certs/server.pem",
            "tls.KEY",
            "/home/u/.ssh/id_rsa",
            "id_ed25519.pub",
            "id_ecdsa",
            ".netrc",
            ".npmrc",
            ".pypirc",
            "aws/credentials",
            "credentials.json",
            ".env/.",
        ];
        let passes = [
            "notes.txt",
            "src/env.rs",
            "environment.md",
            "keys/readme.md",
            "my.env",
            ".envrc",
            "monkey",
            ".env/..",
        ];
        let mut expected: Vec<(String, Behavior)> = asks
            .iter()
            .map(|p| (p.to_string(), Behavior::Ask))
            .collect();
        expected.extend(
            passes
                .iter()
                .map(|p| (p.to_string(), Behavior::Passthrough)),
        );
        let all: Vec<&str> = asks.iter().chain(passes.iter()).copied().collect();
        assert_eq!(behaviors(&rule, &all), expected);
    }

    #[test]
    fn the_reason_names_the_path_and_writes_are_left_to_other_rules() {
        let (_dir, workspace) = empty_workspace();
        let rule = SecretReads::new(workspace);
        assert_eq!(
            rule.evaluate(&read(".env")).unwrap(),
            Verdict::new(
                Behavior::Ask,
                "secret_reads_ask",
                "`.env` may hold secrets, so reading it needs approval"
            )
        );
        let write = PreparedCall {
            effect: ToolEffect::Write,
            ..read(".env")
        };
        assert_eq!(
            rule.evaluate(&write).unwrap(),
            Verdict::passthrough("secret_reads_ask")
        );
    }

    #[test]
    fn a_symlink_to_a_secret_asks_by_its_target_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
        std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
        std::fs::write(dir.path().join("plain.txt"), "hi\n").unwrap();
        let rule = SecretReads::new(Workspace::new(dir.path()).unwrap());
        assert_eq!(
            behaviors(&rule, &["notes.txt", "plain.txt"]),
            vec![
                ("notes.txt".to_string(), Behavior::Ask),
                ("plain.txt".to_string(), Behavior::Passthrough),
            ]
        );
    }
}
