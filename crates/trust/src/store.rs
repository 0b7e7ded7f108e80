//! `trusted.json` in the user's config directory: per workspace, per [`TrustKind`], the
//! fingerprint the user trusted and the one the harness last wrote.
//!
//! Outside every workspace, so a repository cannot trust itself; read without following a
//! final link, bounded, written 0600 by temp file + rename, and changed only under an
//! exclusive lock (`trusted.json.lock`), so twenty `trust` runs at once keep every entry.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, Write};

pub use crate::file::read_bounded;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::{TrustKind, Verdict};

/// The version this build writes; version 1 (hooks only) is still read.
pub const TRUST_FILE_VERSION: u32 = 2;
/// The trust file holds a few short entries per workspace; this is far beyond any real one.
const MAX_TRUST_FILE_BYTES: u64 = 16 << 20;

/// What is recorded for one workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceEntry {
    /// Kind → the fingerprint the user trusted with `agent-tutorial trust`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub trusted: BTreeMap<TrustKind, String>,
    /// Kind → the fingerprint of what the harness last wrote there itself.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub written: BTreeMap<TrustKind, String>,
}

impl WorkspaceEntry {
    fn verdict(&self, kind: TrustKind, fingerprint: &str) -> Verdict {
        let matches = |map: &BTreeMap<TrustKind, String>| {
            map.get(&kind)
                .is_some_and(|recorded| recorded == fingerprint)
        };
        if matches(&self.trusted) || matches(&self.written) {
            Verdict::Trusted
        } else if self.trusted.contains_key(&kind) || self.written.contains_key(&kind) {
            Verdict::Changed
        } else {
            Verdict::Untrusted
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    version: u32,
    /// Canonical workspace path → what is recorded there. Sorted, so the file diffs well.
    workspaces: BTreeMap<String, WorkspaceEntry>,
}

impl Default for TrustFile {
    fn default() -> Self {
        Self {
            version: TRUST_FILE_VERSION,
            workspaces: BTreeMap::new(),
        }
    }
}

/// Version 1: one hooks file per workspace.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFileV1 {
    workspaces: BTreeMap<String, HooksV1>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HooksV1 {
    hooks_sha256: String,
}

/// `trusted.json` in the user's config directory.
///
/// ```
/// use std::collections::BTreeMap;
///
/// use agent_trust::{TrustKind, TrustStore, Verdict};
///
/// let config = tempfile::tempdir().unwrap();
/// let store = TrustStore::at(config.path().join("trusted.json"));
/// let workspace = std::path::Path::new("/home/me/project");
/// assert_eq!(store.verdict(workspace, TrustKind::Hooks, "abc").unwrap(), Verdict::Untrusted);
///
/// store.trust(workspace, &BTreeMap::from([(TrustKind::Hooks, "abc".to_string())])).unwrap();
/// assert_eq!(store.verdict(workspace, TrustKind::Hooks, "abc").unwrap(), Verdict::Trusted);
/// // The hooks file changed since: the old trust does not carry over.
/// assert_eq!(store.verdict(workspace, TrustKind::Hooks, "def").unwrap(), Verdict::Changed);
/// ```
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// `$XDG_CONFIG_HOME/agent-tutorial/trusted.json`, else `$HOME/.config/...`. A relative
    /// `XDG_CONFIG_HOME` is ignored, as the XDG spec says.
    pub fn from_env(var: impl Fn(&str) -> Option<OsString>) -> Result<Self, StoreError> {
        let base = match var("XDG_CONFIG_HOME").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            _ => match var("HOME").map(PathBuf::from) {
                Some(home) if home.is_absolute() => home.join(".config"),
                _ => return Err(StoreError::NoConfigDir),
            },
        };
        Ok(Self::at(base.join("agent-tutorial").join("trusted.json")))
    }

    /// A store at `path` (tests, and callers that keep it elsewhere).
    pub fn at(path: PathBuf) -> Self {
        Self { path }
    }

