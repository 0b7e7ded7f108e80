//! The harness's own state on disk: a folder of records guarded by one lock file. Tasks, cron
//! schedules, job records and memory all keep their files through a [`StateDir`], so they
//! share one lock API and one set of guarantees:
//!
//! - every path goes through the boundary (the folder is resolved again on every use, so it
//!   may not be or become a symlink to outside), every file is opened no-follow, and a FIFO or
//!   a device is refused without blocking;
//! - reads are bounded (a limit per file, a limit on how many entries a listing holds);
//! - writes are atomic (temp file, fsync, rename) and create-only writes cannot both succeed
//!   ([`StateLock::create_json`]: `renameat2(RENAME_NOREPLACE)`, not look-then-rename);
//! - a read-check-write runs under [`StateDir::lock`] ([`StateLock`]), so ids are claimed
//!   under the lock ([`next_id`]) and no write is lost between processes;
//! - ids are bounded integers ([`MAX_ID`], [`parse_id`]): a planted `18446744073709551615.json`
//!   is not a record, and the arithmetic on ids cannot overflow.
//!
//! Readers take no lock: every file is replaced whole by a rename, so a reader sees each file
//! before or after a change, never half of one.

use std::collections::BTreeSet;
use std::io;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::boundary::{Inside, Workspace};
use crate::error::{FileKind, PathError};
use crate::fs::{Entry, Existing};
use crate::lock::FileLock;

/// The largest id a numbered record may have: nine digits, so an id is parsed without any
/// chance of overflow and `id + 1` always fits.
pub const MAX_ID: u64 = 999_999_999;

/// The lock file's name inside a state folder, unless [`StateDir::with_lock_file`] says
/// otherwise.
pub const LOCK_FILE: &str = ".lock";

/// Entries a listing of a state folder reads at most: far over what any store keeps (tasks
/// stop at 1,000), so only a folder someone filled on purpose reaches it.
pub const MAX_ENTRIES: usize = 20_000;

/// Why a state file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The boundary or the file system refused (escape, not a file, too large, I/O).
    #[error(transparent)]
    Path(#[from] PathError),
    /// The file is not JSON of the record's shape.
    #[error("{path} is not a valid record: {source}")]
    Json {
        /// The file, workspace-relative.
        path: String,
        /// The parser's error (line and column).
        #[source]
        source: serde_json::Error,
    },
    /// The record could not be turned into JSON (a map with non-string keys, a float NaN).
    #[error("cannot encode {path}: {source}")]
    Encode {
        /// The file that was to be written.
        path: String,
        /// The encoder's error.
        #[source]
        source: serde_json::Error,
    },
    /// A create-only write found the name taken.
    #[error("{path} exists already")]
    Exists {
        /// The name that is taken.
        path: String,
    },
    /// The folder holds more entries than a listing reads.
    #[error("{path} holds more than {limit} entries; remove what does not belong there")]
    TooManyEntries {
        /// The folder.
        path: String,
        /// The most entries a listing reads ([`MAX_ENTRIES`]).
        limit: usize,
    },
}

/// `7` -> 7. Anything else — empty, a sign, a leading zero, more than nine digits, a
/// non-digit — is not an id, so two spellings never name one record and a planted huge number
/// is simply not one of ours.
pub fn parse_id(digits: &str) -> Option<u64> {
    let plain = !digits.is_empty()
        && digits.len() <= 9
        && !digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit());
    if !plain {
        return None;
    }
    digits.parse().ok()
}

/// The id a new record gets, given the ids in use: one past the largest, so ids are not
/// reused; when the largest is [`MAX_ID`] (planted there), the smallest free one instead, so a
/// single planted name cannot stop every future create. `None` only when every id is taken.
pub fn next_id(taken: &BTreeSet<u64>) -> Option<u64> {
    match taken.last() {
        None => Some(1),
        Some(&largest) if largest < MAX_ID => Some(largest + 1),
        Some(_) => (1..=MAX_ID).find(|id| !taken.contains(id)),
    }
}

/// Whether `c` may not appear in a stored line of text that reaches a prompt or a terminal:
/// control characters (C0, DEL, C1), bidirectional overrides and isolates, and the invisible
/// characters that make two texts look alike (zero-width, variation selectors, tags, Hangul
/// fillers, the combining grapheme joiner, the soft hyphen).
pub fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// A folder of the harness's state inside a workspace (`.tasks`, `.agent_tutorial/jobs`, …)
/// and the lock file that guards it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct StateDir {
    workspace: Workspace,
    folder: String,
    lock_file: String,
}

impl StateDir {
    /// The folder `folder` (workspace-relative) with its lock at `<folder>/.lock`.
    pub fn new(workspace: &Workspace, folder: &str) -> Self {
        Self {
            workspace: workspace.clone(),
            folder: folder.to_string(),
            lock_file: LOCK_FILE.to_string(),
        }
    }

