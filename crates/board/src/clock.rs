//! The board tells time on the workspace's one [`Clock`] (the harness's, a test's
//! [`ManualClock`]): this module is only the adapter from its wall reading to the board's
//! [`Millis`]. (The PostgreSQL board does not read it: leases there are on the database
//! server's clock, the one clock every machine of the team agrees on.)

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use agent_workspace::{Clock, ManualClock, SystemClock};

use crate::model::Millis;

/// `clock`'s wall time in milliseconds since the Unix epoch: what the SQLite board stores.
pub fn now(clock: &dyn Clock) -> Millis {
    Millis::from(clock.wall())
}

impl From<SystemTime> for Millis {
    /// Whole milliseconds since the epoch (negative before it), saturating at the ends.
    fn from(at: SystemTime) -> Self {
        let millis = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        match at.duration_since(UNIX_EPOCH) {
            Ok(after) => Self(millis(after)),
            Err(before) => Self(millis(before.duration()).saturating_neg()),
        }
    }
}

impl From<Millis> for SystemTime {
    /// The instant `at` names (a [`ManualClock`] is started at one); the epoch itself for one
    /// a `SystemTime` cannot hold.
    fn from(at: Millis) -> Self {
        let by = Duration::from_millis(at.0.unsigned_abs());
        let moved = if at.0 >= 0 {
            UNIX_EPOCH.checked_add(by)
        } else {
            UNIX_EPOCH.checked_sub(by)
        };
        moved.unwrap_or(UNIX_EPOCH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_millis_goes_to_a_system_time_and_back_unchanged_on_both_sides_of_the_epoch() {
        let at = [Millis(1_700_000_000_123), Millis(0), Millis(-1_500)];
        let back = at.map(|m| Millis::from(SystemTime::from(m)));
        assert_eq!(back, at);
    }

    #[test]
    fn the_board_reads_a_manual_clock_where_it_stands_and_after_it_moved() {
        let clock = ManualClock::new(Millis(1_700_000_000_000));
        let before = now(&clock);
        clock.advance(Duration::from_millis(1_234));
        assert_eq!(
            (before, now(&clock)),
            (Millis(1_700_000_000_000), Millis(1_700_000_001_234))
        );
    }
}