    /// Where the file is: the `trust` command prints it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `fingerprint` is trusted for `kind` in the workspace at `root`.
    pub fn verdict(
        &self,
        root: &Path,
        kind: TrustKind,
        fingerprint: &str,
    ) -> Result<Verdict, StoreError> {
        let Some(key) = root.to_str() else {
            return Ok(Verdict::Untrusted);
        };
        Ok(match self.load()?.workspaces.get(key) {
            Some(entry) => entry.verdict(kind, fingerprint),
            None => Verdict::Untrusted,
        })
    }

    /// What is recorded for the workspace at `root` (empty when nothing is).
    pub fn entry(&self, root: &Path) -> Result<WorkspaceEntry, StoreError> {
        let key = workspace_key(root)?;
        Ok(self.load()?.workspaces.remove(&key).unwrap_or_default())
    }

    /// Records `fingerprints` as what the user trusted in the workspace at `root`, one per
    /// kind; the kinds not named keep what they had.
    pub fn trust(
        &self,
        root: &Path,
        fingerprints: &BTreeMap<TrustKind, String>,
    ) -> Result<(), StoreError> {
        let key = workspace_key(root)?;
        self.update(|file| {
            let entry = file.workspaces.entry(key).or_default();
            for (kind, fingerprint) in fingerprints {
                entry.trusted.insert(*kind, fingerprint.clone());
            }
        })
    }

    /// Records that the harness wrote content with `fingerprint` for `kind` at `root`.
    pub fn record_written(
        &self,
        root: &Path,
        kind: TrustKind,
        fingerprint: &str,
    ) -> Result<(), StoreError> {
        let key = workspace_key(root)?;
        self.update(|file| {
            file.workspaces
                .entry(key)
                .or_default()
                .written
                .insert(kind, fingerprint.to_string());
        })
    }

    /// Forgets everything recorded for the workspace at `root`; `false` when nothing was.
    pub fn revoke(&self, root: &Path) -> Result<bool, StoreError> {
        let key = workspace_key(root)?;
        let mut removed = false;
        self.update(|file| removed = file.workspaces.remove(&key).is_some())?;
        Ok(removed)
    }

    fn load(&self) -> Result<TrustFile, StoreError> {
        let Some(bytes) = read_bounded(&self.path, MAX_TRUST_FILE_BYTES)? else {
            return Ok(TrustFile::default());
        };
        let corrupt = |source| StoreError::Corrupt {
            path: self.path.clone(),
            source,
        };
        let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(corrupt)?;
        match value.get("version").and_then(serde_json::Value::as_u64) {
            Some(1) => {
                let mut value = value;
                if let Some(map) = value.as_object_mut() {
                    map.remove("version");
                }
                let old: TrustFileV1 = serde_json::from_value(value).map_err(corrupt)?;
                let workspaces = old
                    .workspaces
                    .into_iter()
                    .map(|(key, hooks)| {
                        let mut entry = WorkspaceEntry::default();
                        entry.trusted.insert(TrustKind::Hooks, hooks.hooks_sha256);
                        (key, entry)
                    })
                    .collect();
                Ok(TrustFile {
                    version: TRUST_FILE_VERSION,
                    workspaces,
                })
            }
            Some(v) if v == u64::from(TRUST_FILE_VERSION) => {
                serde_json::from_value(value).map_err(corrupt)
            }
            found => Err(StoreError::Version {
                path: self.path.clone(),
                found: found.unwrap_or(0),
            }),
        }
    }

    /// Runs `change` on the file under the exclusive lock and writes the result: the file is
    /// read again under the lock, so no concurrent change is lost.
    fn update(&self, change: impl FnOnce(&mut TrustFile)) -> Result<(), StoreError> {
        let write_error = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(write_error)?;
        let lock_path = self.path.with_extension("json.lock");
        let lock_error = |source| StoreError::Lock {
            path: lock_path.clone(),
            source,
        };
        let lock = crate::file::open_private_lock(&lock_path).map_err(lock_error)?;
        loop {
            // Released when `lock` is closed, also if this process dies.
            match flock_exclusive(lock.as_raw_fd()) {
                Ok(()) => break,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(lock_error(err)),
            }
        }
        let mut file = self.load()?;
        change(&mut file);
        let saved = self.save(&file);
        drop(lock);
        saved
    }

