//! `agent-tutorial sessions list` and `--continue`: the workspace's sessions, newest last.

use agent_workspace::{FileKind, StateDir, Workspace};

use crate::load::{parse, read};
use crate::record::{Header, Line, SessionId};
use crate::seal::{SealStore, Sealed};
use crate::{FOLDER, Limits, SessionError};

/// Whether a listed session can be continued, and if not why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Written by this harness, unchanged: `--resume` takes it.
    Sealed,
    /// Not written by this machine's harness.
    Unsealed,
    /// Changed since the harness wrote it.
    Changed,
    /// A link, not a file: never read.
    Linked,
    /// Stopped at a size bound.
    Truncated,
    /// Could not be read or is not a session file: why.
    Unreadable(String),
}

/// One session as `sessions list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its id.
    pub id: SessionId,
    /// Its header, when the file could be read.
    pub header: Option<Header>,
    /// The person's turns in it.
    pub turns: usize,
    /// Whether it can be continued.
    pub status: Status,
}

/// The session files' ids and kinds in `folder`, oldest first (ids sort by start time).
pub(crate) fn session_ids(folder: &StateDir) -> Result<Vec<(SessionId, FileKind)>, SessionError> {
    Ok(folder
        .list()?
        .into_iter()
        .filter_map(|entry| SessionId::from_file_name(&entry.name).map(|id| (id, entry.kind)))
        .collect())
}

/// The workspace's sessions, oldest first: the newest [`Limits::sessions`] at most, each
/// read (bounded) and checked against its seal.
pub fn list(
    workspace: &Workspace,
    seals: &SealStore,
    limits: Limits,
) -> Result<Vec<Listed>, SessionError> {
    let ids = session_ids(&StateDir::new(workspace, FOLDER))?;
    let skip = ids.len().saturating_sub(limits.sessions);
    Ok(ids
        .into_iter()
        .skip(skip)
        .map(|(id, kind)| describe(workspace, seals, id, kind, limits))
        .collect())
}

fn describe(
    workspace: &Workspace,
    seals: &SealStore,
    id: SessionId,
    kind: FileKind,
    limits: Limits,
) -> Listed {
    let listed = |header, turns, status| Listed {
        id: id.clone(),
        header,
        turns,
        status,
    };
    if kind == FileKind::Symlink {
        return listed(None, 0, Status::Linked);
    }
    let (path, bytes) = match read(workspace, &id, limits) {
        Ok(read) => read,
        Err(err) => return listed(None, 0, Status::Unreadable(err.to_string())),
    };
    let sealed = match seals.check(&id, &bytes) {
        Ok(sealed) => sealed,
        Err(err) => return listed(None, 0, Status::Unreadable(err.to_string())),
    };
    let content = match sealed {
        Sealed::Prefix { bytes: keep } => &bytes[..usize::try_from(keep).unwrap_or(0)],
        _ => &bytes[..],
    };
    match parse(&path, &id, content, limits) {
        Ok(loaded) => {
            let status = match sealed {
                Sealed::Unsealed => Status::Unsealed,
                Sealed::Changed => Status::Changed,
                _ if loaded.lines.contains(&Line::Truncated) => Status::Truncated,
                _ => Status::Sealed,
            };
            listed(Some(loaded.header), loaded.turns, status)
        }
        Err(err) => listed(None, 0, Status::Unreadable(err.to_string())),
    }
}

/// The newest session of the workspace (`--continue`), whatever its state: loading it says
/// why it cannot be continued, rather than an older one being taken silently.
pub fn latest(workspace: &Workspace) -> Result<SessionId, SessionError> {
    session_ids(&StateDir::new(workspace, FOLDER))?
        .pop()
        .map(|(id, _)| id)
        .ok_or(SessionError::NoSessions)
}
