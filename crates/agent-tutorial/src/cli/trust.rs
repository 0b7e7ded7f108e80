//! `agent-tutorial trust`: the user's consent before a repository's shell hooks run.
//!
//! A cloned repository can bring `.agent_tutorial/hooks.json`, and every command in it would run
//! at the first prompt. So hooks run only where the user trusted that exact file content, the
//! way `direnv allow` works: `trust` shows every hook and records a SHA-256 of the file's bytes
//! in the user's config directory (outside any workspace, where the repository cannot write
//! it), keyed by the workspace's canonical path. Any change to the file needs a new `trust`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use agent_tools::{PathError, Workspace};
use clap::Args;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::deps::{HookSpec, STATE_DIR, parse_hooks};
use super::{CliError, CliResult, open_workspace};

/// The hooks file, relative to the workspace root.
pub const HOOKS_FILE: &str = ".agent_tutorial/hooks.json";
/// A larger hooks file is a configuration error, not something to read whole.
pub const MAX_HOOKS_FILE_BYTES: u64 = 1 << 20;
/// The trust file holds one short entry per workspace; this is far beyond any real one.
const MAX_TRUST_FILE_BYTES: u64 = 16 << 20;
const TRUST_FILE_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error(transparent)]
    Boundary(#[from] PathError),
    #[error("no config directory to keep trust in: set XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    #[error("{} is a symbolic link; refusing to follow it (replace it with a regular file)", path.display())]
    Symlink { path: PathBuf },
    #[error("{} is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("{} is larger than {limit} bytes", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("{} is not a valid trust file ({source}); fix or delete it", path.display())]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} has version {found}; this build reads version {TRUST_FILE_VERSION}", path.display())]
    Version { path: PathBuf, found: u32 },
    #[error("the workspace path {} is not UTF-8, so trust cannot be recorded for it", path.display())]
    NonUtf8Workspace { path: PathBuf },
}

/// Whether a run asks the trust store before registering shell hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookTrust {
    /// Hooks run only if the user trusted this exact hooks file (the default).
    Required,
    /// `--trust-hooks`: run them without asking (CI, or a repository the user wrote).
    Bypassed,
}

/// What the trust store says about one hooks file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Trusted,
    /// Never trusted in this workspace.
    Untrusted,
    /// Trusted once, but the file's bytes differ now.
    Changed,
}

/// What `revoke` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    Removed,
    WasNotTrusted,
}

/// The exact bytes of a workspace's hooks file, read once: what is shown, hashed and run is
/// the same content.
#[derive(Debug, Clone)]
pub struct HooksFile {
    pub bytes: Vec<u8>,
}

impl HooksFile {
    /// Reads `.agent_tutorial/hooks.json` (`None` when there is none) through the workspace
    /// boundary: a symlink leading out (the file or the folder), a FIFO or anything but a
    /// regular file is refused, and at most [`MAX_HOOKS_FILE_BYTES`] are read.
    pub fn read(workspace: &Workspace) -> Result<Option<Self>, TrustError> {
        let path = workspace.inside(HOOKS_FILE)?;
        match workspace.read_bytes(&path, MAX_HOOKS_FILE_BYTES) {
            Ok(bytes) => Ok(Some(Self { bytes })),
            Err(err) if err.is_not_found() => Ok(None),
            Err(PathError::TooLarge { limit, .. }) => Err(TrustError::TooLarge {
                path: workspace.root().join(HOOKS_FILE),
                limit,
            }),
            Err(err) => Err(err.into()),
        }
    }

    /// Lower-case hex SHA-256 of the bytes.
    pub fn sha256(&self) -> String {
        format!("{:x}", Sha256::digest(&self.bytes))
    }
}

