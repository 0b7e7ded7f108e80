//! The retry parameters, and the decision made from them after each failed attempt.

use std::time::{Duration, SystemTime};

use agent_core::{RetryAfter, RetryLimit};

/// Every recovery parameter, in one place; the CLI flags set some of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The wait after the first failed attempt, before jitter.
    pub base: Duration,
    /// Each further wait is this many times the previous one.
    pub factor: u32,
    /// No wait is longer than this, jitter included.
    pub cap: Duration,
    /// Up to this percentage is added to each wait, so many clients that failed together do
    /// not come back together.
    pub jitter_percent: u32,
    /// Attempts per request, the first one included.
    pub max_attempts: u32,
    /// The time all attempts of one request may take; a wait that would end later gives up.
    pub deadline: Duration,
    /// Overloaded answers (503, 529) in a row before the fallback model is asked.
    pub fallback_after: u32,
    /// The least completion limit of the one retry after a reply cut off by the server's own
    /// default (no `max_tokens` set); with a limit set, the retry doubles it.
    pub larger_max_tokens: u32,
    /// How many times a reply still cut off is continued.
    pub continuations: u32,
    /// No wait before a retry is shorter than this, whatever the server's `Retry-After` says
    /// (`Retry-After: 0` made six requests in 0.19 s) or the flags set the backoff to.
    pub min_wait: Duration,
}

/// The most `max_tokens` a retry after a cut-off reply asks for, whatever the server reported
/// it produced (a `usage.completion_tokens` of 3e9 made the next request ask for
/// 4294967295); a larger `--max-tokens` the user set is kept as it is.
pub const MAX_TOKENS_CEILING: u32 = 65_536;

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(500),
            factor: 2,
            cap: Duration::from_secs(32),
            jitter_percent: 25,
            max_attempts: 6,
            deadline: Duration::from_secs(300),
            fallback_after: 3,
            larger_max_tokens: 8192,
            continuations: 3,
            min_wait: Duration::from_millis(100),
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then try again.
    Wait(Duration),
    /// Stop: this bound is reached.
    GiveUp(RetryLimit),
}

impl RetryPolicy {
    /// The exponential wait after `attempt` failed attempts (1 = the first failed), with
    /// `jitter_permille` (0..1000) of the jitter range added, capped.
    pub fn backoff(&self, attempt: u32, jitter_permille: u32) -> Duration {
        let cap = duration_ms(self.cap);
        let growth = u64::from(self.factor).saturating_pow(attempt.saturating_sub(1));
        let plain = duration_ms(self.base).saturating_mul(growth).min(cap);
        // Integer milliseconds, so a seeded jitter gives exactly the same waits every run.
        let extra = plain
            .saturating_mul(u64::from(self.jitter_percent))
            .saturating_mul(u64::from(jitter_permille.min(999)))
            / 100_000;
        Duration::from_millis(plain.saturating_add(extra).min(cap))
    }

    /// After `attempt` failed attempts: wait (the server's `Retry-After` when it sent one,
    /// else the backoff; never less than [`Self::min_wait`]) or give up. `now_wall` reads an HTTP-date `Retry-After`; `remaining`
    /// is what is left of the deadline. A wait that would end past the deadline gives up now:
    /// waiting could only end in one more refused attempt.
    pub fn delay(
        &self,
        attempt: u32,
        retry_after: Option<RetryAfter>,
        now_wall: SystemTime,
        remaining: Duration,
        jitter_permille: u32,
    ) -> Decision {
        if attempt >= self.max_attempts {
            return Decision::GiveUp(RetryLimit::Attempts {
                max: self.max_attempts,
            });
        }
        let wait = match retry_after {
            Some(after) => after.wait_from(now_wall),
            None => self.backoff(attempt, jitter_permille),
        }
        .max(self.min_wait);
        if wait > remaining {
            return Decision::GiveUp(RetryLimit::Deadline {
                after: self.deadline,
            });
        }
        Decision::Wait(wait)
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A small xorshift generator for the jitter: seeded from the clock in a run, from a fixed
/// seed in tests. Nothing here needs more randomness than "not all clients at once".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jitter(u64);

impl Jitter {
    /// A generator started at `seed`; the same seed gives the same waits.
    pub fn seeded(seed: u64) -> Self {
        // xorshift never leaves zero.
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// Seeded from the wall clock's nanoseconds.
    pub fn from_clock() -> Self {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Self::seeded(nanos as u64)
    }

    /// The next value in 0..1000.
    pub fn next_permille(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % 1000) as u32
    }
}
