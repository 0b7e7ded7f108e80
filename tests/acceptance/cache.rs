//! The provider's prompt cache, made visible (`--cache-report`) and kept warm
//! (deterministic requests, `prompt_cache_key`, `--memory-placement reminder`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use agent_core::{AgentEvent, ModelReply, ModelRequest};
use agent_memory::{MemoryRecord, MemoryStore, MemoryType};
use agent_tools::Workspace;
use agent_tutorial::MemoryPlacement;
use agent_tutorial::cache_report::{CacheLedger, CacheRow, mean_ratio, table};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::support::{
    call, command, scripted_agent_with, stderr_of, tool_round, workspace, write_script,
};

const TURNS: usize = 5;
/// Per user turn: three tool rounds and the answer.
const REQUESTS_PER_TURN: usize = 4;

fn seed_memories(dir: &std::path::Path) {
    let record = |name: &str, description: &str, body: &str| {
        MemoryRecord::new(name, MemoryType::Project, description, body)
    };
    MemoryStore::open(&Workspace::new(dir).unwrap())
        .upsert(vec![
            record("style", "How code here is formatted", "Tabs in .rs files."),
            record("tests", "How tests are run", "cargo test, offline."),
            record(
                "notes",
                "What notes.txt is for",
                "A scratch list; keep it short.",
            ),
        ])
        .unwrap();
}

/// The selection changes on turns 2 and 4; the same selection on 3 and 5.
const SELECTIONS: [&str; TURNS] = [
    r#"["style"]"#,
    r#"["tests"]"#,
    r#"["tests"]"#,
    r#"["notes"]"#,
    r#"["notes"]"#,
];

/// Per turn: the memory selection (a side call), three tool rounds, the answer, extraction.
fn session() -> Vec<ModelReply> {
    let mut replies = Vec::new();
    for (turn, selection) in SELECTIONS.iter().enumerate() {
        replies.push(ModelReply::text(*selection));
        replies.push(tool_round(vec![call(
            &format!("t{turn}a"),
            "read_file",
            json!({"path": "notes.txt"}),
        )]));
        replies.push(tool_round(vec![call(
            &format!("t{turn}b"),
            "glob",
            json!({"pattern": "**/*.rs"}),
        )]));
        replies.push(tool_round(vec![call(
            &format!("t{turn}c"),
            "read_file",
            json!({"path": "src/main.rs"}),
        )]));
        replies.push(ModelReply::text(format!("Turn {turn} done.")));
        replies.push(ModelReply::text("[]"));
    }
    replies
}

/// Runs the five-turn session on `chapter` and returns the requests the loop sent.
async fn run_session(
    chapter: u8,
    dir: &std::path::Path,
    placement: MemoryPlacement,
) -> Vec<Arc<ModelRequest>> {
    seed_memories(dir);
    let sink = Arc::new(agent_core::CollectingSink::new());
    let (mut agent, model) = scripted_agent_with(chapter, dir, session(), |deps| {
        deps.events = sink.clone();
        deps.memory_placement = placement;
    });
    for turn in 0..TURNS {
        agent
            .run_turn(&format!("Look at the project, part {turn}"))
            .await
            .unwrap();
    }
    model.finish().unwrap();
    sink.events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::RequestSent { request, .. } => Some(request),
            _ => None,
        })
        .collect()
}

fn rows(requests: &[Arc<ModelRequest>]) -> Vec<CacheRow> {
    let mut ledger = CacheLedger::new();
    let at = Instant::now();
    for request in requests {
        ledger.request_sent(request, at);
    }
    ledger.rows().to_vec()
}

