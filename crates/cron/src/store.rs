//! The durable schedules on disk: `.agent_tutorial/crons.json`, read bounded and replaced
//! atomically under an advisory lock (`.agent_tutorial/crons.lock`), every path through the
//! workspace boundary — the memory store's technique, with the workspace's own helpers.
//!
//! The file is read again under the lock for every change, never cached: two processes
//! adding, cancelling or claiming a due run at once see each other's writes and lose nothing.
//! A record that no longer parses (edited by hand, a zone renamed) is skipped but written back
//! as it was, so nothing is lost by a later write.

use agent_workspace::{Existing, Inside, PathError, Workspace};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::CronError;
use crate::schedule::{Durability, Schedule};

pub const CRONS_FILE: &str = ".agent_tutorial/crons.json";
pub const CRONS_LOCK: &str = ".agent_tutorial/crons.lock";
/// The most of the file that is read: far over what [`crate::MAX_SCHEDULES`] prompts of
/// [`crate::MAX_PROMPT_BYTES`] take, so only a file someone else wrote can hit it.
pub const READ_LIMIT: u64 = 1024 * 1024;
const FORMAT_VERSION: u32 = 1;

/// The file as JSON: records stay raw values until each is checked on its own.
#[derive(Debug, Serialize, Deserialize)]
struct RawFile {
    version: u32,
    next_id: u64,
    schedules: Vec<Value>,
}

/// One record of the file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Record {
    Good(Schedule),
    /// Kept byte-for-byte (as a value) and written back; never shown or run.
    Unreadable(Value),
}

/// What the file holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Contents {
    /// The number the next durable schedule gets.
    pub next_id: u64,
    pub records: Vec<Record>,
}

impl Default for Contents {
    /// No file yet: the first durable schedule is `1`.
    fn default() -> Self {
        Self {
            next_id: 1,
            records: Vec::new(),
        }
    }
}

impl Contents {
    fn decode(text: &str) -> Result<Self, serde_json::Error> {
        let raw: RawFile = serde_json::from_str(text)?;
        let mut next_id = raw.next_id.max(1);
        let records = raw
            .schedules
            .into_iter()
            .map(|value| match check(&value) {
                Some(schedule) => {
                    // A hand-edited counter must not hand out an id in use.
                    if let Some(n) = schedule.id.durable_number() {
                        next_id = next_id.max(n.saturating_add(1));
                    }
                    Record::Good(schedule)
                }
                None => {
                    tracing::warn!(record = %value, "skipping an unreadable record of {CRONS_FILE}");
                    Record::Unreadable(value)
                }
            })
            .collect();
        Ok(Self { next_id, records })
    }

    fn encode(&self) -> Result<String, CronError> {
        let schedules = self
            .records
            .iter()
            .map(|record| match record {
                Record::Good(schedule) => serde_json::to_value(schedule),
                Record::Unreadable(value) => Ok(value.clone()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|source| CronError::Encode { source })?;
        let raw = RawFile {
            version: FORMAT_VERSION,
            next_id: self.next_id,
            schedules,
        };
        let mut text =
            serde_json::to_string_pretty(&raw).map_err(|source| CronError::Encode { source })?;
        text.push('\n');
        Ok(text)
    }

    pub fn schedules(&self) -> impl Iterator<Item = &Schedule> {
        self.records.iter().filter_map(|record| match record {
            Record::Good(schedule) => Some(schedule),
            Record::Unreadable(_) => None,
        })
    }

    pub fn schedules_mut(&mut self) -> impl Iterator<Item = &mut Schedule> {
        self.records.iter_mut().filter_map(|record| match record {
            Record::Good(schedule) => Some(schedule),
            Record::Unreadable(_) => None,
        })
    }

    pub fn unreadable(&self) -> usize {
        self.records
            .iter()
            .filter(|r| matches!(r, Record::Unreadable(_)))
            .count()
    }
}

/// A record is usable when it has every field, is durable, and its expression and zone still
/// parse (the zone database in a newer build could drop a name).
fn check(value: &Value) -> Option<Schedule> {
    let schedule: Schedule = serde_json::from_value(value.clone()).ok()?;
    if schedule.durability != Durability::Durable || schedule.id.durable_number().is_none() {
        return None;
    }
    schedule.when().ok()?;
    Some(schedule)
}

/// The file and its lock in one workspace.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    workspace: Workspace,
}

impl Store {
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.clone(),
        }
    }

    /// Reads the file (no file yet: nothing scheduled). No lock is needed to read: writes
    /// replace the file by a rename, so a reader sees the old or the new one whole.
    pub fn read(&self) -> Result<Contents, CronError> {
        let path = self.workspace.inside(CRONS_FILE)?;
        self.read_at(&path)
    }

    fn read_at(&self, path: &Inside) -> Result<Contents, CronError> {
        let text = match self.workspace.read_to_string(path, READ_LIMIT) {
            Ok(text) => text,
            Err(err) if err.is_not_found() => return Ok(Contents::default()),
            Err(err) => return Err(err.into()),
        };
        Contents::decode(&text).map_err(|source| CronError::Corrupt {
            path: path.to_string(),
            source,
        })
    }

    /// Runs `change` on the current contents under the lock and writes the result when it
    /// differs. An error from `change` (or a file that cannot be read) writes nothing.
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut Contents) -> Result<T, CronError>,
    ) -> Result<T, CronError> {
        let lock_path = self.workspace.inside(CRONS_LOCK)?;
        let lock = self.workspace.open_lock(&lock_path)?;
        lock.lock().map_err(|source| CronError::Lock {
            path: lock_path.to_string(),
            source,
        })?;
        // Resolved after the lock is held: the folder was just created, and must still be
        // inside the workspace.
        let result = self.workspace.inside(CRONS_FILE).map_err(CronError::from);
        let result = result.and_then(|path| {
            let before = self.read_at(&path)?;
            let mut after = before.clone();
            let value = change(&mut after)?;
            if after != before {
                let text = after.encode()?;
                self.workspace
                    .write_atomic(&path, text.as_bytes(), Existing::Replace)
                    .map_err(|err: PathError| CronError::from(err))?;
            }
            Ok(value)
        });
        let _ = lock.unlock();
        result
    }
}
