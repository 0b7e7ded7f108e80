//! Chapter 14: scheduled prompts run as user turns between the person's turns, driven by the
//! session (`agent_harness::Session`) as the CLI drives them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{AgentEvent, AgentId, Message, ModelClient, ModelError, ModelReply, ModelRequest};
use agent_cron::{Durability, ManualClock, NewSchedule, Scheduler, Timestamp, Zone, next_fire};
use agent_harness::session::{Interrupts, Mode, Op, Session, SessionEvent};
use agent_policy::StaticApproval;
use agent_test_support::ScriptedModel;
use agent_tools::Workspace;
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

/// P14 on a script, every `ask` approved, the scheduler on `clock`; with a session, its
/// events go to the session.
fn agent(
    dir: &std::path::Path,
    replies: Vec<ModelReply>,
    clock: &Arc<ManualClock>,
    time_passes: Option<(usize, Timestamp)>,
    session: Option<&mut Session>,
) -> (Agent, Arc<ScriptedModel>) {
    scripted_agent_with(14, dir, replies, |deps| {
        deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
        deps.cron_clock = clock.clone();
        if let Some(session) = session {
            deps.events = session.sink(&AgentId::lead());
        }
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

/// Adds a schedule to the workspace's durable file, as an earlier process would have.
fn add_durable(dir: &std::path::Path, clock: &Arc<ManualClock>, new: NewSchedule) {
    let scheduler = Scheduler::new(&Workspace::new(dir).unwrap(), clock.clone());
    scheduler.add(new).unwrap();
}

/// What the person sees of a session run: the marker lines (stderr) and the answers (stdout).
#[derive(Debug, Default, PartialEq, Eq)]
struct Seen {
    markers: Vec<String>,
    answers: Vec<String>,
}

/// Runs what is queued and due on `session` (the REPL's look between two prompts) and
/// returns what the person saw.
fn between_prompts(
    rt: &tokio::runtime::Runtime,
    session: &mut Session,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<SessionEvent>,
) -> Seen {
    rt.block_on(session.run(Mode::UntilIdle));
    let mut seen = Seen::default();
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::Agent(envelope) = event {
            match envelope.event {
                AgentEvent::ScheduleDue { marker, .. } => seen.markers.push(marker),
                AgentEvent::TurnAnswered { text } => seen.answers.push(text),
                _ => {}
            }
        }
    }
    seen
}

/// A session whose lead is a P14 agent built by `build`.
fn session_with(
    build: impl FnOnce(&mut Session) -> (Agent, Arc<ScriptedModel>),
) -> (
    Session,
    tokio::sync::mpsc::UnboundedReceiver<SessionEvent>,
    Arc<ScriptedModel>,
) {
    let mut session = Session::new(Interrupts::CancelTurn);
    let (agent, model) = build(&mut session);
    session.add(AgentId::lead(), agent);
    let events = session.take_events().unwrap();
    (session, events, model)
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
    let (mut session, mut events, model) =
        session_with(|session| agent(dir.path(), replies, &clock, passes, Some(session)));
    let rt = runtime();
    let prompt = "every day at 9, summarize notes.txt".to_string();
    session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: prompt.clone(),
    });

    let seen = between_prompts(&rt, &mut session, &mut events);

    model.finish().unwrap();
    let requests = model.requests();
    assert_all_paired(&requests);
    let marker = "[scheduled run of cron s1 (`0 9 * * *` UTC), due 2026-03-02 09:00 UTC]";
    let scheduled = format!("{marker}\nsummarize notes.txt");
    // The turn's three requests carry only the person's prompt; the scheduled prompt is the
    // next user turn, marker first.
    assert_eq!(
        user_messages(&requests),
        vec![
            vec![prompt.clone()],
            vec![prompt.clone()],
            vec![prompt.clone()],
            vec![prompt, scheduled],
        ]
    );
    assert_eq!(
        seen,
        Seen {
            markers: vec![marker.to_string()],
            answers: vec!["Scheduled.".to_string(), "alpha, beta.".to_string()],
        }
    );
}

