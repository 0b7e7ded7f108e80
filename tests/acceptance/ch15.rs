//! Chapter 15: teammates that talk through durable mailboxes. A teammate is an agent of the
//! session, woken by mail with no input from the person; its answer wakes the lead the same way.

use std::sync::Arc;

use agent_core::{AgentEvent, AgentId, ModelReply};
use agent_harness::SessionEvent;
use agent_harness::session::{EndReason, Mode, Op};
use agent_team::{Counts, TeamRecord, TeammateStatus};
use agent_tutorial::render;
use serde_json::json;

use crate::support::{
    assert_all_paired, call, command, stderr_of, stdout_of, tool_round, workspace, write_script,
};
use crate::team_support::{Team, done, last_message, requests_of, slow_team, team, team_at};

fn spawn(name: &str, role: &str, prompt: &str) -> ModelReply {
    let args = json!({"name": name, "role": role, "prompt": prompt});
    tool_round(vec![call("c1", "spawn_teammate", args)])
}

/// The lead starts alice; she reads a file and answers; her answer wakes the lead (nobody
/// types); the lead writes to her again, which wakes her with her history; her second answer
/// wakes the lead once more. Every request of both, whole.
#[tokio::test]
async fn a_lead_spawns_a_teammate_mails_it_and_is_woken_by_each_answer() {
    let dir = workspace();
    let mut t = team(
        15,
        dir.path(),
        vec![
            spawn("alice", "reads notes", "Read notes.txt and report."),
            ModelReply::text("Alice is on it."),
            ModelReply::text("[]"),
            tool_round(vec![call(
                "c2",
                "send_message",
                json!({"to": "alice", "content": "Which line comes second?"}),
            )]),
            ModelReply::text("Asked alice a follow-up."),
            ModelReply::text("[]"),
            ModelReply::text("Alice: the second line is beta."),
            ModelReply::text("[]"),
        ],
        vec![(
            "alice",
            vec![
                tool_round(vec![call("a1", "read_file", json!({"path": "notes.txt"}))]),
                ModelReply::text("notes.txt has two lines: alpha and beta."),
                ModelReply::text("The second line is beta."),
            ],
        )],
    );
    t.run("Ask a teammate to read notes.txt.").await;

    assert_eq!(
        last_message(&t, "lead", 3),
        "<teammate-message id=\"<id>\" from=\"alice\" type=\"result\">\nnotes.txt has two lines: alpha and beta.\n</teammate-message>"
    );
    assert_eq!(
        last_message(&t, "alice", 2),
        "<teammate-message id=\"<id>\" from=\"lead\" type=\"message\">\nWhich line comes second?\n</teammate-message>"
    );
    assert_all_paired(&t.requests("lead"));
    assert_all_paired(&t.requests("alice"));
    insta::assert_snapshot!(
        "ch15_the_leads_requests",
        requests_of(&t, "lead", dir.path())
    );
    insta::assert_snapshot!("ch15_alices_requests", requests_of(&t, "alice", dir.path()));
    // Every message was delivered and acknowledged once: two results to the lead, two
    // messages to alice.
    assert_eq!((t.counts("lead"), t.counts("alice")), (done(2), done(2)));
    assert_eq!(
        t.team.records(),
        [TeamRecord {
            name: AgentId::new("alice").unwrap(),
            role: "reads notes".into(),
            status: TeammateStatus::ShutDown,
            current: None,
            last_result: Some("The second line is beta.".into()),
        }]
    );
}

#[tokio::test]
async fn p15_first_requests_in_full() {
    let dir = workspace();
    let mut t = team(
        15,
        dir.path(),
        vec![
            spawn("alice", "helper", "Say hi."),
            ModelReply::text("Started."),
            ModelReply::text("[]"),
            ModelReply::text("She said hi."),
            ModelReply::text("[]"),
        ],
        vec![("alice", vec![ModelReply::text("hi")])],
    );
    t.run("Start a helper.").await;
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let full = |agent: &str| {
        crate::team_support::ids_out(&render::full(&t.requests(agent)[0]))
            .replace(&root, "<workspace>")
    };
    insta::assert_snapshot!("p15_the_leads_first_request_in_full", full("lead"));
    insta::assert_snapshot!("p15_a_teammates_first_request_in_full", full("alice"));
}

