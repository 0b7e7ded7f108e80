//! Next fire times in named zones, across their DST changes.

use agent_cron::{CronError, CronExpr, Timestamp, Zone, next_fire};

use super::ts;

fn fires(cron: &str, tz: &str, from: &str, n: usize) -> Vec<Timestamp> {
    let expr = CronExpr::parse(cron).unwrap();
    let zone = Zone::parse(tz).unwrap();
    let mut at = ts(from);
    (0..n)
        .map(|_| {
            at = next_fire(&expr, &zone, at).unwrap();
            at
        })
        .collect()
}

#[test]
fn berlin_spring_forward_runs_a_missing_time_once_right_after_the_gap() {
    // 2026-03-29 02:00 CET jumps to 03:00 CEST: 02:30 does not exist that day.
    assert_eq!(
        fires("30 2 * * *", "Europe/Berlin", "2026-03-27T00:00:00Z", 4),
        [
            ts("2026-03-27T01:30:00Z"), // 02:30 CET
            ts("2026-03-28T01:30:00Z"), // 02:30 CET
            ts("2026-03-29T01:00:00Z"), // 03:00 CEST, the first instant after the gap
            ts("2026-03-30T00:30:00Z"), // 02:30 CEST
        ]
    );
}

#[test]
fn berlin_fall_back_runs_a_repeated_time_once() {
    // 2026-10-25 03:00 CEST goes back to 02:00 CET: 02:30 happens twice; it runs once.
    assert_eq!(
        fires("30 2 * * *", "Europe/Berlin", "2026-10-23T12:00:00Z", 3),
        [
            ts("2026-10-24T00:30:00Z"), // 02:30 CEST
            ts("2026-10-25T00:30:00Z"), // the first 02:30 (CEST)
            ts("2026-10-26T01:30:00Z"), // 02:30 CET
        ]
    );
}

#[test]
fn new_york_nine_am_moves_an_hour_in_utc_across_both_changes() {
    // DST starts 2026-03-08 and ends 2026-11-01.
    assert_eq!(
        fires("0 9 * * *", "America/New_York", "2026-03-07T00:00:00Z", 3),
        [
            ts("2026-03-07T14:00:00Z"),
            ts("2026-03-08T13:00:00Z"),
            ts("2026-03-09T13:00:00Z"),
        ]
    );
    assert_eq!(
        fires("0 9 * * *", "America/New_York", "2026-10-31T00:00:00Z", 3),
        [
            ts("2026-10-31T13:00:00Z"),
            ts("2026-11-01T14:00:00Z"),
            ts("2026-11-02T14:00:00Z"),
        ]
    );
}

#[test]
fn zone_names_are_looked_up_case_insensitively_and_kept_as_the_database_spells_them() {
    assert_eq!(
        Zone::parse("europe/berlin").unwrap().name(),
        "Europe/Berlin"
    );
    assert_eq!(
        Zone::parse("Europe/Berlin")
            .unwrap()
            .show(ts("2026-03-30T07:00:00Z")),
        "2026-03-30 09:00 +02:00 (Europe/Berlin)"
    );
}

#[test]
fn a_bad_expression_is_a_typed_error_naming_it() {
    let err = CronExpr::parse("0 9 * *").unwrap_err();
    assert!(matches!(&err, CronError::FieldCount { expr, count: 4 } if expr == "0 9 * *"));
    assert_eq!(
        err.to_string(),
        "`0 9 * *` has 4 fields; a cron expression has exactly 5: minute hour day-of-month month day-of-week (for example `0 9 * * 1-5`)"
    );
    // Six fields would be read as seconds by the parser: refused as not the standard syntax.
    assert!(matches!(
        CronExpr::parse("0 0 9 * * *").unwrap_err(),
        CronError::FieldCount { count: 6, .. }
    ));
    assert!(matches!(
        CronExpr::parse("61 9 * * *").unwrap_err(),
        CronError::BadExpression { expr, .. } if expr == "61 9 * * *"
    ));
    assert_eq!(
        CronExpr::parse("  0  9 * *   1-5 ").unwrap().as_str(),
        "0 9 * * 1-5"
    );
}

#[test]
fn an_unknown_zone_is_a_typed_error_naming_it() {
    let err = Zone::parse("Mars/Olympus_Mons").unwrap_err();
    assert!(matches!(&err, CronError::UnknownTimeZone { name, .. } if name == "Mars/Olympus_Mons"));
    assert_eq!(
        err.to_string(),
        "unknown time zone `Mars/Olympus_Mons`: use an IANA name such as `Europe/Berlin`, `America/New_York` or `UTC`"
    );
}