    /// Temp file (created new, so never through a planted link) + fsync + rename: a reader
    /// sees the old file or the new one, never half of one.
    fn save(&self, file: &TrustFile) -> Result<(), StoreError> {
        let write_error = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        if let Ok(meta) = std::fs::symlink_metadata(&self.path)
            && meta.file_type().is_symlink()
        {
            return Err(StoreError::Symlink {
                path: self.path.clone(),
            });
        }
        let mut text = serde_json::to_string_pretty(file).map_err(|e| write_error(e.into()))?;
        text.push('\n');
        // Under the lock only this process writes, so its own name is free but for a crash.
        let tmp = dir.join(format!(".trusted.json.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
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

/// `flock(fd, LOCK_EX)`.
fn flock_exclusive(fd: std::os::fd::RawFd) -> io::Result<()> {
    // SAFETY: `flock` only reads its two integer arguments; `fd` is open for the call.
    let rc = unsafe { libc::flock(fd, libc::LOCK_EX) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn workspace_key(root: &Path) -> Result<String, StoreError> {
    root.to_str()
        .map(str::to_string)
        .ok_or_else(|| StoreError::NonUtf8Workspace {
            path: root.to_path_buf(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, TrustStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::at(dir.path().join("agent-tutorial/trusted.json"));
        (dir, store)
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
        assert!(matches!(path(&[]), Err(StoreError::NoConfigDir)));
    }

    #[test]
    fn each_kind_is_trusted_on_its_own_and_the_harness_writes_count() {
        let (_dir, store) = store();
        let root = Path::new("/w");
        let v = |kind, fp: &str| store.verdict(root, kind, fp).unwrap();
        assert_eq!(v(TrustKind::Hooks, "h1"), Verdict::Untrusted);
        store
            .trust(
                root,
                &BTreeMap::from([(TrustKind::Hooks, "h1".to_string())]),
            )
            .unwrap();
        store
            .record_written(root, TrustKind::Schedules, "s1")
            .unwrap();
        assert_eq!(
            [
                v(TrustKind::Hooks, "h1"),
                v(TrustKind::Hooks, "h2"),
                v(TrustKind::Schedules, "s1"),
                v(TrustKind::Schedules, "s2"),
                v(TrustKind::Skills, "k1"),
            ],
            [
                Verdict::Trusted,
                Verdict::Changed,
                Verdict::Trusted,
                Verdict::Changed,
                Verdict::Untrusted
            ]
        );
        assert!(store.revoke(root).unwrap());
        assert_eq!(v(TrustKind::Hooks, "h1"), Verdict::Untrusted);
        assert!(!store.revoke(root).unwrap());
    }

    #[test]
    fn a_version_1_file_keeps_its_trusted_hooks() {
        let (_dir, store) = store();
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(
            store.path(),
            r#"{"version": 1, "workspaces": {"/w": {"hooks_sha256": "abc"}}}"#,
        )
        .unwrap();
        assert_eq!(
            store
                .verdict(Path::new("/w"), TrustKind::Hooks, "abc")
                .unwrap(),
            Verdict::Trusted
        );
    }

    #[test]
    fn parallel_writers_keep_every_entry_and_the_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, store) = store();
        std::thread::scope(|scope| {
            for i in 0..20 {
                let store = store.clone();
                scope.spawn(move || {
                    let root = PathBuf::from(format!("/w{i}"));
                    store
                        .trust(
                            &root,
                            &BTreeMap::from([(TrustKind::Skills, format!("fp{i}"))]),
                        )
                        .unwrap();
                });
            }
        });
        for i in 0..20 {
            assert_eq!(
                store
                    .verdict(
                        Path::new(&format!("/w{i}")),
                        TrustKind::Skills,
                        &format!("fp{i}")
                    )
                    .unwrap(),
                Verdict::Trusted
            );
        }
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_planted_link_is_never_followed() {
        let (dir, store) = store();
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "{}").unwrap();
        std::os::unix::fs::symlink(&target, store.path()).unwrap();
        assert!(matches!(
            store.verdict(Path::new("/w"), TrustKind::Hooks, "x"),
            Err(StoreError::Symlink { .. })
        ));
    }
}