/// The lead woken by alice's result, on a manual clock: the woken request in full (system
/// prompt, tools, the whole history ending in the one fragment), the same bytes in two runs.
#[tokio::test]
async fn the_lead_woken_by_a_result_on_a_manual_clock_sends_this_request_in_full() {
    let woken = || async {
        let dir = workspace();
        let start: agent_cron::Timestamp = "2026-03-02T09:00:00Z".parse().unwrap();
        let mut t = team_at(
            15,
            dir.path(),
            vec![
                spawn("alice", "helper", "Say hi."),
                ModelReply::text("Started."),
                ModelReply::text("[]"),
                ModelReply::text("She said hi."),
                ModelReply::text("[]"),
            ],
            vec![("alice", vec![ModelReply::text("hi")])],
            Arc::new(agent_cron::ManualClock::new(start)),
        );
        t.run("Start a helper.").await;
        let root = dir.path().canonicalize().unwrap().display().to_string();
        // Requests 0 and 1 are the prompt's turn and 2 its memory extraction: 3 is the wake-up.
        crate::team_support::ids_out(&render::full(&t.requests("lead")[3]))
            .replace(&root, "<workspace>")
    };
    let (first, second) = (woken().await, woken().await);
    assert_eq!(first, second);
    insta::assert_snapshot!("p15_the_lead_woken_by_a_result_in_full", first);
}

