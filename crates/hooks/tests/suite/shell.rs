use std::time::Duration;

use agent_core::Behavior;
use agent_hooks::{Hook, HookError, HookEvent, HookOutput, PreToolUseOutput, ShellHook};
use agent_workspace::Workspace;
use serde_json::json;

fn pre_tool_use() -> HookEvent {
    HookEvent::PreToolUse {
        call_id: "c1".into(),
        tool: "bash".into(),
        input: json!({"command": "ls"}),
    }
}

/// Runs `command` as a shell hook for a PreToolUse event in a fresh workspace.
async fn run(command: &str, timeout: Duration) -> Result<HookOutput, HookError> {
    let dir = tempfile::tempdir().unwrap();
    let hook = ShellHook {
        name: "h".into(),
        command: command.into(),
        workspace: Workspace::new(dir.path()).unwrap(),
        timeout,
    };
    hook.run(&pre_tool_use()).await
}

const LONG: Duration = Duration::from_secs(30);

#[tokio::test]
async fn stdout_is_parsed_as_the_output_of_the_event_it_runs_for() {
    assert_eq!(
        run(r#"cat >/dev/null; echo '{"permission": "deny"}'"#, LONG)
            .await
            .unwrap(),
        HookOutput::PreToolUse(PreToolUseOutput {
            permission: Some(Behavior::Deny),
            ..PreToolUseOutput::default()
        })
    );
    assert_eq!(run("true", LONG).await.unwrap(), HookOutput::Nothing);
}

#[tokio::test]
async fn a_field_the_event_does_not_have_is_an_error_naming_it() {
    let err = run(r#"echo '{"decision": "block"}'"#, LONG)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`decision` is not a PreToolUse result field (allowed: block, permission, updated_input)"
    );
}

#[tokio::test]
async fn a_failed_or_late_command_is_a_typed_error() {
    let err = run("echo oops >&2; exit 3", LONG).await.unwrap_err();
    assert_eq!(err.to_string(), "exited with exit status: 3: oops");
    assert!(matches!(err, HookError::Exited { ref stderr, .. } if stderr == "oops\n"));

    let timeout = Duration::from_millis(200);
    let err = run("sleep 5", timeout).await.unwrap_err();
    assert_eq!(err.to_string(), "timed out after 0.2s");
    assert!(matches!(err, HookError::TimedOut { after } if after == timeout));
}