fn ratios(rows: &[CacheRow]) -> String {
    rows.iter()
        .map(|r| format!("{:.3}", r.stable_prefix_ratio))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The figures quoted in docs/ch10.md (`cargo test -p agent-tutorial --test acceptance --
/// cache::figures -- --nocapture`). Inside a turn each request adds one tool round (~200
/// bytes) to the request before; chapter 10's requests are small (~3.8 KB), so its follow-ups
/// share 90-98 % (the lowest also carries chapter 5's plan reminder). The bar of 0.95 inside a
/// turn is held on chapter 14's requests (17 tools), the same prompt and memory machinery.
#[tokio::test]
async fn figures_reminder_placement_keeps_the_prefix_when_the_memory_selection_changes() {
    for chapter in [10, 14] {
        let mut means = Vec::new();
        for placement in [MemoryPlacement::Prompt, MemoryPlacement::Reminder] {
            let dir = workspace();
            let requests = run_session(chapter, dir.path(), placement).await;
            assert_eq!(requests.len(), TURNS * REQUESTS_PER_TURN, "{placement:?}");
            let rows = rows(&requests);
            let (first, follow_ups): (Vec<CacheRow>, Vec<CacheRow>) = rows
                .iter()
                .cloned()
                .partition(|r| (r.request - 1) % REQUESTS_PER_TURN == 0);
            let inside = follow_ups
                .iter()
                .map(|r| r.stable_prefix_ratio)
                .fold(f64::INFINITY, f64::min);
            // The first request of turns 2-5, each against the last request of the turn before.
            let across = mean_ratio(&first[1..]);
            println!(
                "chapter {chapter} {placement:?}: per request [{}]; inside turns min {inside:.3}, mean {:.3}; across turns mean {across:.3} ({})",
                ratios(&rows),
                mean_ratio(&follow_ups),
                ratios(&first[1..]),
            );
            if chapter == 14 {
                assert!(inside >= 0.95, "{placement:?} inside a turn: {inside:.3}");
            }
            means.push(across);
        }
        let (prompt, reminder) = (means[0], means[1]);
        assert!(
            reminder >= 0.9,
            "chapter {chapter}: reminder across turns {reminder:.3}"
        );
        assert!(
            prompt < reminder,
            "chapter {chapter}: prompt {prompt:.3} vs reminder {reminder:.3}"
        );
    }
}

#[tokio::test]
async fn reminder_placement_keeps_the_system_prompt_static_and_each_block_before_its_turn() {
    let dir = workspace();
    let requests = run_session(10, dir.path(), MemoryPlacement::Reminder).await;
    let prompts: Vec<&str> = requests.iter().map(|r| r.messages[0].text()).collect();
    assert!(prompts.iter().all(|p| *p == prompts[0]));
    assert!(!prompts[0].contains("## memory"), "{}", prompts[0]);
    // The last request: each turn's block, stored right before that turn's prompt.
    let last = requests.last().unwrap();
    let pairs: Vec<(String, String)> = last
        .messages
        .windows(2)
        .filter(|w| w[1].role() == "user")
        .map(|w| {
            (
                w[0].text().lines().nth(1).unwrap_or_default().to_string(),
                w[1].text().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = ["style", "tests", "tests", "notes", "notes"]
        .iter()
        .enumerate()
        .map(|(turn, name)| {
            (
                format!("## {name} (project)"),
                format!("Look at the project, part {turn}"),
            )
        })
        .collect();
    assert_eq!(pairs, expected);
}

/// The exact wire bodies of `requests`, the workspace path made neutral.
fn wire(requests: &[Arc<ModelRequest>], dir: &std::path::Path) -> Vec<String> {
    let root = dir.canonicalize().unwrap().display().to_string();
    requests
        .iter()
        .map(|r| {
            let body = agent_openai::to_chat_request("m", agent_openai::Sampling::default(), r);
            serde_json::to_string(&body)
                .unwrap()
                .replace(&root, "<workspace>")
        })
        .collect()
}

#[tokio::test]
async fn the_same_session_twice_sends_the_same_bytes() {
    for chapter in [10, 14] {
        let (a, b) = (workspace(), workspace());
        let first = run_session(chapter, a.path(), MemoryPlacement::Prompt).await;
        let second = run_session(chapter, b.path(), MemoryPlacement::Prompt).await;
        assert_eq!(
            wire(&first, a.path()),
            wire(&second, b.path()),
            "chapter {chapter}"
        );
    }
}

#[test]
fn tool_schemas_go_out_with_sorted_keys() {
    let spec = agent_core::ToolSpec::new(
        "t",
        "d",
        agent_core::ToolEffect::Read,
        json!({"type": "object", "required": ["b"], "properties": {"b": {"type": "string"}, "a": {"type": "string"}}}),
    );
    let request = ModelRequest {
        tools: vec![spec],
        ..ModelRequest::default()
    };
    let body = agent_openai::to_chat_request("m", agent_openai::Sampling::default(), &request);
    let text = serde_json::to_string(&body.tools).unwrap();
    assert_eq!(
        text,
        r#"[{"type":"function","function":{"name":"t","description":"d","parameters":{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b"],"type":"object"}}}]"#
    );
}

/// Answers a tool round, then the answer, then `[]` for memory extraction; usage on each,
/// with `cached_tokens` when `cached` says so.
struct Session {
    next: AtomicUsize,
    cached: bool,
}

impl Respond for Session {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        let message = match i {
            0 => {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "g1", "type": "function", "function": {"name": "glob", "arguments": "{\"pattern\":\"*.txt\"}"}}]})
            }
            1 => json!({"role": "assistant", "content": "One text file."}),
            _ => json!({"role": "assistant", "content": "[]"}),
        };
        let prompt = 1000 + 100 * i as u32;
        let mut usage =
            json!({"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5});
        if self.cached {
            usage["prompt_tokens_details"] = json!({"cached_tokens": 900 * i as u32});
        }
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": if i == 0 { "tool_calls" } else { "stop" }}],
            "usage": usage
        }))
    }
}

