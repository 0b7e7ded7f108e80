//! The state file of the request store: loaded and saved whole under the lock, bounded on
//! load.

use agent_workspace::{StateDir, StateLock, Workspace};
use serde::{Deserialize, Serialize};

use super::{ProtocolRequest, RequestError, RequestStatus, RequestStore};

/// The state file.
pub const REQUESTS_FILE: &str = ".agent_tutorial/requests.json";
const STATE_FOLDER: &str = ".agent_tutorial";
const FILE_NAME: &str = "requests.json";
const LOCK_NAME: &str = "requests.lock";
/// The largest content (a plan) a request may carry, in bytes.
pub const MAX_CONTENT_BYTES: usize = 16 * 1024;
/// The most requests kept; the oldest answered ones make room for new ones.
pub const MAX_REQUESTS: usize = 128;
/// The most of the state file that is read: every request at its largest, each byte of
/// content written as up to six by JSON, and room for the other fields.
pub const READ_LIMIT: u64 = (MAX_REQUESTS * (6 * MAX_CONTENT_BYTES + 1024)) as u64;

/// The whole file.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct State {
    /// The number of the last id handed out (ids are never reused, even after pruning).
    pub(super) next_id: u64,
    /// Oldest first.
    pub(super) requests: Vec<ProtocolRequest>,
}

impl State {
    /// Drops the oldest terminal request that is not its sender's latest plan (the plan
    /// gate reads that one) when the list is full; [`RequestError::Full`] when none can go.
    pub(super) fn make_room(&mut self) -> Result<(), RequestError> {
        if self.requests.len() < MAX_REQUESTS {
            return Ok(());
        }
        let latest_plan = |index: usize| {
            let r = &self.requests[index];
            !self.requests[index + 1..]
                .iter()
                .any(|later| later.kind == r.kind && later.from == r.from)
        };
        let prunable = (0..self.requests.len())
            .find(|&i| self.requests[i].status != RequestStatus::Pending && !latest_plan(i));
        match prunable {
            Some(index) => {
                self.requests.remove(index);
                Ok(())
            }
            None => Err(RequestError::Full),
        }
    }
}

/// The request store's folder, with its own lock file (the folder is shared with other
/// state).
pub(super) fn dir(workspace: &Workspace) -> StateDir {
    StateDir::new(workspace, STATE_FOLDER).with_lock_file(LOCK_NAME)
}

/// The list in the locked folder (empty when there is no file yet), bounded on load.
fn load(lock: &StateLock<'_>) -> Result<State, RequestError> {
    let state: State = lock.read_json(FILE_NAME, READ_LIMIT)?.unwrap_or_default();
    if state.requests.len() > MAX_REQUESTS {
        return Err(RequestError::Full);
    }
    Ok(state)
}

impl RequestStore {
    /// The state, read under the lock (so never half of a change).
    pub(super) fn load_locked(&self) -> Result<State, RequestError> {
        load(&self.state.lock()?)
    }

    /// Runs `f` on the state under the lock and saves the state when `f` returns `Ok` (also
    /// when its value is itself an error that must be recorded, like an expiry).
    pub(super) fn change<T>(
        &self,
        f: impl FnOnce(&mut State) -> Result<T, RequestError>,
    ) -> Result<T, RequestError> {
        let lock = self.state.lock()?;
        let mut state = load(&lock)?;
        let value = f(&mut state)?;
        lock.replace_json(FILE_NAME, &state)?;
        Ok(value)
    }
}