    /// The lock file's name inside the folder (a store that shares its folder with others).
    pub fn with_lock_file(mut self, name: &str) -> Self {
        self.lock_file = name.to_string();
        self
    }

    /// The workspace the folder is in.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The folder's workspace-relative name, as given.
    pub fn name(&self) -> &str {
        &self.folder
    }

    /// The folder, checked by the boundary now.
    pub fn folder(&self) -> Result<Inside, PathError> {
        self.workspace.inside(&self.folder)
    }

    /// The file `name` (one plain component) in the folder, checked now.
    pub fn file(&self, name: &str) -> Result<Inside, PathError> {
        child(&self.folder()?, name)
    }

    /// Whether the folder exists; something else at its place is refused.
    pub fn exists(&self) -> Result<bool, PathError> {
        let folder = self.folder()?;
        match self.workspace.kind(&folder)? {
            None => Ok(false),
            Some(FileKind::Directory) => Ok(true),
            Some(kind) => Err(PathError::NotAFile {
                path: folder.to_string(),
                kind,
            }),
        }
    }

    /// The folder's entries, sorted by name (none when it does not exist), at most
    /// [`MAX_ENTRIES`].
    pub fn list(&self) -> Result<Vec<Entry>, StoreError> {
        if !self.exists()? {
            return Ok(Vec::new());
        }
        list_bounded(&self.workspace, &self.folder()?)
    }

    /// The record in `name` (at most `limit` bytes), `None` when there is no such file.
    pub fn read_json<T: DeserializeOwned>(
        &self,
        name: &str,
        limit: u64,
    ) -> Result<Option<T>, StoreError> {
        read_json(&self.workspace, &self.file(name)?, limit)
    }

    /// The folder's own [`crate::Stamp`] (`None` when it does not exist), resolved now.
    pub fn stamp(&self) -> Result<Option<crate::Stamp>, PathError> {
        self.workspace.stamp(&self.folder()?)
    }

    /// The folder's change counter, read from its lock file without taking the lock; `None`
    /// when there is no lock file yet (nothing was ever changed under it).
    pub fn generation(&self) -> Result<Option<u64>, PathError> {
        let path = self.file(&self.lock_file)?;
        let file = match self.workspace.open_regular(&path) {
            Ok(file) => file,
            Err(err) if err.is_not_found() => return Ok(None),
            Err(err) => return Err(err),
        };
        file.generation()
            .map(Some)
            .map_err(|source| PathError::io(crate::error::Op::Read, &path, source))
    }

    /// Creates the folder if needed and takes its lock, waiting for whoever holds it. The lock
    /// is per open file, so two stores in one process exclude each other as two processes do.
    pub fn lock(&self) -> Result<StateLock<'_>, PathError> {
        let folder = self.folder()?;
        self.workspace.create_dir_all(&folder)?;
        // Resolved again once it exists: it must still be inside (a symlink planted between
        // the two looks is caught here, and every open is no-follow anyway).
        let folder = self.folder()?;
        let lock = self
            .workspace
            .lock_exclusive(&child(&folder, &self.lock_file)?)?;
        Ok(StateLock {
            state: self,
            folder,
            lock,
        })
    }
}

/// A state folder while its lock is held; dropping it unlocks.
#[derive(Debug)]
pub struct StateLock<'a> {
    state: &'a StateDir,
    folder: Inside,
    lock: FileLock,
}

