//! The scheduler over a real workspace, with a hand-set clock.

use std::sync::Barrier;

use agent_cron::{
    CronError, Due, Durability, MAX_SCHEDULES, Schedule, ScheduleId, Scheduler, durable_table,
};
use agent_workspace::Workspace;

use super::{Fixture, new_schedule, ts};

fn berlin_morning() -> Schedule {
    Schedule {
        id: ScheduleId::parse("1"),
        cron: "0 9 * * *".into(),
        prompt: "summarise the open issues".into(),
        timezone: "Europe/Berlin".into(),
        durability: Durability::Durable,
        next_fire_utc: ts("2026-03-30T07:00:00Z"),
        created: ts("2026-03-29T12:00:00Z"),
    }
}

#[test]
fn a_durable_schedule_survives_a_restart_and_a_session_one_does_not() {
    let fx = Fixture::new("2026-03-29T12:00:00Z");
    let durable = fx
        .scheduler
        .add(new_schedule(
            "0 9 * * *",
            "summarise the open issues",
            Some("Europe/Berlin"),
            Durability::Durable,
        ))
        .unwrap();
    assert_eq!(durable, berlin_morning());
    let session = fx
        .scheduler
        .add(new_schedule(
            "*/5 * * * *",
            "check the build",
            None,
            Durability::Session,
        ))
        .unwrap();
    assert_eq!(session.id, ScheduleId::parse("s1"));
    assert_eq!(session.timezone, "UTC");
    assert_eq!(fx.scheduler.list().unwrap(), [berlin_morning(), session]);

    let restarted = fx.restart();
    assert_eq!(restarted.list().unwrap(), [berlin_morning()]);
    assert_eq!(
        durable_table(&fx.workspace()).unwrap(),
        "ID  KIND     CRON       TIMEZONE       NEXT RUN (UTC)        PROMPT\n\
         1   durable  0 9 * * *  Europe/Berlin  2026-03-30 07:00 UTC  summarise the open issues"
    );
}

#[test]
fn missed_runs_while_down_coalesce_into_one_reported_once() {
    let fx = Fixture::new("2026-01-01T00:10:00Z");
    fx.scheduler
        .add(new_schedule(
            "0 * * * *",
            "hourly check",
            None,
            Durability::Durable,
        ))
        .unwrap();
    // Down from before 01:00 until 05:30: 01, 02, 03, 04 and 05 o'clock were missed.
    fx.clock.set(ts("2026-01-01T05:30:00Z"));
    let restarted = fx.restart();
    let due = restarted.due().unwrap();
    assert_eq!(
        due,
        [Due {
            schedule_id: ScheduleId::parse("1"),
            cron: "0 * * * *".into(),
            timezone: "UTC".into(),
            durability: Durability::Durable,
            prompt: "hourly check".into(),
            scheduled_for: ts("2026-01-01T01:00:00Z"),
            missed: 4,
            next_fire_utc: ts("2026-01-01T06:00:00Z"),
        }]
    );
    assert_eq!(
        due[0].turn_text(),
        "[scheduled run of cron 1 (`0 * * * *` UTC), due 2026-01-01 01:00 UTC, 4 more missed runs folded into this one]\nhourly check"
    );
    assert_eq!(restarted.due().unwrap(), []);
    // The advance was written: a third process does not run it again either.
    assert_eq!(fx.restart().due().unwrap(), []);
    assert_eq!(
        fx.restart().list().unwrap()[0].next_fire_utc,
        ts("2026-01-01T06:00:00Z")
    );
}

#[test]
fn due_returns_nothing_before_the_fire_time_and_each_schedule_once_at_it() {
    let fx = Fixture::new("2026-01-01T08:59:00Z");
    fx.scheduler
        .add(new_schedule("0 9 * * *", "a", None, Durability::Session))
        .unwrap();
    fx.scheduler
        .add(new_schedule("0 9 * * *", "b", None, Durability::Durable))
        .unwrap();
    assert_eq!(fx.scheduler.due().unwrap(), []);
    fx.clock.set(ts("2026-01-01T09:00:00Z"));
    let ids: Vec<(String, u32)> = fx
        .scheduler
        .due()
        .unwrap()
        .into_iter()
        .map(|d| (d.schedule_id.to_string(), d.missed))
        .collect();
    assert_eq!(ids, [("1".to_string(), 0), ("s1".to_string(), 0)]);
    assert_eq!(fx.scheduler.due().unwrap(), []);
}

#[test]
fn an_idle_check_in_a_workspace_without_schedules_creates_nothing() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    assert_eq!(fx.scheduler.due().unwrap(), []);
    assert_eq!(fx.scheduler.list().unwrap(), []);
    assert!(!fx.dir.path().join(".agent_tutorial").exists());
}

