//! Seals: for each session file the harness wrote, its length and SHA-256 after the last line
//! written, kept outside the workspace (the repository cannot forge one), so a file planted or
//! changed by anyone else is never taken for the harness's own.
//!
//! The seal is written *before* each line is appended and names the state before it too
//! (`previous`): a crash between the two leaves the file at the previous state (or with half a
//! line after it), which is still recognised, losing only the line being written.

use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::SessionError;
use crate::record::SessionId;

/// A seal file is a few hundred bytes.
const MAX_SEAL_BYTES: u64 = 4096;

/// A file's length and SHA-256 (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seal {
    /// Bytes.
    pub bytes: u64,
    /// SHA-256 of those bytes.
    pub sha256: String,
}

impl Seal {
    /// The seal of `content`.
    pub fn of(content: &[u8]) -> Self {
        Self {
            bytes: content.len() as u64,
            sha256: hex(&Sha256::digest(content)),
        }
    }

    /// The seal of what `hasher` has taken so far (`bytes` long).
    pub(crate) fn from_hasher(hasher: &Sha256, bytes: u64) -> Self {
        Self {
            bytes,
            sha256: hex(&hasher.clone().finalize()),
        }
    }
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SealFile {
    /// The content after the line being written.
    current: Seal,
    /// The content before it (`None` for the header, the first line).
    previous: Option<Seal>,
}

/// How a file's content matches its seal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sealed {
    /// Exactly what the harness last wrote: all of it is the harness's.
    Whole,
    /// The harness's content up to `bytes`, then a line it was writing when it stopped (a
    /// crash): only the first `bytes` are used.
    Prefix {
        /// How many bytes are the harness's.
        bytes: u64,
    },
    /// No seal: this machine's harness did not write the file.
    Unsealed,
    /// A seal that does not match: the file changed since.
    Changed,
}

/// The seals of one workspace's sessions, in
/// `<config>/agent-tutorial/sessions/<hash of the workspace path>/<id>.json`, 0700 folders and
/// 0600 files written by temp file and rename, read without following a link.
#[derive(Debug, Clone)]
pub struct SealStore {
    dir: PathBuf,
}

impl SealStore {
    /// The seals of the workspace at `root`, under the user's config folder `config` (the
    /// folder that holds `agent-tutorial/trusted.json`).
    pub fn new(config: &Path, root: &Path) -> Self {
        let key = hex(&Sha256::digest(root.as_os_str().as_encoded_bytes()));
        Self {
            dir: config
                .join("agent-tutorial")
                .join("sessions")
                .join(&key[..32]),
        }
    }

    fn path(&self, id: &SessionId) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    fn error(&self, path: &Path) -> impl Fn(io::Error) -> SessionError {
        let path = path.to_path_buf();
        move |source| SessionError::Seal {
            path: path.clone(),
            source,
        }
    }

    /// Records that the file of `id` holds `current` (and held `previous` just before).
    pub(crate) fn write(
        &self,
        id: &SessionId,
        current: Seal,
        previous: Option<Seal>,
    ) -> Result<(), SessionError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(self.error(&self.dir))?;
        let path = self.path(id);
        let temp = self
            .dir
            .join(format!(".{id}.json.tmp-{}", std::process::id()));
        let bytes =
            serde_json::to_vec(&SealFile { current, previous }).map_err(SessionError::Encode)?;
        let written = (|| {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&temp)?;
            file.write_all(&bytes)?;
            // No fsync: a seal is written per history line, and a flush to the disk each time
            // would put milliseconds of waiting into every round. Replacing a file by rename
            // gets its data written first on ext4 and XFS; if a crash still loses a seal, the
            // session is reported as changed and kept, never silently trusted.
            std::fs::rename(&temp, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written.map_err(self.error(&path))
    }

    /// Whether the harness sealed a file of `id` (a link is no seal).
    pub(crate) fn has(&self, id: &SessionId) -> bool {
        std::fs::symlink_metadata(self.path(id)).is_ok_and(|meta| meta.is_file())
    }

    /// Takes the lock of session `id` without waiting (`<id>.lock` next to its seal, outside
    /// the workspace): held while a run writes the session, so a second run on it is refused
    /// with [`SessionError::Busy`] naming `file`.
    pub(crate) fn lock(
        &self,
        id: &SessionId,
        file: &impl std::fmt::Display,
    ) -> Result<std::fs::File, SessionError> {
        use std::os::fd::AsRawFd as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(self.error(&self.dir))?;
        let path = self.dir.join(format!("{id}.lock"));
        let lock = agent_trust::open_private_lock(&path).map_err(self.error(&path))?;
        // SAFETY: `flock` on a descriptor this function owns for the whole call.
        let locked = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if locked {
            Ok(lock)
        } else {
            Err(SessionError::Busy {
                path: file.to_string(),
            })
        }
    }

    /// Forgets the seal of `id` (its file was removed).
    pub(crate) fn remove(&self, id: &SessionId) {
        let _ = std::fs::remove_file(self.path(id));
        let _ = std::fs::remove_file(self.dir.join(format!("{id}.lock")));
    }

    fn read(&self, id: &SessionId) -> Result<Option<SealFile>, SessionError> {
        let path = self.path(id);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path);
        let file = match file {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(self.error(&path)(err)),
        };
        let mut bytes = Vec::new();
        file.take(MAX_SEAL_BYTES)
            .read_to_end(&mut bytes)
            .map_err(self.error(&path))?;
        // A seal we cannot read vouches for nothing.
        Ok(serde_json::from_slice(&bytes).ok())
    }

    /// How `content`, the file of `id` as read now, matches its seal.
    pub fn check(&self, id: &SessionId, content: &[u8]) -> Result<Sealed, SessionError> {
        let Some(seal) = self.read(id)? else {
            return Ok(Sealed::Unsealed);
        };
        if Seal::of(content) == seal.current {
            return Ok(Sealed::Whole);
        }
        let Some(previous) = seal.previous else {
            return Ok(Sealed::Changed);
        };
        // The line being written may be missing or cut: what follows the previous state is
        // shorter than that line and holds no line end (a whole line would be a line the
        // seal does not know).
        let Ok(len) = usize::try_from(previous.bytes) else {
            return Ok(Sealed::Changed);
        };
        let whole = usize::try_from(seal.current.bytes).unwrap_or(0);
        let partial =
            content.len() >= len && content.len() < whole && !content[len..].contains(&b'\n');
        if partial && Seal::of(&content[..len]) == previous {
            Ok(Sealed::Prefix {
                bytes: previous.bytes,
            })
        } else {
            Ok(Sealed::Changed)
        }
    }
}
