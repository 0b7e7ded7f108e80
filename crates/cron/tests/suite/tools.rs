//! The tools as the model calls them.

use serde_json::json;

use super::Fixture;

#[tokio::test]
async fn schedule_list_cancel_round_trip() {
    let fx = Fixture::new("2026-03-29T12:00:00Z");
    assert_eq!(
        fx.call(
            "schedule_cron",
            json!({"cron": "0 9 * * *", "prompt": "summarise the open issues", "durable": true, "timezone": "Europe/Berlin"})
        )
        .await,
        "Scheduled cron 1 (durable: kept in .agent_tutorial/crons.json across restarts): `0 9 * * *` in Europe/Berlin.\n\
         Next run: 2026-03-30 09:00 +02:00 (Europe/Berlin) = 2026-03-30 07:00 UTC.\n\
         It runs between user turns; cancel it with cancel_cron {\"id\": \"1\"}."
    );
    assert_eq!(
        fx.call(
            "schedule_cron",
            json!({"cron": "*/15 * * * *", "prompt": "check\nthe build"})
        )
        .await,
        "Scheduled cron s1 (session only: gone when this session ends): `*/15 * * * *` in UTC.\n\
         Next run: 2026-03-29 12:15 +00:00 (UTC) = 2026-03-29 12:15 UTC.\n\
         It runs between user turns; cancel it with cancel_cron {\"id\": \"s1\"}."
    );
    assert_eq!(
        fx.call("list_crons", json!({})).await,
        "ID  KIND     CRON          TIMEZONE       NEXT RUN (UTC)        PROMPT\n\
         1   durable  0 9 * * *     Europe/Berlin  2026-03-30 07:00 UTC  summarise the open issues\n\
         s1  session  */15 * * * *  UTC            2026-03-29 12:15 UTC  check the build"
    );
    assert_eq!(
        fx.call("cancel_cron", json!({"id": 1})).await,
        "Cancelled cron 1 (durable): `0 9 * * *` Europe/Berlin."
    );
    assert_eq!(
        fx.call("cancel_cron", json!({"id": "s1"})).await,
        "Cancelled cron s1 (session): `*/15 * * * *` UTC."
    );
    assert_eq!(fx.call("list_crons", json!({})).await, "(no schedules)");
}

#[tokio::test]
async fn bad_arguments_come_back_as_typed_failures() {
    let fx = Fixture::new("2026-03-29T12:00:00Z");
    assert_eq!(
        fx.call("schedule_cron", json!({"cron": "every day", "prompt": "p"}))
            .await,
        "Error [invalid_arguments]: `every day` has 2 fields; a cron expression has exactly 5: minute hour day-of-month month day-of-week (for example `0 9 * * 1-5`)"
    );
    assert_eq!(
        fx.call(
            "schedule_cron",
            json!({"cron": "0 9 * * *", "prompt": "p", "timezone": "Berlin"})
        )
        .await,
        "Error [invalid_arguments]: unknown time zone `Berlin`: use an IANA name such as `Europe/Berlin`, `America/New_York` or `UTC`"
    );
    assert_eq!(
        fx.call("cancel_cron", json!({"id": "7"})).await,
        "Error [invalid_arguments]: no schedule has the id `7`: list_crons shows the ids"
    );
    assert_eq!(
        fx.call("cancel_cron", json!({"id": true})).await,
        "Error [invalid_arguments]: $.id: expected string or integer, got boolean"
    );
    assert_eq!(
        fx.call(
            "schedule_cron",
            json!({"cron": "0 9 * * *", "prompt": "p", "every": 1})
        )
        .await,
        "Error [invalid_arguments]: $: unknown field `every`"
    );
}

#[test]
fn describe_shows_what_a_person_approves() {
    use agent_core::ToolHandler;
    let fx = Fixture::new("2026-03-29T12:00:00Z");
    let tool = agent_cron::ScheduleCron(fx.scheduler.clone());
    assert_eq!(
        tool.describe(&json!({"cron": "0 9 * * *", "prompt": "deploy", "durable": true}))
            .text,
        "durable `0 9 * * *` UTC: deploy"
    );
    let cancel = agent_cron::CancelCron(fx.scheduler.clone());
    assert_eq!(cancel.describe(&json!({"id": 3})).text, "cancel cron 3");
}
