//! The scheduler: adds, lists and cancels schedules, and answers "what is due now?".
//!
//! Nothing here runs on its own: no timer, no task. The session that drives the agent sleeps
//! until [`Scheduler::next_fire_time`] and asks [`Scheduler::due`] when the agent is idle, so a
//! scheduled prompt can never land in the middle of a turn, and tests drive time with an
//! injected [`Clock`] (the workspace's, read as wall time).

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use agent_trust::{TrustAll, TrustKind, WorkspaceTrust};
use agent_workspace::{Clock, Workspace};
use jiff::Timestamp;

use crate::error::CronError;
use crate::schedule::{Due, Durability, Schedule, ScheduleId};
use crate::store::{Contents, Record, Store, check_prompt};
use crate::trust_gate;
use crate::when::{CronExpr, Zone, next_fire};

/// Schedules of one kind (durable, or session) at most.
pub const MAX_SCHEDULES: usize = 50;
/// The longest prompt a schedule keeps.
pub const MAX_PROMPT_BYTES: usize = 4000;
/// Missed fire times are counted up to this many; past it the count stops (a `* * * * *`
/// schedule down for a year would otherwise walk half a million instants).
pub const MAX_COUNTED_MISSES: u32 = 1000;

/// What `schedule_cron` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSchedule {
    /// A 5-field cron expression.
    pub cron: String,
    /// What runs as a user turn when it fires.
    pub prompt: String,
    /// An IANA name; `None` means [`crate::DEFAULT_TIMEZONE`].
    pub timezone: Option<String>,
    /// Whether it outlives the process.
    pub durability: Durability,
}

#[derive(Debug, Default)]
struct SessionSchedules {
    /// The number of the last session id handed out.
    last_id: u64,
    schedules: Vec<Schedule>,
}

