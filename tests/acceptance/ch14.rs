//! Chapter 14: scheduled prompts run as user turns between the person's turns.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{
    Message, ModelClient, ModelError, ModelReply, ModelRequest, RunError, TurnOutcome,
};
use agent_cron::{Durability, ManualClock, NewSchedule, Timestamp, Zone, next_fire};
use agent_policy::StaticApproval;
use agent_test_support::ScriptedModel;
use agent_tutorial::cli::scheduled::{Batch, run_due_to};
use agent_tutorial::{Agent, render};
use async_trait::async_trait;
use serde_json::json;

use crate::support::{
    assert_all_paired, call, command, scripted_agent_with, stdout_of, tool_round, workspace,
    write_script,
};

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// The scripted model, with the clock moved to `then` when request number `at` (from 1)
/// arrives: time passes in the middle of a turn, and nothing waits for it.
struct TimePasses {
    inner: Arc<dyn ModelClient>,
    clock: Arc<ManualClock>,
    at: usize,
    then: Timestamp,
    seen: AtomicUsize,
}

#[async_trait]
impl ModelClient for TimePasses {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        if self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
            self.clock.set(self.then);
        }
        self.inner.complete(request).await
    }
}

/// P14 on a script, every `ask` approved, the scheduler on `clock`.
fn agent(
    dir: &std::path::Path,
    replies: Vec<ModelReply>,
    clock: &Arc<ManualClock>,
    time_passes: Option<(usize, Timestamp)>,
) -> (Agent, Arc<ScriptedModel>) {
    scripted_agent_with(14, dir, replies, |deps| {
        deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
        deps.cron_clock = clock.clone();
        if let Some((at, then)) = time_passes {
            deps.model = Arc::new(TimePasses {
                inner: deps.model.clone(),
                clock: clock.clone(),
                at,
                then,
                seen: AtomicUsize::new(0),
            });
        }
    })
}

/// What the interactive loop does between prompts, with the turns run on `rt`.
fn between_prompts(rt: &tokio::runtime::Runtime, agent: &mut Agent) -> (Batch, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let turn = |agent: &mut Agent, text: &str| -> Result<TurnOutcome, RunError> {
        rt.block_on(agent.run_turn(text))
    };
    let batch = run_due_to(agent, turn, &mut out, &mut err);
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (batch, text(out), text(err))
}

/// The user messages of each request of the conversation itself (memory's extraction
/// requests offer no tools).
fn user_messages(requests: &[ModelRequest]) -> Vec<Vec<String>> {
    requests
        .iter()
        .filter(|r| !r.tools.is_empty())
        .map(|r| {
            r.messages
                .iter()
                .filter_map(|m| match &**m {
                    Message::User { content } => Some(content.clone()),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_schedule_due_during_a_turn_runs_after_it_as_the_next_user_turn() {
    let dir = workspace();
    let clock = Arc::new(ManualClock::new(at("2026-03-02T08:58:00Z")));
    let schedule = call(
        "c1",
        "schedule_cron",
        json!({"cron": "0 9 * * *", "prompt": "summarize notes.txt"}),
    );
    let replies = vec![
        tool_round(vec![schedule]),
        tool_round(vec![call("c2", "list_crons", json!({}))]),
        ModelReply::text("Scheduled."),
        ModelReply::text("[]"),
        ModelReply::text("alpha, beta."),
        ModelReply::text("[]"),
    ];
    // 09:00 arrives with the turn's second request: the schedule is due mid-turn.
    let passes = Some((2, at("2026-03-02T09:00:00Z")));
    let (mut agent, model) = agent(dir.path(), replies, &clock, passes);
    let rt = runtime();

    rt.block_on(agent.run_turn("every day at 9, summarize notes.txt"))
        .unwrap();
    let during = user_messages(&model.requests());
    let (batch, out, err) = between_prompts(&rt, &mut agent);

    model.finish().unwrap();
    let requests = model.requests();
    assert_all_paired(&requests);
    let prompt = "every day at 9, summarize notes.txt".to_string();
    let marker = "[scheduled run of cron s1 (`0 9 * * *` UTC), due 2026-03-02 09:00 UTC]";
    let scheduled = format!("{marker}\nsummarize notes.txt");
    // The turn's three requests carry only the person's prompt; the scheduled prompt is the
    // next user turn, marker first.
    assert_eq!(during, vec![vec![prompt.clone()]; 3]);
    assert_eq!(
        user_messages(&requests),
        vec![
            vec![prompt.clone()],
            vec![prompt.clone()],
            vec![prompt.clone()],
            vec![prompt, scheduled],
        ]
    );
    assert_eq!(batch, Batch::Done);
    assert_eq!(err, format!("{marker}\n"));
    assert_eq!(out, "alpha, beta.\n");
}

#[test]
fn missed_runs_coalesce_into_one_scheduled_turn_at_start_up() {
    let dir = workspace();
    let clock = Arc::new(ManualClock::new(at("2026-03-02T09:00:00Z")));
    let (first, _model) = agent(dir.path(), vec![], &clock, None);
    let new = NewSchedule {
        cron: "*/10 * * * *".to_string(),
        prompt: "check the build".to_string(),
        timezone: Some("Europe/Berlin".to_string()),
        durability: Durability::Durable,
    };
    first.scheduler().unwrap().add(new).unwrap();
    drop(first);
    // The process was down for five periods: 09:10, 09:20, 09:30, 09:40 and 09:50 passed.
    clock.set(at("2026-03-02T09:55:00Z"));
    let replies = vec![
        ModelReply::text("The build is green."),
        ModelReply::text("[]"),
    ];
    let (mut agent, model) = agent(dir.path(), replies, &clock, None);
    let rt = runtime();

    let (batch, out, err) = between_prompts(&rt, &mut agent);
    let again = between_prompts(&rt, &mut agent);

    model.finish().unwrap();
    let marker = "[scheduled run of cron 1 (`*/10 * * * *` Europe/Berlin), due 2026-03-02 09:10 UTC, 4 more missed runs folded into this one]";
    assert_eq!(
        user_messages(&model.requests()),
        vec![vec![format!("{marker}\ncheck the build")]]
    );
    assert_eq!(
        (batch, out, err),
        (
            Batch::Done,
            "The build is green.\n".to_string(),
            format!("{marker}\n")
        )
    );
    assert_eq!(again, (Batch::Done, String::new(), String::new()));
}

/// The `cron list` table for one schedule, with its next run as the scheduler computes it.
fn one_row_table(id: &str, cron: &str, tz: &str, prompt: &str) -> String {
    let expr = agent_cron::CronExpr::parse(cron).unwrap();
    let next = next_fire(&expr, &Zone::parse(tz).unwrap(), Timestamp::now()).unwrap();
    let next = next.strftime("%Y-%m-%d %H:%M UTC").to_string();
    let widths = [2, 7, cron.len(), tz.len().max(8), next.len().max(14)];
    let line = |cells: [&str; 6]| {
        let mut text = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            text.push_str(&format!("{cell:<width$}  "));
        }
        text.push_str(cells[5]);
        text
    };
    format!(
        "{}\n{}\n",
        line(["ID", "KIND", "CRON", "TIMEZONE", "NEXT RUN (UTC)", "PROMPT"]),
        line([id, "durable", cron, tz, &next, prompt])
    )
}

#[test]
fn a_durable_schedule_survives_a_restart_and_cron_list_shows_it() {
    let dir = workspace();
    command("agent-tutorial", dir.path())
        .args(["cron", "list"])
        .assert()
        .success()
        .stdout("(no schedules)\n");
    // Once a year, so the next run cannot change between the two processes below.
    let args = json!({"cron": "0 9 1 1 *", "prompt": "write the yearly report", "durable": true, "timezone": "Europe/Berlin"});
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "schedule_cron", "arguments": args}]},
            {"content": "Scheduled."},
            {"content": "[]"}
        ]),
    );
    let script = script.to_str().unwrap();
    let run = command("ch14", dir.path())
        .args([
            "--script",
            script,
            "--approve",
            "all",
            "--prompt",
            "every new year",
        ])
        .assert()
        .success();
    assert_eq!(stdout_of(run), "Scheduled.\n");

    let listed = command("agent-tutorial", dir.path())
        .args(["cron", "list"])
        .assert()
        .success();

    let expected = one_row_table("1", "0 9 1 1 *", "Europe/Berlin", "write the yearly report");
    assert_eq!(stdout_of(listed), expected);
}

