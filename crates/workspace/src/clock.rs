//! One [`Clock`] for the whole harness: the retry loop's waits and deadline, a background job's
//! elapsed time and time limit, cron's "now" and the session's sleep until the next fire time.
//!
//! Two readings and two kinds of sleep:
//!
//! - [`Clock::now`] is monotonic (`tokio::time::Instant`, so a test on tokio's paused clock
//!   never waits for real): durations and deadlines are measured on it.
//! - [`Clock::wall`] is the calendar time (`SystemTime`): what cron fire times and an HTTP-date
//!   `Retry-After` are read against. It is a `SystemTime` rather than a `jiff::Timestamp` so
//!   the file and process layer does not pull in a calendar crate; cron, the one caller that
//!   does calendar arithmetic, converts with `jiff::Timestamp::try_from` at its edge.
//! - [`Clock::sleep`] is an idle wait the caller chose (a retry back-off): nothing else of the
//!   caller's happens meanwhile. [`Clock::sleep_until`] is a timer racing other work (a
//!   deadline raced against a request, the next fire time raced against typed input).
//!
//! On [`SystemClock`] both sleeps are tokio timers. On [`ManualClock`] time moves only when a
//! test moves it ([`ManualClock::advance`], [`ManualClock::set`]), which wakes every sleeper
//! whose instant has come; with [`Sleeping::Jumps`] an idle [`Clock::sleep`] moves the clock
//! on by itself (and is recorded), while a [`Clock::sleep_until`] still waits for the test:
//! it races work the test does not control (a real socket), which must not lose the race
//! just because time is fake.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use tokio::sync::watch;
use tokio::time::Instant;

/// What [`Clock::sleep`] and [`Clock::sleep_until`] return: owned, so it can be raced in a
/// `select!` or moved into a spawned task.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Where time comes from: [`SystemClock`] in the harness, [`ManualClock`] (or a test's own)
/// in tests.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Monotonic now: durations and deadlines are measured on it.
    fn now(&self) -> Instant;

    /// Calendar now: what fire times and HTTP dates are compared with.
    fn wall(&self) -> SystemTime;

    /// Resolves once the clock has reached `deadline`, while the caller may be doing other
    /// work (this future is raced against it).
    fn sleep_until(&self, deadline: Instant) -> Sleep;

    /// Resolves once `wait` has passed; an idle wait the caller chose.
    fn sleep(&self, wait: Duration) -> Sleep {
        match self.now().checked_add(wait) {
            Some(deadline) => self.sleep_until(deadline),
            // Past the end of representable time: it never comes.
            None => Box::pin(std::future::pending()),
        }
    }

    /// A timer (as [`Clock::sleep_until`]) for the wall time `at` — a cron fire time —
    /// measured on the monotonic clock from now, at once when `at` has passed. The real wall
    /// clock can be set or jump (NTP, a suspended laptop) while this waits: a caller that
    /// must not miss `at` by much sleeps in bounded steps and looks at the wall time again.
    fn sleep_until_wall(&self, at: SystemTime) -> Sleep {
        let wait = at.duration_since(self.wall()).unwrap_or(Duration::ZERO);
        match self.now().checked_add(wait) {
            Some(deadline) => self.sleep_until(deadline),
            None => Box::pin(std::future::pending()),
        }
    }
}

/// The longest a [`ManualClock`] moves in all: a century, far inside what an `Instant` or a
/// `SystemTime` can add without overflowing.
const MANUAL_MAX_OFFSET: Duration = Duration::from_secs(100 * 366 * 24 * 3600);

/// The real clock: tokio's monotonic time (paused in tests that pause it) and the system's
/// wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep {
        Box::pin(tokio::time::sleep_until(deadline))
    }
}

/// How a [`ManualClock`] treats [`Clock::sleep`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sleeping {
    /// Every sleeper waits until the test moves the clock past its instant.
    #[default]
    Waits,
    /// An idle [`Clock::sleep`] moves the clock on by its length at once and is recorded
    /// ([`ManualClock::sleeps`]); [`Clock::sleep_until`] still waits for the test.
    Jumps,
}

/// A clock that moves only when told to. Cloning the `Arc` around it shares it; sleepers wake
/// when [`ManualClock::advance`] or [`ManualClock::set`] passes their instant.
#[derive(Debug)]
pub struct ManualClock {
    /// The monotonic reading at offset zero.
    origin: Instant,
    /// The wall reading at offset zero.
    wall_origin: SystemTime,
    /// How far the clock has moved; sleepers watch it.
    offset: watch::Sender<Duration>,
    sleeping: Sleeping,
    sleeps: Mutex<Vec<Duration>>,
}

impl ManualClock {
    /// A clock whose wall time is `wall` now; sleepers wait for the test
    /// ([`Sleeping::Waits`]). `wall` may be a `SystemTime` or anything that converts to one
    /// (a `jiff::Timestamp`).
    pub fn new(wall: impl Into<SystemTime>) -> Self {
        Self::with_sleeping(wall, Sleeping::Waits)
    }

