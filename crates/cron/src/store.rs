//! The durable schedules on disk: `.agent_tutorial/crons.json`, read bounded and replaced
//! atomically under an advisory lock (`.agent_tutorial/crons.lock`), every path through the
//! workspace boundary — the workspace's [`StateDir`], as every store of the harness.
//!
//! The file is read again under the lock for every change, never cached: two processes
//! adding, cancelling or claiming a due run at once see each other's writes and lose nothing.
//! A record that no longer parses (edited by hand, a zone renamed) is skipped but written back
//! as it was, so nothing is lost by a later write.
//!
//! What is read back is checked by the rules a new schedule is added under: a prompt within
//! [`MAX_PROMPT_BYTES`] and without hidden characters, ids and the counter bounded
//! ([`agent_workspace::store::MAX_ID`]), and at most [`MAX_SCHEDULES`] usable records — the
//! ones past it are kept in the file but never run (a planted file of 3,000 schedules runs 50
//! at most).

use std::collections::BTreeSet;

use agent_workspace::store::{self, MAX_ID};
use agent_workspace::{Existing, Inside, PathError, StateDir, StoreError, Workspace};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::CronError;
use crate::schedule::{Durability, Schedule};
use crate::scheduler::{MAX_PROMPT_BYTES, MAX_SCHEDULES};

/// Where durable schedules are kept, workspace-relative.
pub const CRONS_FILE: &str = ".agent_tutorial/crons.json";
/// The lock every change of [`CRONS_FILE`] is made under, from any process.
pub const CRONS_LOCK: &str = ".agent_tutorial/crons.lock";
/// The folder both live in, and the lock's name in it.
const STATE_DIR: &str = ".agent_tutorial";
const LOCK_NAME: &str = "crons.lock";
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
        let mut taken = BTreeSet::new();
        // Ids of records skipped below are not handed out again either: fixing such a record
        // by hand must not make two schedules share an id.
        let mut reserved = BTreeSet::new();
        let mut usable = 0;
        let records = raw
            .schedules
            .into_iter()
            .map(|value| match check(&value) {
                Some(schedule) if usable < MAX_SCHEDULES && taken.insert(durable_id(&schedule)) => {
                    usable += 1;
                    Record::Good(schedule)
                }
                Some(schedule) => {
                    tracing::warn!(id = %schedule.id, "skipping a schedule of {CRONS_FILE}: over {MAX_SCHEDULES} schedules, or its id twice");
                    Record::Unreadable(value)
                }
                None => {
                    tracing::warn!(record = %value, "skipping an unreadable record of {CRONS_FILE}");
                    if let Some(id) = value.get("id").and_then(Value::as_str).and_then(store::parse_id) {
                        reserved.insert(id);
                    }
                    Record::Unreadable(value)
                }
            })
            .collect();
        reserved.extend(&taken);
        // The counter is only a hint: it must not hand out an id in use, and a planted one past
        // the bound is replaced by the store's own choice.
        let next_id = match (raw.next_id, store::next_id(&reserved)) {
            (hint, Some(free)) if (free..=MAX_ID).contains(&hint) => hint,
            (_, Some(free)) => free,
            (_, None) => MAX_ID.saturating_add(1),
        };
        Ok(Self { next_id, records })
    }

    /// Hands out the next durable id, `None` when the ids are used up.
    pub fn claim_id(&mut self) -> Option<u64> {
        let id = self.next_id;
        if id == 0 || id > MAX_ID {
            return None;
        }
        self.next_id = id + 1;
        Some(id)
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

/// A record is usable when it has every field, is durable with a bounded id, its prompt passes
/// the checks of [`check_prompt`], and its expression and zone still parse (the zone database
/// in a newer build could drop a name).
fn check(value: &Value) -> Option<Schedule> {
    let schedule: Schedule = serde_json::from_value(value.clone()).ok()?;
    if schedule.durability != Durability::Durable
        || store::parse_id(schedule.id.as_str()).is_none()
        || check_prompt(&schedule.prompt).is_err()
        || schedule.prompt.trim() != schedule.prompt
    {
        return None;
    }
    schedule.when().ok()?;
    Some(schedule)
}

/// The id of a checked durable record (its number; checked by [`check`]).
fn durable_id(schedule: &Schedule) -> u64 {
    store::parse_id(schedule.id.as_str()).unwrap_or(0)
}

/// The rules a prompt is held to, when added and when read back: not empty, at most
/// [`MAX_PROMPT_BYTES`], and no hidden character (control, bidi, invisible) but line breaks and
/// tabs. The prompt becomes a user turn and is shown in `cron list`.
pub(crate) fn check_prompt(prompt: &str) -> Result<(), CronError> {
    if prompt.trim().is_empty() {
        return Err(CronError::EmptyPrompt);
    }
    if prompt.len() > MAX_PROMPT_BYTES {
        return Err(CronError::PromptTooLong {
            len: prompt.len(),
            max: MAX_PROMPT_BYTES,
        });
    }
    if let Some(c) = prompt
        .chars()
        .find(|&c| c != '\n' && c != '\t' && store::is_hidden_char(c))
    {
        return Err(CronError::HiddenCharacter { code: u32::from(c) });
    }
    Ok(())
}

/// The file and its lock in one workspace.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    state: StateDir,
}

impl Store {
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            state: StateDir::new(workspace, STATE_DIR).with_lock_file(LOCK_NAME),
        }
    }

    /// Reads the file (no file yet: nothing scheduled). No lock is needed to read: writes
    /// replace the file by a rename, so a reader sees the old or the new one whole.
    pub fn read(&self) -> Result<Contents, CronError> {
        let path = self.state.workspace().inside(CRONS_FILE)?;
        self.read_at(self.state.workspace(), &path)
    }

    fn read_at(&self, workspace: &Workspace, path: &Inside) -> Result<Contents, CronError> {
        let text = match workspace.read_to_string(path, READ_LIMIT) {
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
        let lock = self.state.lock()?;
        // Through the boundary, not just joined: a symlink at the file's place is named an
        // escape (and is never followed either way).
        let path = lock.workspace().inside(CRONS_FILE)?;
        let before = self.read_at(lock.workspace(), &path)?;
        let mut after = before.clone();
        let value = change(&mut after)?;
        if after != before {
            let text = after.encode()?;
            lock.workspace()
                .write_atomic(&path, text.as_bytes(), Existing::Replace)
                .map_err(|err: PathError| CronError::from(err))?;
        }
        Ok(value)
    }
}

impl From<StoreError> for CronError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Path(source) => Self::Store { source },
            StoreError::Json { path, source } => Self::Corrupt { path, source },
            StoreError::Encode { source, .. } => Self::Encode { source },
            // Neither is met by this store (one file, replaced; never listed).
            other @ (StoreError::Exists { .. } | StoreError::TooManyEntries { .. }) => {
                Self::Store {
                    source: PathError::Io {
                        op: agent_workspace::Op::Write,
                        path: CRONS_FILE.to_string(),
                        source: std::io::Error::other(other.to_string()),
                    },
                }
            }
        }
    }
}