impl StateLock<'_> {
    /// The folder, as resolved when the lock was taken.
    pub fn folder(&self) -> &Inside {
        &self.folder
    }

    /// The workspace the folder is in.
    pub fn workspace(&self) -> &Workspace {
        &self.state.workspace
    }

    /// The file `name` (one plain component) in the folder.
    pub fn file(&self, name: &str) -> Result<Inside, PathError> {
        child(&self.folder, name)
    }

    /// The folder's own [`crate::Stamp`], as it is now.
    pub fn stamp(&self) -> Result<Option<crate::Stamp>, PathError> {
        self.workspace().stamp(&self.folder)
    }

    /// The folder's change counter (see [`StateDir::generation`]).
    pub fn generation(&self) -> Result<u64, PathError> {
        self.lock
            .generation()
            .map_err(|source| self.lock_error(source))
    }

    /// Counts one change: every cache of this folder (in any process) is old from now on.
    pub fn bump_generation(&self) -> Result<u64, PathError> {
        self.lock
            .bump_generation()
            .map_err(|source| self.lock_error(source))
    }

    fn lock_error(&self, source: io::Error) -> PathError {
        let path = format!("{}/{}", self.folder, self.state.lock_file);
        PathError::io(crate::error::Op::Lock, path, source)
    }

    /// The folder's entries, sorted by name, at most [`MAX_ENTRIES`].
    pub fn list(&self) -> Result<Vec<Entry>, StoreError> {
        list_bounded(self.workspace(), &self.folder)
    }

    /// The record in `name` (at most `limit` bytes), `None` when there is no such file.
    pub fn read_json<T: DeserializeOwned>(
        &self,
        name: &str,
        limit: u64,
    ) -> Result<Option<T>, StoreError> {
        read_json(self.workspace(), &self.file(name)?, limit)
    }

    /// Writes `value` to `name` as pretty JSON and a newline, replacing what is there
    /// atomically.
    pub fn replace_json<T: Serialize>(&self, name: &str, value: &T) -> Result<(), StoreError> {
        self.write_json(name, value, Existing::Replace)
    }

    /// Writes `value` to `name` only if nothing is there ([`StoreError::Exists`] otherwise),
    /// atomically: the file appears whole or not at all, and of two writers racing for one
    /// name exactly one succeeds.
    pub fn create_json<T: Serialize>(&self, name: &str, value: &T) -> Result<(), StoreError> {
        self.write_json(name, value, Existing::Refuse)
    }

    fn write_json<T: Serialize>(
        &self,
        name: &str,
        value: &T,
        existing: Existing,
    ) -> Result<(), StoreError> {
        let path = self.file(name)?;
        let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| StoreError::Encode {
            path: path.to_string(),
            source,
        })?;
        bytes.push(b'\n');
        write(self.workspace(), &path, &bytes, existing)
    }

    /// Writes raw bytes to `name` only if nothing is there, atomically (see
    /// [`Self::create_json`]).
    pub fn create_bytes(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        write(self.workspace(), &self.file(name)?, bytes, Existing::Refuse)
    }

    /// Removes the temporary files a killed writer left: holding the lock means no write of a
    /// store that locks is under way. Failures are logged, never fatal.
    pub fn remove_leftovers(&self) {
        if let Err(err) = self.workspace().remove_leftovers(&self.folder) {
            tracing::warn!(
                "{}: cannot remove leftover temp files: {err}",
                self.state.folder
            );
        }
    }
}

fn child(folder: &Inside, name: &str) -> Result<Inside, PathError> {
    folder.child(name).ok_or_else(|| PathError::Escape {
        path: format!("{folder}/{name}"),
    })
}

fn write(
    workspace: &Workspace,
    path: &Inside,
    bytes: &[u8],
    existing: Existing,
) -> Result<(), StoreError> {
    match workspace.write_atomic(path, bytes, existing) {
        Err(PathError::Io { source, .. }) if source.kind() == io::ErrorKind::AlreadyExists => {
            Err(StoreError::Exists {
                path: path.to_string(),
            })
        }
        other => Ok(other?),
    }
}

fn read_json<T: DeserializeOwned>(
    workspace: &Workspace,
    path: &Inside,
    limit: u64,
) -> Result<Option<T>, StoreError> {
    let bytes = match workspace.read_bytes(path, limit) {
        Ok(bytes) => bytes,
        Err(err) if err.is_not_found() => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| StoreError::Json {
            path: path.to_string(),
            source,
        })
}

fn list_bounded(workspace: &Workspace, folder: &Inside) -> Result<Vec<Entry>, StoreError> {
    let entries = workspace.list_dir_bounded(folder, MAX_ENTRIES)?;
    if entries.len() > MAX_ENTRIES {
        return Err(StoreError::TooManyEntries {
            path: folder.to_string(),
            limit: MAX_ENTRIES,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_plain_bounded_numbers() {
        let parsed: Vec<Option<u64>> = [
            "7",
            "999999999",
            "1000000000",
            "18446744073709551615",
            "07",
            "0",
            "",
            "+7",
            "7 ",
            "٣",
        ]
        .into_iter()
        .map(parse_id)
        .collect();
        assert_eq!(
            parsed,
            vec![
                Some(7),
                Some(999_999_999),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn the_next_id_follows_the_largest_or_fills_the_first_gap_at_the_end() {
        let ids = |list: &[u64]| list.iter().copied().collect::<BTreeSet<u64>>();
        assert_eq!(
            [
                next_id(&ids(&[])),
                next_id(&ids(&[1, 2, 5])),
                next_id(&ids(&[1, 2, MAX_ID])),
            ],
            [Some(1), Some(6), Some(3)]
        );
    }

    #[test]
    fn hidden_characters_are_the_control_bidi_and_invisible_ones() {
        let text = "a\u{1b}b\u{202E}c\u{FE0F}d\u{E0101}e\u{3164}f\u{115F}g\u{034F}h\u{200B}i é 中";
        let hidden: String = text.chars().filter(|c| is_hidden_char(*c)).collect();
        assert_eq!(
            hidden,
            "\u{1b}\u{202E}\u{FE0F}\u{E0101}\u{3164}\u{115F}\u{034F}\u{200B}"
        );
    }
}