    /// A clock starting at `wall` that treats [`Clock::sleep`] as `sleeping` says.
    pub fn with_sleeping(wall: impl Into<SystemTime>, sleeping: Sleeping) -> Self {
        Self {
            origin: Instant::now(),
            wall_origin: wall.into(),
            offset: watch::Sender::new(Duration::ZERO),
            sleeping,
            sleeps: Mutex::new(Vec::new()),
        }
    }

    /// How far the clock has moved since it was made.
    pub fn elapsed(&self) -> Duration {
        *self.offset.borrow()
    }

    /// Moves the clock on by `by` (both readings), waking every sleeper whose instant came.
    pub fn advance(&self, by: Duration) {
        self.offset
            .send_modify(|offset| *offset = offset.saturating_add(by).min(MANUAL_MAX_OFFSET));
    }

    /// Moves the clock on until its wall reading is `wall`. A `wall` in the past is refused
    /// silently: a monotonic clock never goes back, so the clock stays where it is.
    pub fn set(&self, wall: impl Into<SystemTime>) {
        let target = wall.into();
        if let Ok(by) = target.duration_since(self.wall()) {
            self.advance(by);
        }
    }

    /// Every idle sleep so far, in order ([`Sleeping::Jumps`] only).
    pub fn sleeps(&self) -> Vec<Duration> {
        self.sleeps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until the offset has reached `target`. A clock that is dropped never reaches it.
    fn until_offset(&self, target: Duration) -> Sleep {
        let mut offset = self.offset.subscribe();
        Box::pin(async move {
            if offset.wait_for(|now| *now >= target).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        // The offset is capped at a century, so these additions cannot overflow for any clock
        // started in a real year; the fallback only keeps a test's absurd start from panicking.
        self.origin
            .checked_add(self.elapsed())
            .unwrap_or(self.origin)
    }

    fn wall(&self) -> SystemTime {
        self.wall_origin
            .checked_add(self.elapsed())
            .unwrap_or(self.wall_origin)
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep {
        self.until_offset(deadline.saturating_duration_since(self.origin))
    }

    fn sleep(&self, wait: Duration) -> Sleep {
        match self.sleeping {
            Sleeping::Waits => self.until_offset(self.elapsed().saturating_add(wait)),
            // Recorded as asked; the clock moves on at most to its end.
            Sleeping::Jumps => {
                self.sleeps
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(wait);
                self.advance(wait);
                Box::pin(std::future::ready(()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600)
    }

    #[tokio::test]
    async fn a_sleeper_wakes_when_the_clock_passes_its_instant_and_not_before() {
        let clock = Arc::new(ManualClock::new(t0()));
        let deadline = clock.now() + Duration::from_secs(60);
        let mut sleeper = tokio::spawn(clock.sleep_until(deadline));
        clock.advance(Duration::from_secs(59));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_secs(1));
        (&mut sleeper).await.unwrap();
        assert_eq!(clock.wall(), t0() + Duration::from_secs(60));
        assert_eq!(clock.now() - deadline, Duration::ZERO);
    }

    #[tokio::test]
    async fn set_moves_both_readings_forward_and_never_back() {
        let clock = ManualClock::new(t0());
        let start = clock.now();
        let sleeper = clock.sleep(Duration::from_secs(90));
        clock.set(t0() + Duration::from_secs(90));
        sleeper.await;
        clock.set(t0());
        assert_eq!(
            (clock.wall(), clock.now() - start),
            (t0() + Duration::from_secs(90), Duration::from_secs(90))
        );
    }

    #[tokio::test]
    async fn jumping_moves_on_for_an_idle_sleep_but_a_timer_still_waits() {
        let clock = ManualClock::with_sleeping(t0(), Sleeping::Jumps);
        let timer = clock.sleep_until(clock.now() + Duration::from_secs(10));
        clock.sleep(Duration::from_millis(500)).await;
        clock.sleep(Duration::from_secs(3)).await;
        assert_eq!(
            clock.sleeps(),
            vec![Duration::from_millis(500), Duration::from_secs(3)]
        );
        assert_eq!(clock.elapsed(), Duration::from_millis(3500));
        let raced = tokio::select! {
            () = timer => "timer",
            () = tokio::task::yield_now() => "work",
        };
        assert_eq!(raced, "work");
    }

    #[tokio::test]
    async fn a_sleeper_for_a_wall_time_wakes_when_the_clock_is_set_to_it() {
        let clock = Arc::new(ManualClock::new(t0()));
        let fire = t0() + Duration::from_secs(30);
        let mut sleeper = tokio::spawn(clock.sleep_until_wall(fire));
        clock.set(fire - Duration::from_secs(1));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.set(fire);
        (&mut sleeper).await.unwrap();
        // A wall time already past wakes at once.
        clock.sleep_until_wall(t0()).await;
    }

    #[tokio::test(start_paused = true)]
    async fn the_system_clock_sleeps_on_tokios_clock() {
        let clock = SystemClock;
        let start = clock.now();
        clock.sleep(Duration::from_secs(3600)).await;
        assert_eq!(clock.now() - start, Duration::from_secs(3600));
    }
}
