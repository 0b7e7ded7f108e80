//! `--stream` (chapter 11 on): the answer printed as it streams, once, even across a cut
//! stream's retry; the same requests as without streaming; refused before chapter 11.

use std::path::Path;

use serde_json::Value;

use crate::support::{command, stderr_of, workspace};

#[path = "../../../crates/openai/tests/suite/sse_server.rs"]
mod sse_server;

use sse_server::{Answer, Reply, SseServer};

#[test]
fn the_stream_flags_before_chapter_11_are_a_usage_error_naming_it() {
    let dir = workspace();
    for flag in ["--stream", "--no-stream"] {
        let assert = command("agent-tutorial", dir.path())
            .args(["run", "--chapter", "10", "--prompt", "hi", flag])
            .assert()
            .code(2)
            .stdout("");
        assert_eq!(
            stderr_of(assert),
            format!(
                "error: {flag} needs chapter 11 or later (the chapter that owns the model \
                 transport and retries a cut stream); chapter 10 reads each reply whole\n"
            )
        );
    }
}

/// Runs chapter 11 against `server` with `flags`, in `dir`; stdout, stderr and the exit code.
fn run_against(server: &SseServer, dir: &Path, flags: &[&str]) -> (String, String, i32) {
    let output = command("agent-tutorial", dir)
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_MODEL", "m")
        .env("OPENAI_FALLBACK_MODEL", "m-small")
        .env("OPENAI_BASE_URL", &server.base_url)
        .args(["run", "--chapter", "11", "--retry-base-ms", "0"])
        .args(flags)
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.code().unwrap_or(-1),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_way_is_retried_and_the_answer_printed_once() {
    let answer = Reply::text("Hello, world");
    let cut: String = answer.sse().split_inclusive("\n\n").take(4).collect();
    let server = SseServer::start(vec![
        Answer::Raw {
            body: cut.into_bytes(),
            piece: 1,
        },
        Answer::Reply {
            reply: answer,
            piece: 1,
        },
        // Memory extraction after the turn.
        Answer::Reply {
            reply: Reply::text("[]"),
            piece: 1,
        },
    ])
    .await;
    let dir = workspace();
    let root = dir.path().to_path_buf();
    let (stdout, stderr, code) = tokio::task::spawn_blocking(move || {
        run_against(&server, &root, &["--stream", "--prompt", "hi"])
    })
    .await
    .unwrap();
    assert_eq!(
        (stdout.as_str(), stderr.as_str(), code),
        (
            "Hello, world\n",
            "[memory] selected: (none)\n\
             retrying in 0.1 s (connection error or timeout, attempt 2 of 6)\n\
             [memory] extracted: (none)\n",
            0
        )
    );
}

/// The parts of a request body that differ between two sessions whatever they do: the
/// session's prompt cache key and the workspace's path.
fn normalized(body: &str, dir: &Path) -> String {
    let mut value: Value = serde_json::from_str(body).unwrap();
    if let Some(key) = value.get_mut("prompt_cache_key") {
        *key = Value::String("<session>".into());
    }
    value
        .to_string()
        .replace(&dir.display().to_string(), "<workspace>")
}

/// One session of two rounds (a file read, then the answer), run with `--stream` and with
/// `--no-stream`: the recorded requests are equal whole, and so are the bodies sent but for
/// the two stream fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_sends_the_same_requests_streamed_or_not() {
    let answers = || {
        vec![
            Answer::Reply {
                reply: Reply {
                    content: Some("Reading it.".into()),
                    tool_calls: vec![(
                        "call_1".into(),
                        "read_file".into(),
                        r#"{"path":"notes.txt"}"#.into(),
                    )],
                    finish: "tool_calls".into(),
                },
                piece: 3,
            },
            Answer::Reply {
                reply: Reply::text("It lists alpha and beta."),
                piece: 3,
            },
            Answer::Reply {
                reply: Reply::text("[]"),
                piece: 3,
            },
        ]
    };
    let mut runs = Vec::new();
    for flag in ["--stream", "--no-stream"] {
        let server = SseServer::start(answers()).await;
        let dir = workspace();
        let root = dir.path().to_path_buf();
        let record = root.join("requests.jsonl");
        let record_arg = record.display().to_string();
        let (server, (stdout, stderr, code)) = tokio::task::spawn_blocking(move || {
            let flags = [
                flag,
                "--prompt",
                "What is in notes.txt?",
                "--record",
                &record_arg,
            ];
            let out = run_against(&server, &root, &flags);
            (server, out)
        })
        .await
        .unwrap();
        let recorded = std::fs::read_to_string(&record).unwrap();
        let bodies: Vec<String> = server
            .bodies()
            .iter()
            .map(|b| normalized(b, dir.path()))
            .collect();
        runs.push((
            stdout,
            stderr,
            code,
            recorded.replace(&dir.path().display().to_string(), "<workspace>"),
            bodies,
        ));
    }
    let (stdout, stderr, code, recorded, bodies) = runs.pop().unwrap();
    let (s_stdout, s_stderr, s_code, s_recorded, s_bodies) = runs.pop().unwrap();
    // The streamed run also shows the text beside the tool call, as it came.
    assert_eq!(
        (s_stdout.as_str(), stdout.as_str()),
        (
            "Reading it.\nIt lists alpha and beta.\n",
            "It lists alpha and beta.\n"
        )
    );
    assert_eq!((s_stderr, s_code), (stderr, code));
    assert_eq!(s_recorded, recorded);
    let with_stream: Vec<String> = bodies
        .iter()
        .map(|b| {
            let mut value: Value = serde_json::from_str(b).unwrap();
            value["stream"] = Value::Bool(true);
            value["stream_options"] = serde_json::json!({"include_usage": true});
            value.to_string()
        })
        .collect();
    assert_eq!(s_bodies, with_stream);
    assert_eq!(bodies.len(), 3);
}