/// Reads at most `limit` bytes of a regular file without following a final symlink and
/// without blocking on a FIFO. A missing file is `None`. Also reads the prompt history
/// (`line_editor.rs`), the other file the CLI keeps outside the workspace.
pub(super) fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, TrustError> {
    let read_error = |source| TrustError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
            return Err(TrustError::Symlink {
                path: path.to_path_buf(),
            });
        }
        Err(err) => return Err(read_error(err)),
    };
    if !file.metadata().map_err(read_error)?.is_file() {
        return Err(TrustError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(TrustError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(Some(bytes))
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    version: u32,
    /// Canonical workspace path → what was trusted there. Sorted, so the file diffs well.
    workspaces: BTreeMap<String, TrustedHooks>,
}

impl Default for TrustFile {
    fn default() -> Self {
        Self {
            version: TRUST_FILE_VERSION,
            workspaces: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustedHooks {
    hooks_sha256: String,
}

/// `trusted.json` in the user's config directory.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// `$XDG_CONFIG_HOME/agent-tutorial/trusted.json`, else `$HOME/.config/...`. A relative
    /// `XDG_CONFIG_HOME` is ignored, as the XDG spec says.
    pub fn from_env(var: impl Fn(&str) -> Option<OsString>) -> Result<Self, TrustError> {
        let base = match var("XDG_CONFIG_HOME").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            _ => match var("HOME").map(PathBuf::from) {
                Some(home) if home.is_absolute() => home.join(".config"),
                _ => return Err(TrustError::NoConfigDir),
            },
        };
        Ok(Self {
            path: base.join("agent-tutorial").join("trusted.json"),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `digest` is what the user trusted for the workspace at `root`.
    pub fn check(&self, root: &Path, digest: &str) -> Result<Verdict, TrustError> {
        let Some(key) = root.to_str() else {
            return Ok(Verdict::Untrusted);
        };
        Ok(match self.load()?.workspaces.get(key) {
            Some(entry) if entry.hooks_sha256 == digest => Verdict::Trusted,
            Some(_) => Verdict::Changed,
            None => Verdict::Untrusted,
        })
    }

    /// Records `digest` as the trusted hooks file of the workspace at `root`.
    pub fn trust(&self, root: &Path, digest: &str) -> Result<(), TrustError> {
        let key = workspace_key(root)?;
        let mut file = self.load()?;
        file.workspaces.insert(
            key,
            TrustedHooks {
                hooks_sha256: digest.to_string(),
            },
        );
        self.save(&file)
    }

    pub fn revoke(&self, root: &Path) -> Result<Revoked, TrustError> {
        let key = workspace_key(root)?;
        let mut file = self.load()?;
        if file.workspaces.remove(&key).is_none() {
            return Ok(Revoked::WasNotTrusted);
        }
        self.save(&file)?;
        Ok(Revoked::Removed)
    }

    fn load(&self) -> Result<TrustFile, TrustError> {
        let Some(bytes) = read_bounded(&self.path, MAX_TRUST_FILE_BYTES)? else {
            return Ok(TrustFile::default());
        };
        let file: TrustFile =
            serde_json::from_slice(&bytes).map_err(|source| TrustError::Corrupt {
                path: self.path.clone(),
                source,
            })?;
        if file.version != TRUST_FILE_VERSION {
            return Err(TrustError::Version {
                path: self.path.clone(),
                found: file.version,
            });
        }
        Ok(file)
    }

    /// Temp file (created new, so never through a planted link) + fsync + rename: a reader
    /// sees the old file or the new one, never half of one.
    fn save(&self, file: &TrustFile) -> Result<(), TrustError> {
        let write_error = |source| TrustError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(write_error)?;
        if let Ok(meta) = std::fs::symlink_metadata(&self.path)
            && meta.file_type().is_symlink()
        {
            return Err(TrustError::Symlink {
                path: self.path.clone(),
            });
        }
        let mut text = serde_json::to_string_pretty(file).map_err(|e| write_error(e.into()))?;
        text.push('\n');
        let tmp = dir.join(format!(".trusted.json.{}.tmp", std::process::id()));
        let written = (|| {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            out.write_all(text.as_bytes())?;
            out.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if let Err(err) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(write_error(err));
        }
        // The rename is durable once the directory is synced; a failure here loses nothing.
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

fn workspace_key(root: &Path) -> Result<String, TrustError> {
    root.to_str()
        .map(str::to_string)
        .ok_or_else(|| TrustError::NonUtf8Workspace {
            path: root.to_path_buf(),
        })
}

/// The one stderr line of a run whose hooks file is not trusted.
pub fn untrusted_notice(verdict: Verdict, hooks: usize, root: &Path) -> String {
    let state = match verdict {
        Verdict::Changed => "changed since they were trusted",
        Verdict::Trusted | Verdict::Untrusted => "are not trusted",
    };
    let plural = if hooks == 1 { "" } else { "s" };
    format!(
        "hooks in {HOOKS_FILE} {state} ({hooks} hook{plural}), so none will run; review them with `agent-tutorial trust --workspace {}`",
        shell_word(&root.display().to_string())
    )
}

/// `path` as one shell word, so the suggested command can be pasted as is.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if text.chars().all(plain) && !text.is_empty() {
        text.to_string()
    } else if text.chars().any(char::is_control) {
        format!("{text:?}")
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// A command as the user must see it: verbatim when every character shows as itself,
/// otherwise escaped (control characters, escape sequences and invisible or bidi-reordering
/// characters could make a terminal show something other than what runs).
fn shown(text: &str) -> String {
    let shows_as_itself =
        |c: char| matches!(c, '"' | '\'' | '\\') || c.escape_debug().eq(std::iter::once(c));
    if text.chars().all(shows_as_itself) {
        text.to_string()
    } else {
        format!("{text:?} (escaped: it holds control or invisible characters)")
    }
}

/// The listing `trust` prints: one block per hook.
fn listing(hooks: &[HookSpec]) -> String {
    let mut out = String::new();
    for (index, hook) in hooks.iter().enumerate() {
        let matcher = hook.matcher.as_deref().map_or("(any)".into(), shown);
        out.push_str(&format!(
            "#{index} {:?} matcher: {matcher} timeout: {}s\n    {}\n",
            hook.event,
            hook.timeout.as_secs_f64(),
            shown(&hook.command)
        ));
    }
    out
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The workspace whose hooks to trust (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Forget the trust recorded for the workspace: its hooks stop running.
    #[arg(long)]
    revoke: bool,
}

/// `agent-tutorial trust [--workspace DIR] [--revoke]`. Needs no model configuration.
pub fn trust(args: &TrustArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    let root = workspace.root();
    let store = TrustStore::from_env(|k| std::env::var_os(k)).map_err(CliError::usage)?;
    if args.revoke {
        match store.revoke(root).map_err(CliError::usage)? {
            Revoked::Removed => println!("Revoked: hooks in {} no longer run.", root.display()),
            Revoked::WasNotTrusted => {
                println!("{} was not trusted; nothing to revoke.", root.display())
            }
        }
        return Ok(());
    }
    let Some(file) = HooksFile::read(&workspace).map_err(CliError::usage)? else {
        println!("No {HOOKS_FILE} in {}; nothing to trust.", root.display());
        return Ok(());
    };
    // A file that would not load is refused before it is trusted.
    let hooks = parse_hooks(&file.bytes).map_err(CliError::usage)?;
    let digest = file.sha256();
    print!(
        "{HOOKS_FILE} in {} (sha256 {digest}), {} hook(s); each command runs with bash in the workspace, as you:\n{}",
        root.display(),
        hooks.len(),
        listing(&hooks)
    );
    store.trust(root, &digest).map_err(CliError::usage)?;
    println!(
        "Trusted until {STATE_DIR}/hooks.json changes (recorded in {}).",
        store.path().display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_show_as_themselves_are_printed_verbatim() {
        assert_eq!(shown(r#"echo '{"a": "b\n"}'"#), r#"echo '{"a": "b\n"}'"#);
        assert_eq!(shown("ls é"), "ls é");
    }

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(
            shown("ls\u{1b}[2K\rrm -rf ~"),
            r#""ls\u{1b}[2K\rrm -rf ~" (escaped: it holds control or invisible characters)"#
        );
        assert_eq!(
            shown("echo \u{202e}fdp.exe"),
            r#""echo \u{202e}fdp.exe" (escaped: it holds control or invisible characters)"#
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/tmp/a-b_c.d"), "/tmp/a-b_c.d");
        assert_eq!(shell_word("/tmp/it's here"), r"'/tmp/it'\''s here'");
    }

    #[test]
    fn the_config_dir_is_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let path = |pairs| TrustStore::from_env(env(pairs)).map(|s| s.path().to_path_buf());
        assert_eq!(
            path(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]).unwrap(),
            PathBuf::from("/x/agent-tutorial/trusted.json")
        );
        assert_eq!(
            path(&[("XDG_CONFIG_HOME", "rel"), ("HOME", "/h")]).unwrap(),
            PathBuf::from("/h/.config/agent-tutorial/trusted.json")
        );
        assert!(matches!(path(&[]), Err(TrustError::NoConfigDir)));
    }
}
