//! The key stays in the process: not in a child's view of the agent's environment, not in any
//! output or file even when a server echoes it back, and never sent to a server a `.env` chose.

use std::path::Path;

use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::support::{command, workspace, write_script};

const KEY: &str = "sk-test-SECRET-0123456789abcdef";

/// How often `needle` occurs in `hay`.
fn count(hay: &[u8], needle: &str) -> usize {
    hay.windows(needle.len())
        .filter(|w| *w == needle.as_bytes())
        .count()
}

/// How often the key occurs in every file under `dir`, recursively.
fn key_in_files(dir: &Path) -> usize {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            total += key_in_files(&path);
        } else if meta.is_file() {
            total += count(&std::fs::read(&path).unwrap(), KEY);
        }
    }
    total
}

#[test]
fn bash_cannot_read_the_key_from_the_agents_environment() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "tr '\\0' '\\n' < /proc/$PPID/environ; env"}}]},
            {"content": "done"}
        ]),
    );
    let record = dir.path().join("requests.jsonl");
    let output = command("ch01", dir.path())
        // The key as a developer has it, next to a marker showing the /proc read works.
        .env("OPENAI_API_KEY", KEY)
        .env("AGENT_TEST_MARKER", "present")
        .args(["--prompt", "show the environment", "--script"])
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .assert()
        .success()
        .get_output()
        .clone();
    let requests: Vec<agent_core::ModelRequest> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen = requests[1].messages.last().unwrap().text().to_string();
    // Once from /proc/$PPID/environ, once from `env`: both views were read.
    assert_eq!(
        count(seen.as_bytes(), "AGENT_TEST_MARKER=present"),
        2,
        "{seen}"
    );
    assert_eq!(count(seen.as_bytes(), KEY), 0, "{seen}");
    assert_eq!(count(seen.as_bytes(), "OPENAI_"), 0, "{seen}");
    assert_eq!(
        [count(&output.stdout, KEY), count(&output.stderr, KEY)],
        [0, 0]
    );
    assert_eq!(key_in_files(dir.path()), 0);
}

/// Answers every request with its own `Authorization` header in the body.
struct Echo(u16);

impl Respond for Echo {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let auth = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = match self.0 {
            200 => format!("not json: {auth}"),
            404 => format!("no route for {auth}"),
            _ => json!({"error": {"message": format!("you sent {auth}")}}).to_string(),
        };
        ResponseTemplate::new(self.0).set_body_string(body)
    }
}

/// One run of `bin` against a server answering `status`; returns the key's count in stdout,
/// stderr and the workspace, and whether stderr shows the redacted echo.
fn run_against(server_uri: &str, bin: &str, rust_log: Option<&str>) -> ([usize; 3], bool) {
    let dir = workspace();
    let mut cmd = command(bin, dir.path());
    cmd.env("OPENAI_API_KEY", KEY)
        .env("OPENAI_MODEL", "m")
        .env("OPENAI_BASE_URL", format!("{server_uri}/v1"))
        .args(["-vv", "--prompt", "hi", "--request-timeout", "20"]);
    if let Some(level) = rust_log {
        cmd.env("RUST_LOG", level);
    }
    let output = cmd.assert().code(1).get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (
        [
            count(&output.stdout, KEY),
            count(&output.stderr, KEY),
            key_in_files(dir.path()),
        ],
        stderr.contains("Bearer [redacted]"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_echoing_the_key_never_gets_it_printed_or_written() {
    let mut results = Vec::new();
    for status in [400, 401, 404, 500, 200] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Echo(status))
            .mount(&server)
            .await;
        let uri = server.uri();
        let runs = tokio::task::spawn_blocking(move || {
            [
                ("ch01", None),
                ("ch10", None),
                ("ch01", Some("trace")),
                ("ch10", Some("trace")),
            ]
            .map(|(bin, log)| (status, bin, log, run_against(&uri, bin, log)))
        })
        .await
        .unwrap();
        results.extend(runs);
    }
    for (status, bin, log, (counts, redacted_echo)) in results {
        // The server's echo reached the error text, redacted; the key itself nowhere.
        assert_eq!(
            (counts, redacted_echo),
            ([0, 0, 0], true),
            "{bin} against HTTP {status} (RUST_LOG={log:?})"
        );
    }
}

#[test]
fn a_dotenv_cannot_send_the_users_key_to_its_own_server() {
    let dir = workspace();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(
        root.join(".env"),
        "OPENAI_BASE_URL=http://127.0.0.1:9/v1\nOPENAI_MODEL=m\n",
    )
    .unwrap();
    let path = root.join(".env").display().to_string();
    command("agent-tutorial", &root)
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "--chapter", "1", "--prompt", "hi"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {path} sets OPENAI_BASE_URL, but OPENAI_API_KEY comes from your environment: \
             a `.env` file may only point its own key at a server, so your key is not sent to an \
             address a file in the working directory chose.\nTo fix it: pass --base-url (or \
             export OPENAI_BASE_URL) if you trust that server, or remove OPENAI_BASE_URL from \
             {path}, or keep the key for that server in {path} and unset OPENAI_API_KEY in your \
             environment.\n"
        ));
}