#[test]
fn missed_runs_coalesce_into_one_scheduled_turn_at_start_up() {
    let dir = workspace();
    let clock = Arc::new(ManualClock::new(at("2026-03-02T09:00:00Z")));
    let new = NewSchedule {
        cron: "*/10 * * * *".to_string(),
        prompt: "check the build".to_string(),
        timezone: Some("Europe/Berlin".to_string()),
        durability: Durability::Durable,
    };
    add_durable(dir.path(), &clock, new);
    // The process was down for five periods: 09:10, 09:20, 09:30, 09:40 and 09:50 passed.
    clock.set(at("2026-03-02T09:55:00Z"));
    let replies = vec![
        ModelReply::text("The build is green."),
        ModelReply::text("[]"),
    ];
    let (mut session, mut events, model) =
        session_with(|session| agent(dir.path(), replies, &clock, None, Some(session)));
    let rt = runtime();

    let seen = between_prompts(&rt, &mut session, &mut events);
    let again = between_prompts(&rt, &mut session, &mut events);

    model.finish().unwrap();
    let marker = "[scheduled run of cron 1 (`*/10 * * * *` Europe/Berlin), due 2026-03-02 09:10 UTC, 4 more missed runs folded into this one]";
    assert_eq!(
        user_messages(&model.requests()),
        vec![vec![format!("{marker}\ncheck the build")]]
    );
    assert_eq!(
        seen,
        Seen {
            markers: vec![marker.to_string()],
            answers: vec!["The build is green.".to_string()],
        }
    );
    assert_eq!(again, Seen::default());
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
    let new = NewSchedule {
        cron: "0 9 1 1 *".to_string(),
        prompt: "write the yearly report".to_string(),
        timezone: None,
        durability: Durability::Durable,
    };
    // Its next run, 2027-01-01 09:00, is moved into the past, as if the process had been down.
    add_durable(dir.path(), &clock, new);
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
        // The schedule was added in-process (trusting all) and its file edited by hand above:
        // this run trusts the workspace explicitly.
        .args([
            "--trust-workspace",
            "--script",
            script.to_str().unwrap(),
            "--prompt",
            "hello",
        ])
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
    let (mut agent, model) = agent(dir.path(), replies, &clock, None, None);
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
        assert_eq!(
            agent.tools().spec("schedule_cron"),
            None,
            "chapter {chapter}"
        );
    }
}

/// At a real pseudo-terminal: `ch14` waits at its prompt with half a line typed; the schedule
/// comes due, runs as a marked turn printed above the line, and the half-typed line is still
/// there to finish.
#[test]
fn at_a_terminal_a_schedule_fires_while_the_prompt_waits_and_the_half_typed_line_survives() {
    let dir = workspace();
    let data = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(at("2026-03-02T08:59:00Z")));
    let new = NewSchedule {
        cron: "0 9 1 1 *".to_string(),
        prompt: "write the yearly report".to_string(),
        timezone: None,
        durability: Durability::Durable,
    };
    add_durable(dir.path(), &clock, new);
    // Due a few seconds from now (the file as another process would have left it): the
    // session sleeps until then while the prompt waits.
    let due = Timestamp::now()
        .checked_add(std::time::Duration::from_secs(3))
        .unwrap();
    let file = dir.path().join(".agent_tutorial/crons.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("2027-01-01T09:00:00Z", &due.to_string()),
    )
    .unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"content": "Report written."},
            {"content": "[]"},
            {"content": "Finished it."},
            {"content": "[]"}
        ]),
    );
    let record = dir.path().join("requests.jsonl");
    let mut terminal = crate::pty::Terminal::start(
        "ch14",
        &[
            "--script",
            script.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
            // The schedule file was written by this test, not by the harness: trusted here.
            "--trust-workspace",
        ],
        dir.path(),
        data.path(),
    );
    terminal.wait_for("ch14 >> ", 1);
    terminal.type_keys(b"half");

    let marker = format!(
        "[scheduled run of cron 1 (`0 9 1 1 *` UTC), due {}]",
        due.strftime("%Y-%m-%d %H:%M UTC")
    );
    terminal.wait_for("Report written.", 1);
    terminal.type_keys(b" typed\r");
    // Ctrl-D on the prompt that comes back once the turn (and its memory extraction) ended.
    terminal.wait_for_after("Finished it.", "ch14 >> ");
    terminal.type_keys(b"\x04");
    terminal.expect_success();

    let screen = terminal.screen();
    let from = screen.find(&marker).unwrap();
    let report = screen[from..].find("Report written.\n").unwrap();
    // Each line printed above the prompt is followed by the prompt redrawn with the half-typed
    // line (the editor erases it before the next one, which the plain text cannot show).
    assert_eq!(
        &screen[from..from + report + "Report written.\n".len()],
        format!("{marker}\nch14 >> half[memory] selected: (none)\nch14 >> halfReport written.\n")
    );
    // The line typed before the schedule fired went on after it: one prompt, `half typed`.
    let requests: Vec<ModelRequest> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        user_messages(&requests),
        vec![
            vec![format!("{marker}\nwrite the yearly report")],
            vec![
                format!("{marker}\nwrite the yearly report"),
                "half typed".to_string()
            ],
        ]
    );
}