#[test]
fn a_one_shot_run_runs_what_is_due_after_its_turn() {
    let dir = workspace();
    let clock = Arc::new(ManualClock::new(at("2026-03-02T09:00:00Z")));
    let (first, _model) = agent(dir.path(), vec![], &clock, None);
    let new = NewSchedule {
        cron: "0 9 1 1 *".to_string(),
        prompt: "write the yearly report".to_string(),
        timezone: None,
        durability: Durability::Durable,
    };
    // Its next run, 2027-01-01 09:00, is moved into the past, as if the process had been down.
    first.scheduler().unwrap().add(new).unwrap();
    drop(first);
    let file = dir.path().join(".agent_tutorial/crons.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("2027-01-01T09:00:00Z", "2020-01-01T09:00:00Z"),
    )
    .unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"content": "Hello."},
            {"content": "[]"},
            {"content": "Report written."},
            {"content": "[]"}
        ]),
    );

    let run = command("ch14", dir.path())
        .args(["--script", script.to_str().unwrap(), "--prompt", "hello"])
        .assert()
        .success();

    // The yearly runs between 2020 and now, counted as the scheduler counts them.
    let expr = agent_cron::CronExpr::parse("0 9 1 1 *").unwrap();
    let (mut missed, mut next) = (0, at("2020-01-01T09:00:00Z"));
    loop {
        next = next_fire(&expr, &Zone::utc(), next).unwrap();
        if next > Timestamp::now() {
            break;
        }
        missed += 1;
    }
    let marker = format!(
        "[scheduled run of cron 1 (`0 9 1 1 *` UTC), due 2020-01-01 09:00 UTC, {missed} more missed runs folded into this one]"
    );
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    let markers: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("[scheduled"))
        .collect();
    assert_eq!(markers, vec![marker.as_str()]);
    assert_eq!(stdout_of(run), "Hello.\nReport written.\n");
}

#[tokio::test]
async fn p14_first_request_in_full() {
    let dir = workspace();
    let clock = Arc::new(ManualClock::new(at("2026-03-02T09:00:00Z")));
    let replies = vec![
        ModelReply::text("Nothing scheduled."),
        ModelReply::text("[]"),
    ];
    let (mut agent, model) = agent(dir.path(), replies, &clock, None);
    agent.run_turn("what runs on a schedule?").await.unwrap();
    model.finish().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let text = render::full(&model.requests()[0]).replace(&root, "<workspace>");
    insta::assert_snapshot!(text);
}

#[tokio::test]
async fn chapters_before_14_have_no_scheduler_and_no_cron_tools() {
    for chapter in [1, 13] {
        let dir = workspace();
        let clock = Arc::new(ManualClock::new(at("2026-03-02T09:00:00Z")));
        let (agent, _model) = scripted_agent_with(chapter, dir.path(), vec![], |deps| {
            deps.cron_clock = clock;
        });
        assert!(agent.scheduler().is_none(), "chapter {chapter}");
        assert_eq!(agent.tools().spec("schedule_cron"), None);
    }
}
