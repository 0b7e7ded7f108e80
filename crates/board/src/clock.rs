//! The SQLite board's clock, injected so tests put a lease exactly at its end. Kept to one
//! method on purpose: the workspace's shared `Clock` can replace it with a one-line adapter.
//! (The PostgreSQL board does not use it: leases there are on the database server's clock,
//! the one clock every machine of the team agrees on.)

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::model::Millis;

/// Tells the time in milliseconds since the Unix epoch.
pub trait BoardClock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> Millis;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl BoardClock for SystemClock {
    fn now(&self) -> Millis {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        Millis(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
    }
}

/// A clock that moves only when told (tests, and scripted runs). Clones share the time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Millis) -> Self {
        Self(Arc::new(AtomicI64::new(start.0)))
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.0.fetch_add(by, Ordering::SeqCst);
    }

    /// Puts the clock at `at`.
    pub fn set(&self, at: Millis) {
        self.0.store(at.0, Ordering::SeqCst);
    }
}

impl BoardClock for ManualClock {
    fn now(&self) -> Millis {
        Millis(self.0.load(Ordering::SeqCst))
    }
}