/// Durable schedules in the workspace's `crons.json`, session ones in memory.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use agent_cron::{Durability, ManualClock, NewSchedule, Scheduler, Timestamp};
/// use agent_workspace::Workspace;
///
/// let dir = tempfile::tempdir().unwrap();
/// let start: Timestamp = "2026-03-02T08:58:00Z".parse().unwrap();
/// let clock = Arc::new(ManualClock::new(start));
/// let scheduler = Scheduler::new(&Workspace::new(dir.path()).unwrap(), clock.clone());
/// scheduler
///     .add(NewSchedule {
///         cron: "0 9 * * 1-5".into(),
///         prompt: "Summarise yesterday's commits.".into(),
///         timezone: None,
///         durability: Durability::Session,
///     })
///     .unwrap();
///
/// assert!(scheduler.due().unwrap().is_empty());
/// clock.advance(Duration::from_secs(120));
/// let due = scheduler.due().unwrap();
/// assert_eq!(due.len(), 1);
/// assert_eq!(
///     due[0].marker(),
///     "[scheduled run of cron s1 (`0 9 * * 1-5` UTC), due 2026-03-02 09:00 UTC]"
/// );
/// // Handed out once: asking again finds nothing until the next fire time.
/// assert!(scheduler.due().unwrap().is_empty());
/// ```
pub struct Scheduler {
    store: Store,
    session: Mutex<SessionSchedules>,
    clock: Arc<dyn Clock>,
    /// Whether the durable schedules on disk may run (see [`crate::trust_gate`]).
    trust: Arc<dyn WorkspaceTrust>,
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler")
            .field("store", &self.store)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Scheduler {
    /// Durable schedules in `workspace`, "now" read from `clock`, every durable schedule
    /// trusted until [`Scheduler::trust`] says otherwise.
    pub fn new(workspace: &Workspace, clock: Arc<dyn Clock>) -> Self {
        Self {
            store: Store::new(workspace),
            session: Mutex::default(),
            clock,
            trust: Arc::new(TrustAll),
        }
    }

    /// The clock's wall time as a `jiff` instant (cron's calendar arithmetic is jiff's). A
    /// wall time outside jiff's range (years -9999..=9999) is held at its nearest end.
    fn now(&self) -> Timestamp {
        wall_timestamp(self.clock.wall())
    }

    /// Runs durable schedules only when `trust` says so (the default trusts all: a library
    /// caller brings its own workspace; the CLI passes the user's trust store).
    pub fn trust(mut self, trust: Arc<dyn WorkspaceTrust>) -> Self {
        self.trust = trust;
        self
    }

    fn session(&self) -> std::sync::MutexGuard<'_, SessionSchedules> {
        // Every change to the list is a single push, retain or field write: a panic cannot
        // leave it half-changed, so a poisoned lock is still safe to use.
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks `new`, computes its first fire time after now, and stores it.
    pub fn add(&self, new: NewSchedule) -> Result<Schedule, CronError> {
        let expr = CronExpr::parse(&new.cron)?;
        let zone = match new.timezone.as_deref().map(str::trim) {
            None | Some("") => Zone::utc(),
            Some(name) => Zone::parse(name)?,
        };
        let prompt = new.prompt.trim().to_string();
        check_prompt(&prompt)?;
        let now = self.now();
        let next = next_fire(&expr, &zone, now)?;
        let make = |id| Schedule {
            id,
            cron: expr.as_str().to_string(),
            prompt: prompt.clone(),
            timezone: zone.name().to_string(),
            durability: new.durability,
            next_fire_utc: next,
            created: now,
        };
        let too_many = |kind| CronError::TooMany {
            kind,
            max: MAX_SCHEDULES,
        };
        match new.durability {
            Durability::Durable => self.store.update(|contents| {
                if contents.schedules().count() >= MAX_SCHEDULES {
                    return Err(too_many("durable"));
                }
                let was = trust_gate::verdict(contents, &*self.trust);
                let id = contents.claim_id().ok_or_else(|| too_many("durable"))?;
                let schedule = make(ScheduleId::durable(id));
                contents.records.push(Record::Good(schedule.clone()));
                trust_gate::record_written(was, contents, &*self.trust);
                Ok(schedule)
            }),
            Durability::Session => {
                let mut session = self.session();
                if session.schedules.len() >= MAX_SCHEDULES {
                    return Err(too_many("session"));
                }
                // At most 50 at a time and one per call: the counter cannot come near the end.
                session.last_id = session.last_id.saturating_add(1);
                let schedule = make(ScheduleId::session(session.last_id));
                session.schedules.push(schedule.clone());
                Ok(schedule)
            }
        }
    }

    /// Every schedule, durable ones first, each kind by id.
    pub fn list(&self) -> Result<Vec<Schedule>, CronError> {
        let mut all: Vec<Schedule> = self.store.read()?.schedules().cloned().collect();
        all.extend(self.session().schedules.iter().cloned());
        all.sort_by_key(|s| s.id.sort_key());
        Ok(all)
    }

    /// Removes the schedule `id` and returns it.
    pub fn cancel(&self, id: &ScheduleId) -> Result<Schedule, CronError> {
        let not_found = || CronError::NotFound { id: id.clone() };
        if id.durable_number().is_none() {
            let mut session = self.session();
            let at = session
                .schedules
                .iter()
                .position(|s| &s.id == id)
                .ok_or_else(not_found)?;
            return Ok(session.schedules.remove(at));
        }
        self.store.update(|contents| {
            let was = trust_gate::verdict(contents, &*self.trust);
            let at = contents
                .records
                .iter()
                .position(|r| matches!(r, Record::Good(s) if &s.id == id))
                .ok_or_else(not_found)?;
            let removed = match contents.records.remove(at) {
                Record::Good(schedule) => Ok(schedule),
                Record::Unreadable(_) => Err(not_found()),
            };
            trust_gate::record_written(was, contents, &*self.trust);
            removed
        })
    }

    /// The earliest next fire time of any schedule (durable or session), `None` when there is
    /// none: the session sleeps until then (on its clock) and asks [`Scheduler::due`]. Reads
    /// the durable file without its lock, like the look in `due`.
    pub fn next_fire_time(&self) -> Result<Option<Timestamp>, CronError> {
        let durable = self
            .store
            .read()?
            .schedules()
            .map(|s| s.next_fire_utc)
            .min();
        let session = self
            .session()
            .schedules
            .iter()
            .map(|s| s.next_fire_utc)
            .min();
        Ok(durable.into_iter().chain(session).min())
    }

    /// The clock this scheduler reads "now" from.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The schedules due at the clock's now, each once however many fire times it missed,
    /// in the order they came due. Each is moved on to its first fire time after now before it
    /// is returned (durable ones on disk, under the lock), so the next call does not return it
    /// again, and of two processes sharing the workspace only one gets a durable run. At
    /// start-up the first call returns the durable runs missed while the process was down.
    pub fn due(&self) -> Result<Vec<Due>, CronError> {
        let now = self.now();
        // Durable first: if the file cannot be used, the session schedules stay untouched.
        // A look without the lock first: an idle REPL asks often, and most times nothing is
        // due, so nothing is locked or created in a workspace that has no schedule.
        // Untrusted durable schedules (planted, or edited by someone else) neither run nor
        // are claimed: the user is told once how to trust them.
        let contents = self.store.read()?;
        let verdict = trust_gate::verdict(&contents, &*self.trust);
        if verdict != agent_trust::Verdict::Trusted {
            self.trust
                .refused(TrustKind::Schedules, verdict, contents.schedules().count());
        }
        let durable_due = verdict == agent_trust::Verdict::Trusted
            && contents.schedules().any(|s| s.next_fire_utc <= now);
        let mut due = if durable_due {
            self.store.update(|contents: &mut Contents| {
                // Checked again under the lock: the file may have changed since the look.
                if trust_gate::verdict(contents, &*self.trust) != agent_trust::Verdict::Trusted {
                    return Ok(Vec::new());
                }
                Ok(advance_all(contents.schedules_mut(), now))
            })?
        } else {
            Vec::new()
        };
        due.extend(advance_all(self.session().schedules.iter_mut(), now));
        due.sort_by(|a, b| {
            (a.scheduled_for, a.schedule_id.sort_key())
                .cmp(&(b.scheduled_for, b.schedule_id.sort_key()))
        });
        Ok(due)
    }
}

fn wall_timestamp(wall: SystemTime) -> Timestamp {
    Timestamp::try_from(wall).unwrap_or(if wall < SystemTime::UNIX_EPOCH {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

fn advance_all<'a>(schedules: impl Iterator<Item = &'a mut Schedule>, now: Timestamp) -> Vec<Due> {
    let mut due = Vec::new();
    for schedule in schedules {
        if schedule.next_fire_utc > now {
            continue;
        }
        match advance(schedule, now) {
            Ok(run) => due.push(run),
            // One record whose next fire time cannot be found (a hand-edited `0 0 30 2 *`:
            // February 30 never comes) must not stop every other schedule: it is parked at the
            // end of time, where `cron list` shows it and it never comes due again.
            Err(error) => {
                tracing::warn!(id = %schedule.id, %error, "cron: no next fire time; the schedule will not run again");
                schedule.next_fire_utc = Timestamp::MAX;
            }
        }
    }
    due
}

/// Moves a due schedule to its first fire time after `now`, counting the fire times skipped.
fn advance(schedule: &mut Schedule, now: Timestamp) -> Result<Due, CronError> {
    let (expr, zone) = schedule.when()?;
    let scheduled_for = schedule.next_fire_utc;
    let mut missed = 0;
    let mut at = next_fire(&expr, &zone, scheduled_for)?;
    while at <= now && missed < MAX_COUNTED_MISSES {
        missed += 1;
        at = next_fire(&expr, &zone, at)?;
    }
    if at <= now {
        at = next_fire(&expr, &zone, now)?;
    }
    schedule.next_fire_utc = at;
    Ok(Due {
        schedule_id: schedule.id.clone(),
        cron: schedule.cron.clone(),
        timezone: schedule.timezone.clone(),
        durability: schedule.durability,
        prompt: schedule.prompt.clone(),
        scheduled_for,
        missed,
        next_fire_utc: at,
    })
}
