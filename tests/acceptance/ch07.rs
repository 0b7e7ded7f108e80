//! Chapter 7: skills.

use std::path::Path;

use agent_core::ModelReply;
use serde_json::json;

use crate::support::{
    call, command, scripted_agent, stderr_of, tool_results, tool_round, workspace,
};

/// Copies the shipped example skills into a workspace.
pub fn install_example_skills(dir: &Path) {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workspace/skills");
    for skill in ["commit-message", "rust-test"] {
        let to = dir.join("skills").join(skill);
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(examples.join(skill).join("SKILL.md"), to.join("SKILL.md")).unwrap();
    }
}

#[tokio::test]
async fn the_catalog_is_in_the_system_prompt_and_load_skill_returns_the_body() {
    let dir = workspace();
    install_example_skills(dir.path());
    let replies = vec![
        tool_round(vec![
            call("c1", "load_skill", json!({"name": "rust-test"})),
            call("c2", "load_skill", json!({"name": "deploy"})),
        ]),
        ModelReply::text("ok"),
    ];
    let (mut agent, model) = scripted_agent(7, dir.path(), replies);
    agent.run_turn("add a test").await.unwrap();
    let system = model.requests()[0].messages[0].text().to_string();
    let tail: Vec<&str> = system
        .lines()
        .rev()
        .take(3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert_eq!(
        tail,
        vec![
            "Skills: each line below names a skill and what it is for. Load a skill's instructions with `load_skill` before you follow it.",
            "- **commit-message**: Write a git commit message that says what changed and why",
            "- **rust-test**: Add a focused Rust test that fails before the fix and passes after",
        ]
    );
    let results = tool_results(agent.history());
    assert!(
        results[0].starts_with("c1: # Adding a Rust test\n\n1. Find the module under test"),
        "{}",
        results[0]
    );
    assert_eq!(
        results[1],
        "c2: Error [tool_execution_error]: no skill named `deploy`; available: commit-message, rust-test"
    );
}

#[tokio::test]
async fn without_skills_the_prompt_says_so_and_a_new_skill_needs_a_rebuild() {
    let dir = workspace();
    let (agent, _m) = scripted_agent(7, dir.path(), vec![]);
    let request = agent.preview_request("hi").await.unwrap();
    assert!(
        request.messages[0]
            .text()
            .ends_with("\n(No workspace skills are available.)")
    );
    // Added after the build: the catalog is the build-time snapshot.
    install_example_skills(dir.path());
    let request = agent.preview_request("hi").await.unwrap();
    assert!(
        request.messages[0]
            .text()
            .ends_with("\n(No workspace skills are available.)")
    );
    let (rebuilt, _m) = scripted_agent(7, dir.path(), vec![]);
    let request = rebuilt.preview_request("hi").await.unwrap();
    assert!(
        request.messages[0].text().ends_with(
            "\n- **commit-message**: Write a git commit message that says what changed and why\n- **rust-test**: Add a focused Rust test that fails before the fix and passes after"
        ),
        "{}",
        request.messages[0].text()
    );
}

#[test]
fn a_bad_skill_is_skipped_with_a_warning_on_stderr() {
    let dir = workspace();
    install_example_skills(dir.path());
    std::fs::create_dir_all(dir.path().join("skills/broken")).unwrap();
    std::fs::write(
        dir.path().join("skills/broken/SKILL.md"),
        "no front matter\n",
    )
    .unwrap();
    let out = command("agent-tutorial", dir.path())
        .args(["prompt", "--chapter", "7", "--trust-workspace"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(
            "skipping skill skills/broken/SKILL.md: the file does not start with a `---` line"
        ),
        "{stderr}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("- **commit-message**: Write a git commit message"));
}

/// `prompt` shows what a run sends: skills a run leaves out as untrusted are left out of the
/// preview too, and one line under its title says so (on stderr for `--json`, which must stay
/// JSON). `--trust-workspace` shows them, as `run --trust-workspace` uses them; once trusted
/// they are in without it.
#[test]
fn the_prompt_preview_leaves_out_untrusted_skills_as_a_run_does_and_says_so() {
    let dir = workspace();
    install_example_skills(dir.path());
    let config = tempfile::tempdir().unwrap();
    let agent_tutorial = |args: &[&str]| {
        command("agent-tutorial", dir.path())
            .env("XDG_CONFIG_HOME", config.path())
            .args(args)
            .assert()
            .success()
    };
    let preview = |extra: &[&str]| {
        let mut args = vec!["prompt", "--chapter", "7"];
        args.extend_from_slice(extra);
        let out = agent_tutorial(&args).get_output().clone();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let root = dir.path().canonicalize().unwrap();
    let notice = format!(
        "skills in skills/ are not trusted (2), so none is in the prompt; review and trust them with: agent-tutorial trust --workspace {}",
        root.display()
    );

    let untrusted = preview(&[]);
    let by_flag = preview(&["--trust-workspace"]);
    let json_stderr = stderr_of(agent_tutorial(&["prompt", "--chapter", "7", "--json"]));
    agent_tutorial(&["trust", "--yes"]);
    let trusted = preview(&[]);

    assert_eq!(by_flag, trusted);
    let title = "# chapter 7 (P07): the first request, as the model receives it\n";
    let catalog = "- **commit-message**: Write a git commit message that says what changed and why\n\
                   - **rust-test**: Add a focused Rust test that fails before the fix and passes after\n";
    assert_eq!(
        untrusted,
        (
            trusted
                .0
                .replacen(title, &format!("{title}# left out: {notice}\n"), 1)
                .replacen(catalog, "(No workspace skills are available.)\n", 1),
            String::new()
        )
    );
    assert_eq!(json_stderr, format!("{notice}\n"));
}