/// While alice works on her first message and a second one waits for her, `team list` says
/// which message she works on and `mailbox alice` shows the waiting one's head line (its first
/// line, cut with `…`); both whole, with no key.
#[tokio::test]
async fn team_list_and_mailbox_show_a_teammate_mid_message_and_what_waits() {
    let dir = workspace();
    let start = json!({"name": "alice", "role": "works slowly", "prompt": "Think it over."});
    let next = json!({"to": "alice", "content": "Then summarise notes.txt.\nIn two lines."});
    let Team {
        mut session,
        lead,
        team,
        ..
    } = slow_team(
        15,
        dir.path(),
        vec![
            tool_round(vec![
                call("c1", "spawn_teammate", start),
                call("c2", "send_message", next),
            ]),
            ModelReply::text("Alice has two tasks."),
            ModelReply::text("[]"),
        ],
    );
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    handle.submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Give alice two tasks.".into(),
    });
    let running = tokio::spawn(async move { session.run(Mode::Interactive).await });
    let alice = AgentId::new("alice").unwrap();
    // Alice has asked her model (her first message is claimed) and the lead's turn is over.
    let (mut asked, mut idle) = (false, false);
    while !(asked && idle) {
        match events.recv().await.unwrap() {
            SessionEvent::Agent(e)
                if e.agent == alice && matches!(e.event, AgentEvent::RequestSent { .. }) =>
            {
                asked = true;
            }
            SessionEvent::Idle => idle = true,
            _ => {}
        }
    }
    let current = team.records()[0].current.clone().unwrap();
    let waiting = team.mailbox().peek(&alice, 5).unwrap();
    assert_eq!(waiting.len(), 1);
    let list = command("agent-tutorial", dir.path())
        .args(["team", "list"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(list),
        format!("alice: running (works slowly)\n  working on message {current}\n")
    );
    let mailbox = command("agent-tutorial", dir.path())
        .args(["mailbox", "alice"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(mailbox),
        format!(
            "mailbox alice: ready 1, processing 1, done 0, quarantine 0\n  ready {} from lead (message): Then summarise notes.txt.…\n",
            waiting[0].id
        )
    );
    handle.submit(Op::Shutdown(EndReason::Done));
    running.await.unwrap();
    lead.finish().unwrap();
}

/// A misspelt name is an error naming the team, and no mailbox is made for it; a name that
/// is a path is not a name at all.
#[tokio::test]
async fn mail_to_an_unknown_or_path_like_name_fails_and_creates_nothing() {
    let dir = workspace();
    let mut t = team(
        15,
        dir.path(),
        vec![
            tool_round(vec![
                call(
                    "c1",
                    "send_message",
                    json!({"to": "alcie", "content": "hi"}),
                ),
                call(
                    "c2",
                    "send_message",
                    json!({"to": "../../outside", "content": "hi"}),
                ),
                call(
                    "c3",
                    "spawn_teammate",
                    json!({"name": "../x", "role": "r", "prompt": "p"}),
                ),
                call(
                    "c4",
                    "spawn_teammate",
                    json!({"name": "lead", "role": "r", "prompt": "p"}),
                ),
            ]),
            ModelReply::text("None of that worked."),
            ModelReply::text("[]"),
        ],
        vec![],
    );
    t.run("Write to alcie.").await;
    let results = crate::support::tool_results(&t.requests("lead")[1].messages);
    assert_eq!(
        results,
        [
            "c1: Error [unknown_recipient]: there is no teammate named `alcie`; the agents are: lead",
            "c2: Error [unknown_recipient]: there is no teammate named `../../outside`; the agents are: lead",
            "c3: Error [invalid_arguments]: `../x` is not an agent name: use 1 to 32 lowercase letters, digits and single hyphens (like `reviewer-2`)",
            "c4: Error [invalid_arguments]: `lead` is the lead's name; choose another",
        ]
    );
    // Only the lead's mailbox exists (the session looked for its mail); none for a wrong name.
    let mail: Vec<String> = std::fs::read_dir(dir.path().join(".agent_tutorial/mail"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(mail, ["lead"]);
    assert_eq!(t.counts("alcie"), Counts::default());
}

/// The offline example of docs/ch15.md: one script per agent, then the read-only views.
#[test]
fn the_chapter_binary_runs_a_team_from_a_script_and_team_list_and_mailbox_show_it() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!({
            "lead": [
                {"tool_calls": [{"id": "c1", "name": "spawn_teammate", "arguments": {"name": "alice", "role": "reads notes", "prompt": "Read notes.txt and report."}}]},
                {"content": "Alice is on it."},
                {"content": "[]"},
                {"content": "Alice says notes.txt holds alpha and beta."},
                {"content": "[]"}
            ],
            "alice": [
                {"tool_calls": [{"id": "a1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
                {"content": "notes.txt has two lines: alpha and beta."}
            ]
        }),
    );
    let run = command("ch15", dir.path())
        .args([
            "--script",
            script.to_str().unwrap(),
            "--prompt",
            "Ask a teammate to read notes.txt.",
        ])
        .assert()
        .success();
    // Each agent's lines in its order (the two agents' lines interleave as they run).
    let out = stdout_of(run);
    let said = |who: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with(who))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        (said("[lead] "), said("[alice] "), out.lines().count()),
        (
            vec![
                "[lead] Alice is on it.".to_string(),
                "[lead] Alice says notes.txt holds alpha and beta.".to_string()
            ],
            vec!["[alice] notes.txt has two lines: alpha and beta.".to_string()],
            3
        )
    );
    let list = command("agent-tutorial", dir.path())
        .args(["team", "list"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(list),
        "alice: shut down (reads notes)\n  last result: notes.txt has two lines: alpha and beta.\n"
    );
    let mailbox = command("agent-tutorial", dir.path())
        .args(["mailbox", "lead"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(mailbox),
        "mailbox lead: ready 0, processing 0, done 1, quarantine 0\n"
    );
    let escape = command("agent-tutorial", dir.path())
        .args(["mailbox", "../lead"])
        .assert()
        .code(2);
    assert_eq!(
        stderr_of(escape),
        "error: `../lead` is not an agent name: use 1 to 32 lowercase letters, digits and single hyphens (like `reviewer-2`)\n"
    );
}

/// Mail an earlier process left for the lead, among planted files: an oversized one and a
/// corrupt one are quarantined with their reasons (never read whole, never blocking), the good
/// one still wakes the lead.
#[test]
fn a_mailbox_is_bounded_on_load_and_a_bad_file_never_blocks_the_good_one() {
    let dir = workspace();
    let ready = dir.path().join(".agent_tutorial/mail/lead/ready");
    std::fs::create_dir_all(&ready).unwrap();
    let good = agent_team::MailMessage {
        id: agent_team::MessageId::parse("0000002a-00000000001-000000000003").unwrap(),
        from: AgentId::new("alice").unwrap(),
        to: AgentId::lead(),
        kind: agent_team::MailKind::Result,
        body: "left over from yesterday".into(),
        created_at: 3,
        failures: vec![],
    };
    std::fs::write(
        ready.join(good.file_name()),
        serde_json::to_vec(&good).unwrap(),
    )
    .unwrap();
    let corrupt = "00000000000000000001-0000002a-00000000001-000000000001.json";
    std::fs::write(ready.join(corrupt), "{not json").unwrap();
    let huge = "00000000000000000002-0000002a-00000000001-000000000002.json";
    let limit = agent_team::mailbox::READ_LIMIT;
    let size = limit + 1;
    std::fs::write(ready.join(huge), vec![b' '; size as usize]).unwrap();
    let script = write_script(
        dir.path(),
        json!({"lead": [
            {"content": "Hello."}, {"content": "[]"},
            {"content": "Alice's old result is in."}, {"content": "[]"}
        ]}),
    );
    let run = command("ch15", dir.path())
        .args(["--script", script.to_str().unwrap(), "--prompt", "hi"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(run),
        "[lead] Hello.\n[lead] Alice's old result is in.\n"
    );
    let mailbox = command("agent-tutorial", dir.path())
        .args(["mailbox", "lead"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(mailbox),
        format!(
            "mailbox lead: ready 0, processing 0, done 1, quarantine 2\n  quarantined {corrupt}: not a message: key must be a string at line 1 column 2\n  quarantined {huge}: `.agent_tutorial/mail/lead/ready/{huge}` is {size} bytes, over the limit of {limit} bytes\n"
        )
    );
}

/// `team list` reads at most 8 records and says what it left out; a file over its bound is
/// an error, not a long read.
#[test]
fn the_team_file_is_bounded_on_load() {
    let dir = workspace();
    let state = dir.path().join(".agent_tutorial");
    std::fs::create_dir_all(&state).unwrap();
    let records: Vec<serde_json::Value> = (1..=10)
        .map(|n| json!({"name": format!("t{n}"), "role": "r", "status": "idle"}))
        .collect();
    std::fs::write(
        state.join("team.json"),
        json!({ "teammates": records }).to_string(),
    )
    .unwrap();
    let list = command("agent-tutorial", dir.path())
        .args(["team", "list"])
        .assert()
        .success();
    let expected: String = (1..=8).map(|n| format!("t{n}: idle (r)\n")).collect();
    assert_eq!(
        stdout_of(list),
        format!(
            "{expected}warning: 2 more records in the team file were left out (at most 8 are read)\n"
        )
    );
    let limit = agent_team::team_file::READ_LIMIT;
    std::fs::write(state.join("team.json"), vec![b' '; limit as usize + 1]).unwrap();
    let list = command("agent-tutorial", dir.path())
        .args(["team", "list"])
        .assert()
        .code(1);
    assert_eq!(
        stderr_of(list),
        format!(
            "error: the team file is not usable: `.agent_tutorial/team.json` is {} bytes, over the limit of {limit} bytes\n",
            limit + 1
        )
    );
}