/// Runs chapter 10 with `args` against a mock that reports cached tokens or not; returns
/// stderr and the bodies the server received.
async fn against_server(cached: bool, args: &[&str]) -> (String, Vec<Value>) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Session {
            next: AtomicUsize::new(0),
            cached,
        })
        .mount(&server)
        .await;
    let uri = server.uri();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let stderr = tokio::task::spawn_blocking(move || {
        let dir = workspace();
        stderr_of(
            command("ch10", dir.path())
                .env("OPENAI_API_KEY", "k")
                .env("OPENAI_MODEL", "m")
                .env("OPENAI_BASE_URL", format!("{uri}/v1"))
                .args(["--prompt", "Which text files are there?"])
                .args(&args)
                .assert()
                .success(),
        )
    })
    .await
    .unwrap();
    let bodies = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    (stderr, bodies)
}

/// Every data row's last column (the time, which varies) replaced by `T`.
fn without_times(table: &str) -> String {
    table
        .lines()
        .map(|line| match line.trim_end().rsplit_once(' ') {
            Some((rest, last)) if last.parse::<u64>().is_ok() => format!("{} T", rest.trim_end()),
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_report_shows_the_cached_tokens_a_server_reports() {
    let (stderr, bodies) = against_server(true, &["--cache-report"]).await;
    let report = stderr
        .lines()
        .skip_while(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    // Two loop requests (the extraction side call is not one of the loop's); the second
    // starts with all of the first but its closing bracket.
    let bytes: Vec<usize> = report
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    let stable = bytes[0] - 1;
    let row = |request, bytes, stable: usize, prompt, cached| CacheRow {
        request,
        bytes,
        stable_prefix_bytes: stable,
        stable_prefix_ratio: stable as f64 / bytes as f64,
        prompt_tokens: Some(prompt),
        cached_prompt_tokens: Some(cached),
        elapsed_ms: Some(0),
    };
    let expected = without_times(&table(&[
        row(1, bytes[0], 0, 1000, 0),
        row(2, bytes[1], stable, 1100, 900),
    ]));
    assert_eq!(without_times(&report), expected, "{stderr}");
    // One key for the session, on every request, the memory side call's too.
    let keys: Vec<&Value> = bodies.iter().map(|b| &b["prompt_cache_key"]).collect();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    let key = keys[0].as_str().unwrap();
    assert_eq!(
        (key.len(), key.starts_with("agent-tutorial-")),
        (31, true),
        "{key}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_report_as_json_shows_a_dash_for_unreported_cached_tokens_as_null() {
    let (stderr, _) = against_server(false, &["--cache-report", "--json"]).await;
    let start = stderr.find("[\n").unwrap();
    let mut rows: Vec<Value> = serde_json::from_str(&stderr[start..]).unwrap();
    for row in &mut rows {
        assert!(row["elapsed_ms"].is_u64(), "{row}");
        row["elapsed_ms"] = json!("T");
    }
    let bytes = |i: usize| rows[i]["bytes"].as_u64().unwrap();
    let (first, second) = (bytes(0), bytes(1));
    let stable = first - 1;
    assert_eq!(
        rows,
        vec![
            json!({"request": 1, "bytes": first, "stable_prefix_bytes": 0, "stable_prefix_ratio": 0.0,
                   "prompt_tokens": 1000, "cached_prompt_tokens": null, "elapsed_ms": "T"}),
            json!({"request": 2, "bytes": second, "stable_prefix_bytes": stable,
                   "stable_prefix_ratio": stable as f64 / second as f64,
                   "prompt_tokens": 1100, "cached_prompt_tokens": null, "elapsed_ms": "T"}),
        ]
    );
    // `=json` is the same report.
    let (again, _) = against_server(false, &["--cache-report=json"]).await;
    assert!(again.contains("\"stable_prefix_ratio\""), "{again}");
}

#[test]
fn memory_placement_is_refused_before_chapter_10() {
    let dir = workspace();
    let script = write_script(dir.path(), json!([{"content": "hi"}]));
    let stderr = stderr_of(
        command("ch09", dir.path())
            .args([
                "--memory-placement",
                "reminder",
                "--prompt",
                "hi",
                "--script",
            ])
            .arg(&script)
            .assert()
            .code(2),
    );
    assert_eq!(
        stderr,
        "error: --memory-placement needs chapter 10 or later: chapter 9's system prompt is fixed (chapter 9 sends memory as its own message)\n"
    );
}

#[test]
fn prompt_json_shows_where_the_session_key_goes_from_chapter_10() {
    let dir = workspace();
    let key = |chapter: &str| {
        let out = command("agent-tutorial", dir.path())
            .args(["prompt", "--chapter", chapter, "--json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<Value>(&out).unwrap()["prompt_cache_key"].clone()
    };
    assert_eq!((key("9"), key("10")), (Value::Null, json!("<session id>")));
}
