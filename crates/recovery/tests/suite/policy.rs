//! The policy's arithmetic, called directly.

use std::time::Duration;

use agent_core::{RetryAfter, RetryLimit};
use agent_recovery::{Decision, Jitter, RetryPolicy};

use super::t0;

const LOTS: Duration = Duration::from_secs(10_000);

fn ms(values: &[u64]) -> Vec<Duration> {
    values.iter().map(|v| Duration::from_millis(*v)).collect()
}

#[test]
fn backoff_doubles_from_500_ms_up_to_the_32_s_cap() {
    let policy = RetryPolicy::default();
    let plain: Vec<Duration> = (1..=8).map(|n| policy.backoff(n, 0)).collect();
    assert_eq!(
        plain,
        ms(&[500, 1000, 2000, 4000, 8000, 16000, 32000, 32000])
    );
}

#[test]
fn a_seeded_jitter_adds_the_same_0_to_25_percent_every_time() {
    let policy = RetryPolicy::default();
    let waits = || {
        let mut jitter = Jitter::seeded(42);
        (1..=6)
            .map(|n| policy.backoff(n, jitter.next_permille()))
            .collect::<Vec<_>>()
    };
    let first = waits();
    assert_eq!(first, waits());
    let mut jitter = Jitter::seeded(42);
    let permille: Vec<u32> = (0..6).map(|_| jitter.next_permille()).collect();
    let expected: Vec<Duration> = [500u64, 1000, 2000, 4000, 8000, 16000]
        .iter()
        .zip(&permille)
        .map(|(base, p)| Duration::from_millis(base + base * 25 * u64::from(*p) / 100_000))
        .collect();
    assert_eq!(first, expected);
    // The largest jitter stays within 25 % and under the cap.
    assert_eq!(policy.backoff(1, 999), Duration::from_millis(624));
    assert_eq!(policy.backoff(7, 999), Duration::from_secs(32));
}

#[test]
fn retry_after_in_seconds_or_as_a_date_replaces_the_backoff() {
    let policy = RetryPolicy::default();
    let seconds = Some(RetryAfter::Seconds(Duration::from_secs(7)));
    let date = Some(RetryAfter::At(t0() + Duration::from_secs(12)));
    let past = Some(RetryAfter::At(t0() - Duration::from_secs(12)));
    let decisions = [seconds, date, past].map(|after| policy.delay(1, after, t0(), LOTS, 500));
    assert_eq!(
        decisions,
        [
            Decision::Wait(Duration::from_secs(7)),
            Decision::Wait(Duration::from_secs(12)),
            // A date in the past is no reason to hammer the server: the floor.
            Decision::Wait(policy.min_wait),
        ]
    );
}

#[test]
fn no_wait_is_shorter_than_the_floor() {
    let policy = RetryPolicy {
        base: Duration::ZERO,
        ..RetryPolicy::default()
    };
    let zero = Some(RetryAfter::Seconds(Duration::ZERO));
    let waits = [
        policy.delay(1, zero, t0(), LOTS, 0),
        policy.delay(2, None, t0(), LOTS, 0),
    ];
    assert_eq!(waits, [Decision::Wait(Duration::from_millis(100)); 2]);
}

#[test]
fn a_wait_past_the_deadline_or_the_last_attempt_gives_up() {
    let policy = RetryPolicy::default();
    let deadline = Decision::GiveUp(RetryLimit::Deadline {
        after: Duration::from_secs(300),
    });
    let long = Some(RetryAfter::Seconds(Duration::from_secs(3600)));
    assert_eq!(
        policy.delay(1, long, t0(), Duration::from_secs(299), 0),
        deadline
    );
    assert_eq!(
        policy.delay(3, None, t0(), Duration::from_millis(1999), 0),
        deadline
    );
    assert_eq!(
        policy.delay(6, None, t0(), LOTS, 0),
        Decision::GiveUp(RetryLimit::Attempts { max: 6 })
    );
}
