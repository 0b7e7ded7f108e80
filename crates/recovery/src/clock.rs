//! Time as the retry loop sees it: tokio's clock in a run (so a test on tokio's paused clock
//! never sleeps for real), or a [`ManualClock`] where real I/O rules out pausing tokio's.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

#[async_trait]
pub trait Clock: Send + Sync {
    /// Monotonic time since some fixed origin: the deadline is measured on it.
    fn elapsed(&self) -> Duration;
    /// The wall clock: an HTTP-date `Retry-After` is read against it.
    fn wall(&self) -> SystemTime;
    async fn sleep(&self, wait: Duration);
    /// Returns once `after` has passed while an attempt is in flight: the deadline then ends
    /// the attempt. Unlike [`Clock::sleep`], not a wait the loop chose.
    async fn expire(&self, after: Duration);
}

/// `tokio::time` and the system's wall clock.
#[derive(Debug)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

impl TokioClock {
    pub fn new() -> Self {
        Self {
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Clock for TokioClock {
    fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }

    async fn sleep(&self, wait: Duration) {
        tokio::time::sleep(wait).await;
    }

    async fn expire(&self, after: Duration) {
        tokio::time::sleep(after).await;
    }
}

/// A clock that moves only when slept on, and remembers every sleep. For tests against a
/// real socket (a mock HTTP server), where tokio's paused clock would fire the request
/// timeout while the socket is read.
#[derive(Debug)]
pub struct ManualClock {
    start_wall: SystemTime,
    sleeps: Mutex<Vec<Duration>>,
}

impl ManualClock {
    /// Starts at `start_wall` on the wall clock.
    pub fn starting_at(start_wall: SystemTime) -> Self {
        Self {
            start_wall,
            sleeps: Mutex::new(Vec::new()),
        }
    }

    /// Every sleep so far, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.sleeps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl Clock for ManualClock {
    fn elapsed(&self) -> Duration {
        self.sleeps().iter().sum()
    }

    fn wall(&self) -> SystemTime {
        self.start_wall + self.elapsed()
    }

    async fn sleep(&self, wait: Duration) {
        self.sleeps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(wait);
    }

    /// Manual time moves only when the loop sleeps, never while an attempt runs: an attempt
    /// never outlasts the deadline on this clock.
    async fn expire(&self, _after: Duration) {
        std::future::pending::<()>().await;
    }
}
