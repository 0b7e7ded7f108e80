//! The README's first command on a fresh machine: `just chNN ...` (scripts/run-chapter.sh) with
//! no `OPENAI_*` configured sets up the local model and runs the chapter against it with the
//! local settings; with a configuration it uses that. The set-up (a download and a build) is
//! replaced by a command that prints the settings of a mock server, and the binaries are the
//! ones cargo built for this test, so nothing is downloaded or built here.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The notice, one line, before anything else.
const NOTICE: &str = "no OPENAI_* configuration (environment or .env): using the local model, SmolLM2-135M on 127.0.0.1 (set OPENAI_API_KEY, OPENAI_MODEL to use another)";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/run-chapter.sh")
}

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_agent-tutorial"))
        .parent()
        .unwrap()
        .to_path_buf()
}

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Two files."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        })))
        .mount(&server)
        .await;
    server
}

/// A stand-in for scripts/local-model.sh: progress on stderr, the settings on stdout, and a
/// mark that it ran.
fn fake_setup(dir: &Path, uri: &str) -> String {
    let path = dir.join("setup.sh");
    std::fs::write(
        &path,
        format!(
            "echo 'local-model: ready' >&2\ntouch '{}'\n\
             echo 'export OPENAI_BASE_URL={uri}/v1'\necho 'export OPENAI_API_KEY=local'\n\
             echo 'export OPENAI_MODEL=smollm2-135m'\necho 'export OPENAI_FALLBACK_MODEL=smollm2-135m'\n",
            dir.join("setup-ran").display()
        ),
    )
    .unwrap();
    format!("bash '{}'", path.display())
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    setup_ran: bool,
    /// (model, temperature, max_tokens, number of tools offered) of each request.
    requests: Vec<(Value, Value, Value, usize)>,
}

/// Where the run finds a configuration pointing at the mock server, if anywhere.
#[derive(Debug, Clone, Copy)]
enum Config {
    Nowhere,
    Environment,
    DotEnv,
}

/// Runs `run-chapter.sh 1 <args>` in a fresh folder.
async fn run(config: Config, args: &[&str]) -> Ran {
    run_chapter("1", config, args).await
}

/// Runs `run-chapter.sh <chapter> <args>` in a fresh folder.
async fn run_chapter(chapter: &str, config: Config, args: &[&str]) -> Ran {
    let server = server().await;
    let uri = server.uri();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let setup = fake_setup(dir.path(), &uri);
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(script())
        .arg(chapter)
        .args(args)
        .current_dir(&work)
        .env("LOCAL_MODEL_SETUP", setup)
        .env("AGENT_TUTORIAL_BIN_DIR", bin_dir())
        .env("HOME", dir.path())
        .env_remove("USE_LOCAL_MODEL")
        .env_remove("RUST_LOG");
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            cmd.env_remove(key);
        }
    }
    match config {
        Config::Nowhere => {}
        Config::Environment => {
            cmd.env("OPENAI_API_KEY", "k")
                .env("OPENAI_MODEL", "mine")
                .env("OPENAI_BASE_URL", format!("{uri}/v1"));
        }
        Config::DotEnv => std::fs::write(
            work.join(".env"),
            format!("OPENAI_API_KEY=k\nOPENAI_MODEL=mine\nOPENAI_BASE_URL={uri}/v1\n"),
        )
        .unwrap(),
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let requests = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            let tools = body["tools"].as_array().map_or(0, Vec::len);
            (
                body["model"].clone(),
                body["temperature"].clone(),
                body["max_tokens"].clone(),
                tools,
            )
        })
        .collect();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        setup_ran: dir.path().join("setup-ran").exists(),
        requests,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_key_the_chapter_runs_against_the_local_model_with_the_local_settings() {
    let ran = run(Config::Nowhere, &["--prompt", "What is here?"]).await;
    assert_eq!(
        (ran.code, ran.stdout.as_str(), ran.setup_ran),
        (Some(0), "Two files.\n", true)
    );
    assert_eq!(ran.stderr, format!("{NOTICE}\nlocal-model: ready\n"));
    assert_eq!(
        ran.requests,
        vec![(json!("smollm2-135m"), json!(0.0), json!(512), 1)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_setting_given_on_the_command_line_wins() {
    let ran = run(
        Config::Nowhere,
        &["--max-tokens", "64", "--prompt", "What is here?"],
    )
    .await;
    assert_eq!((ran.code, ran.setup_ran), (Some(0), true));
    assert_eq!(
        ran.requests,
        vec![(json!("smollm2-135m"), json!(0.0), json!(64), 1)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_configuration_in_the_environment_or_dotenv_that_is_used() {
    for config in [Config::Environment, Config::DotEnv] {
        let ran = run(config, &["--prompt", "hi"]).await;
        assert_eq!(
            (
                ran.code,
                ran.stdout.as_str(),
                ran.stderr.as_str(),
                ran.setup_ran
            ),
            (Some(0), "Two files.\n", "", false),
            "{config:?}"
        );
        assert_eq!(
            ran.requests,
            vec![(json!("mine"), Value::Null, Value::Null, 1)],
            "{config:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_session_needs_no_model() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    std::fs::write(&script, r#"[{"content": "offline"}]"#).unwrap();
    let ran = run(
        Config::Nowhere,
        &["--script", script.to_str().unwrap(), "--prompt", "hi"],
    )
    .await;
    assert_eq!(
        (ran.code, ran.stdout.as_str(), ran.setup_ran, ran.requests),
        (Some(0), "offline\n", false, Vec::new())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chapter_not_in_the_table_is_refused_without_setting_up_a_model() {
    let ran = run_chapter("21", Config::Nowhere, &["--prompt", "hi"]).await;
    assert_eq!(
        (
            ran.code,
            ran.stdout.as_str(),
            ran.stderr.as_str(),
            ran.setup_ran
        ),
        (
            Some(2),
            "",
            "error: there is no chapter 21; chapters are numbered 1 to 20\n",
            false
        )
    );
}

/// `just --list` shows only the comment line right above a recipe: that line must be a whole
/// sentence, not the end of one that started on the line before.
#[test]
fn every_recipe_description_just_lists_is_a_whole_sentence() {
    let justfile =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../justfile"))
            .unwrap();
    let lines: Vec<&str> = justfile.lines().collect();
    let mut cut = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        // `name args...:` at the start of a line (not a setting, a variable or a comment).
        let is_recipe = !line.starts_with([' ', '\t', '#'])
            && !line.contains(":=")
            && line.split_once(':').is_some_and(|(head, _)| {
                head.split_whitespace().next().is_some_and(|name| {
                    name.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                })
            });
        if !is_recipe || n == 0 {
            continue;
        }
        let Some(shown) = lines[n - 1].strip_prefix("# ") else {
            continue;
        };
        let above = n
            .checked_sub(2)
            .and_then(|m| lines[m].strip_prefix("# "))
            .map(str::trim_end);
        // A sentence ends with `.` (also inside parentheses, `.)`) or introduces with `:`; a
        // description may end on an elided value (`…`).
        let continues = above.is_some_and(|a| !(a.ends_with(['.', ':']) || a.ends_with(".)")));
        if continues || !shown.trim_end().ends_with(['.', '…']) {
            cut.push(format!("{}: {shown}", line.trim_end()));
        }
    }
    assert_eq!(cut, Vec::<String>::new());
}