#[test]
fn cancel_removes_the_schedule_and_an_unknown_id_is_a_typed_error() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    let a = fx
        .scheduler
        .add(new_schedule("0 9 * * *", "a", None, Durability::Durable))
        .unwrap();
    let b = fx
        .scheduler
        .add(new_schedule("0 9 * * *", "b", None, Durability::Durable))
        .unwrap();
    let s = fx
        .scheduler
        .add(new_schedule("0 9 * * *", "s", None, Durability::Session))
        .unwrap();
    assert_eq!(fx.scheduler.cancel(&ScheduleId::parse("1")).unwrap(), a);
    assert_eq!(fx.scheduler.cancel(&ScheduleId::parse(" S1 ")).unwrap(), s);
    assert_eq!(fx.scheduler.list().unwrap(), std::slice::from_ref(&b));
    assert_eq!(fx.restart().list().unwrap(), [b]);
    let err = fx.scheduler.cancel(&ScheduleId::parse("1")).unwrap_err();
    assert!(matches!(&err, CronError::NotFound { id } if id.as_str() == "1"));
    // Ids are never reused: the next durable schedule is 3, not 1.
    let c = fx
        .scheduler
        .add(new_schedule("0 9 * * *", "c", None, Durability::Durable))
        .unwrap();
    assert_eq!(c.id.as_str(), "3");
}

#[test]
fn bad_arguments_are_typed_errors_and_store_nothing() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    let add = |cron: &str, prompt: &str, tz: Option<&str>| {
        fx.scheduler
            .add(new_schedule(cron, prompt, tz, Durability::Durable))
            .unwrap_err()
    };
    assert!(matches!(
        add("0 9 * *", "p", None),
        CronError::FieldCount { count: 4, .. }
    ));
    assert!(matches!(
        add("0 25 * * *", "p", None),
        CronError::BadExpression { .. }
    ));
    assert!(matches!(
        add("0 9 * * *", "p", Some("Europe/Nowhere")),
        CronError::UnknownTimeZone { name, .. } if name == "Europe/Nowhere"
    ));
    assert!(matches!(
        add("0 9 * * *", "  ", None),
        CronError::EmptyPrompt
    ));
    let long = "x".repeat(agent_cron::MAX_PROMPT_BYTES + 1);
    assert!(matches!(
        add("0 9 * * *", &long, None),
        CronError::PromptTooLong { .. }
    ));
    assert!(matches!(
        add("0 0 30 2 *", "p", None),
        CronError::NoNextFire { .. }
    ));
    assert!(!fx.crons_json().exists());
}

#[test]
fn two_schedulers_adding_at_once_lose_nothing() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    const EACH: usize = 10;
    let barrier = Barrier::new(2);
    std::thread::scope(|scope| {
        for who in ["a", "b"] {
            let barrier = &barrier;
            // Each its own workspace handle and scheduler, as two processes would have.
            let scheduler =
                Scheduler::new(&Workspace::new(fx.dir.path()).unwrap(), fx.clock.clone());
            scope.spawn(move || {
                barrier.wait();
                for i in 0..EACH {
                    scheduler
                        .add(new_schedule(
                            "0 9 * * *",
                            &format!("{who}{i}"),
                            None,
                            Durability::Durable,
                        ))
                        .unwrap();
                }
            });
        }
    });
    let listed = fx.restart().list().unwrap();
    let mut ids: Vec<String> = listed.iter().map(|s| s.id.to_string()).collect();
    ids.sort_by_key(|id| id.parse::<u32>().unwrap());
    let expected: Vec<String> = (1..=2 * EACH).map(|n| n.to_string()).collect();
    assert_eq!(ids, expected);
    let mut prompts: Vec<String> = listed.into_iter().map(|s| s.prompt).collect();
    prompts.sort();
    let mut want: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|w| (0..EACH).map(move |i| format!("{w}{i}")))
        .collect();
    want.sort();
    assert_eq!(prompts, want);
}

#[test]
fn the_number_of_schedules_is_bounded_and_a_refused_add_leaves_the_file_as_it_was() {
    let fx = Fixture::new("2026-01-01T00:00:00Z");
    for i in 0..MAX_SCHEDULES {
        fx.scheduler
            .add(new_schedule(
                "0 9 * * *",
                &format!("p{i}"),
                None,
                Durability::Durable,
            ))
            .unwrap();
    }
    let before = std::fs::read(fx.crons_json()).unwrap();
    let err = fx
        .scheduler
        .add(new_schedule(
            "0 9 * * *",
            "one too many",
            None,
            Durability::Durable,
        ))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("there are already {MAX_SCHEDULES} durable schedules: cancel one first")
    );
    assert_eq!(std::fs::read(fx.crons_json()).unwrap(), before);
}

#[test]
fn a_record_that_never_fires_again_does_not_stop_the_others() {
    // A hand-edited file: February 30 never comes, so no next fire time exists for schedule 2.
    // Before, that error aborted every `due()`, and schedule 1 never ran again either.
    let fx = Fixture::new("2026-01-01T09:30:00Z");
    std::fs::create_dir_all(fx.dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(
        fx.dir.path().join(".agent_tutorial/crons.json"),
        r#"{"version":1,"next_id":3,"schedules":[
{"id":"1","cron":"0 9 * * *","prompt":"daily","timezone":"UTC","durability":"durable","next_fire_utc":"2026-01-01T09:00:00Z","created":"2025-12-31T00:00:00Z"},
{"id":"2","cron":"0 0 30 2 *","prompt":"never","timezone":"UTC","durability":"durable","next_fire_utc":"2026-01-01T00:00:00Z","created":"2025-12-31T00:00:00Z"}]}"#,
    )
    .unwrap();
    let restarted = fx.restart();
    let ids: Vec<String> = restarted
        .due()
        .unwrap()
        .into_iter()
        .map(|d| d.schedule_id.to_string())
        .collect();
    assert_eq!(ids, ["1"]);
    assert_eq!(restarted.due().unwrap(), []);
}