/// Ctrl-C while the answer streams: the run stops at once (130), the half line is ended, and
/// the server sees the connection closed (the body was dropped, not read to its end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_while_the_answer_streams_stops_it_at_once() {
    use std::io::Read;

    use super::cancel::{interrupt, spawn_chapter, wait_exit};

    let first: String = Reply::text("Hello, world")
        .sse()
        .split_inclusive("\n\n")
        .take(3)
        .collect();
    let server = SseServer::start(vec![Answer::Stall {
        body: first.into_bytes(),
    }])
    .await;
    let dir = workspace();
    let root = dir.path().to_path_buf();
    let base_url = server.base_url.clone();
    // Bounded: a regression that never prints fails here instead of hanging the suite.
    let run = tokio::task::spawn_blocking(move || {
        let mut child = spawn_chapter(
            "ch11",
            &root,
            &[
                "--base-url",
                &base_url,
                "--model",
                "m",
                "--stream",
                "--prompt",
                "hi",
            ],
            &[
                ("OPENAI_API_KEY", "sk-test-not-a-key"),
                ("OPENAI_FALLBACK_MODEL", "m-small"),
            ],
            std::process::Stdio::null(),
        );
        let mut out = child.stdout.take().unwrap();
        // The first piece of the answer is on stdout while the stream is still open.
        let mut shown = [0u8; 3];
        out.read_exact(&mut shown).unwrap();
        assert_eq!(&shown, b"Hel");
        interrupt(&child);
        let code = wait_exit(&mut child).code();
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (code, format!("Hel{rest}"), stderr)
    });
    let (code, stdout, stderr) = tokio::time::timeout(std::time::Duration::from_secs(60), run)
        .await
        .expect("the run never showed the first text")
        .unwrap();
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            Some(130),
            "Hel\n",
            "[memory] selected: (none)\n\
             [cancel] stopping the turn (Ctrl-C again to quit)\n\
             error: cancelled: the turn was stopped before it finished\n"
        )
    );
    tokio::time::timeout(std::time::Duration::from_secs(60), server.answered(1))
        .await
        .unwrap();
}
