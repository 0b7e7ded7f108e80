//! Writing a session file: one line at a time, sealed before it is appended.

use agent_workspace::{Existing, FileKind, StateDir, Workspace};
use sha2::{Digest, Sha256};

use crate::list::session_ids;
use crate::load::Loaded;
use crate::record::{Header, Line, SessionId};
use crate::seal::{Seal, SealStore};
use crate::{FOLDER, Limits, SessionError};

/// What [`SessionWriter::append`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// The line is in the file.
    Kept,
    /// A bound was reached just now: a [`Line::Truncated`] went in instead, and nothing more
    /// will (say so once).
    LimitReached,
    /// A bound was reached before: nothing is written any more.
    Stopped,
}

/// Room kept under the file and line bounds for the [`Line::Truncated`] line.
const RESERVE: u64 = 64;

/// Appends one session's lines to its file, sealing each.
#[derive(Debug)]
pub struct SessionWriter {
    workspace: Workspace,
    seals: SealStore,
    id: SessionId,
    limits: Limits,
    /// SHA-256 of the file so far.
    hasher: Sha256,
    bytes: u64,
    lines: usize,
    stopped: bool,
    /// Held while this writer lives: a second run on the same session is refused.
    _lock: std::fs::File,
}

impl SessionWriter {
    /// Starts a new session file with `header` (its id names the file), after removing the
    /// oldest sessions beyond [`Limits::sessions`].
    pub fn create(
        workspace: &Workspace,
        seals: SealStore,
        header: Header,
        limits: Limits,
    ) -> Result<Self, SessionError> {
        let id = SessionId::parse(&header.id).ok_or_else(|| SessionError::BadId {
            id: header.id.clone(),
        })?;
        prune(workspace, &seals, limits.sessions.saturating_sub(1))?;
        // Two sessions started in the same microsecond would share a file: the second fails.
        let file = StateDir::new(workspace, FOLDER).file(&id.file_name())?;
        if workspace.entry(&file)?.is_some() {
            return Err(SessionError::Exists {
                path: file.to_string(),
            });
        }
        let lock = seals.lock(&id, &file)?;
        let mut writer = Self {
            workspace: workspace.clone(),
            seals,
            id,
            limits,
            hasher: Sha256::new(),
            bytes: 0,
            lines: 0,
            stopped: false,
            _lock: lock,
        };
        writer.append(&Line::Header(header))?;
        Ok(writer)
    }

    /// Continues session `id`: takes its lock (another run on it refuses this one), loads it
    /// ([`crate::load`]: sealed, bounded, checked), replaces the file by its checked lines (a
    /// cut last line or a skipped one is gone), seals it anew, and goes on writing it.
    pub fn resume(
        workspace: &Workspace,
        seals: SealStore,
        id: &SessionId,
        limits: Limits,
    ) -> Result<(Self, Loaded), SessionError> {
        let file = StateDir::new(workspace, FOLDER).file(&id.file_name())?;
        let lock = seals.lock(id, &file)?;
        let loaded = crate::load(workspace, &seals, id, limits)?;
        let writer = Self::reopen(workspace, seals, &loaded, limits, lock)?;
        Ok((writer, loaded))
    }

    fn reopen(
        workspace: &Workspace,
        seals: SealStore,
        loaded: &Loaded,
        limits: Limits,
        lock: std::fs::File,
    ) -> Result<Self, SessionError> {
        let id = SessionId::parse(&loaded.header.id).ok_or_else(|| SessionError::BadId {
            id: loaded.header.id.clone(),
        })?;
        let mut content = Vec::new();
        for line in &loaded.lines {
            content.extend(encode(line)?);
        }
        let seal = Seal::of(&content);
        seals.write(&id, seal, None)?;
        let file = StateDir::new(workspace, FOLDER).file(&id.file_name())?;
        workspace.write_atomic(&file, &content, Existing::Replace)?;
        Ok(Self {
            workspace: workspace.clone(),
            seals,
            id,
            limits,
            hasher: Sha256::new_with_prefix(&content),
            bytes: content.len() as u64,
            lines: loaded.lines.len(),
            stopped: false,
            _lock: lock,
        })
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Appends `line`: sealed first (with the state before it), then written and flushed.
    pub fn append(&mut self, line: &Line) -> Result<Appended, SessionError> {
        if self.stopped {
            return Ok(Appended::Stopped);
        }
        let bytes = encode(line)?;
        let fits = bytes.len() <= self.limits.line_bytes
            && self.bytes + bytes.len() as u64 + RESERVE <= self.limits.file_bytes
            && self.lines + 2 <= self.limits.lines;
        if fits {
            self.write(&bytes)?;
            return Ok(Appended::Kept);
        }
        self.stopped = true;
        self.write(&encode(&Line::Truncated)?)?;
        Ok(Appended::LimitReached)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        let previous = (self.bytes > 0).then(|| Seal::from_hasher(&self.hasher, self.bytes));
        let mut next = self.hasher.clone();
        next.update(bytes);
        let total = self.bytes + bytes.len() as u64;
        self.seals
            .write(&self.id, Seal::from_hasher(&next, total), previous)?;
        let file = StateDir::new(&self.workspace, FOLDER).file(&self.id.file_name())?;
        self.workspace.append_private(&file, bytes)?;
        self.hasher = next;
        self.bytes = total;
        self.lines += 1;
        Ok(())
    }
}

/// One line as written: compact JSON and a line end (serde escapes every line end inside).
fn encode(line: &Line) -> Result<Vec<u8>, SessionError> {
    let mut bytes = serde_json::to_vec(line).map_err(SessionError::Encode)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Removes the oldest of the harness's own session files (and their seals) so at most `keep`
/// are left. Only sealed ones count and go: files planted with session names (say, dated in
/// the future) neither push the harness's sessions out nor are removed by it.
fn prune(workspace: &Workspace, seals: &SealStore, keep: usize) -> Result<(), SessionError> {
    let folder = StateDir::new(workspace, FOLDER);
    let mut ids = session_ids(&folder)?;
    ids.retain(|(id, kind)| *kind == FileKind::File && seals.has(id));
    let extra = ids.len().saturating_sub(keep);
    for (id, _) in ids.into_iter().take(extra) {
        let file = folder.file(&id.file_name())?;
        workspace.remove_file(&file)?;
        seals.remove(&id);
    }
    Ok(())
}
