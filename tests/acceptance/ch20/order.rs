//! The order of chapter 20's loop, recorded in one turn: hooks that log, a model that logs,
//! the agent's events logged as they are told — all into one list, compared whole.

use std::sync::{Arc, Mutex};

use agent_core::{
    AgentEvent, EventSink, Message, ModelClient, ModelError, ModelReply, ModelRequest,
};
use agent_hooks::{FnHook, HookEvent, HookEventKind, HookOutput};
use agent_policy::StaticApproval;
use agent_test_support::ScriptedModel;
use agent_tools::Workspace;
use agent_tutorial::{AgentDeps, Profile, build_agent};
use serde_json::json;

use super::{empty_hub, repository};
use crate::support::{call, tool_round, workspace};

/// The one list every step writes its line to.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, line: impl Into<String>) {
        self.0.lock().unwrap().push(line.into());
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The agent's events, one line each for the steps of the loop (text deltas and replies are
/// the model's line already).
impl EventSink for Log {
    fn emit(&self, event: &AgentEvent) {
        let line = match event {
            AgentEvent::JobFinished { id, status, .. } => format!("job {id} finished ({status})"),
            AgentEvent::ScheduleDue { id, .. } => format!("schedule {id} due"),
            AgentEvent::Compacted { kind, .. } => format!("compacted ({kind:?})"),
            AgentEvent::MemorySelected { names } => format!("memory selected {names:?}"),
            AgentEvent::MemoryExtracted { names } => format!("memory extracted {names:?}"),
            AgentEvent::PromptAssembled { .. } => "system prompt assembled".into(),
            AgentEvent::RequestSent { index, .. } => format!("request {index} sent"),
            AgentEvent::Recovery(action) => format!("recovery {action:?}"),
            AgentEvent::PermissionDecided(decision) => format!(
                "permission: {} {} by {}",
                decision.tool,
                if decision.allowed {
                    "allowed"
                } else {
                    "denied"
                },
                decision.source
            ),
            AgentEvent::ToolFinished { call, .. } => format!("tool {} answered", call.name),
            _ => return,
        };
        self.push(line);
    }
}

/// The scripted model, saying what each request ends with.
struct LoggedModel {
    log: Log,
    script: ScriptedModel,
}

#[async_trait::async_trait]
impl ModelClient for LoggedModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let tail: Vec<String> = request.messages[request.messages.len() - 2..]
            .iter()
            .map(|m| brief(m))
            .collect();
        self.log.push(format!(
            "model asked (the request ends: {})",
            tail.join(", ")
        ));
        self.script.complete(request).await
    }
}

/// A message in a few words: its role and the start of its first line (a tag by its name
/// only: a job notice's attributes hold how long it ran).
fn brief(message: &Message) -> String {
    let first = message.text().lines().next().unwrap_or_default();
    let first = match first.strip_prefix('<') {
        Some(tag) => format!("<{}>", tag.split([' ', '>']).next().unwrap_or_default()),
        None => first.to_string(),
    };
    match message {
        Message::System { .. } => format!("system {first}"),
        Message::User { .. } => format!("user {first}"),
        Message::Assistant { tool_calls, .. } => format!(
            "assistant calling {}",
            tool_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Message::Tool { .. } => format!("tool result {first}"),
    }
}

/// A hook for `kind` that writes its line and changes nothing.
fn logging_hook(log: &Log, kind: HookEventKind) -> Arc<dyn agent_hooks::Hook> {
    let log = log.clone();
    Arc::new(FnHook::new("log", move |event: &HookEvent| {
        let line = match event {
            HookEvent::PostToolUse { output, .. } => {
                format!("hook {kind:?} (the call said: {})", output.trim())
            }
            HookEvent::PreToolUse { tool, .. } => format!("hook {kind:?} {tool}"),
            _ => format!("hook {kind:?}"),
        };
        log.push(line);
        HookOutput::from_json(event.kind(), json!({}))
    }))
}

/// One turn of chapter 20's lead, after a background job of the turn before finished: the
/// prompt-submit hook first, then memory selection, the job's notice joined before the request is shaped, the prompt
/// assembled last before the model, then for the call the pre-tool hook, the permission, the
/// call itself (its output seen by the post-tool hook) and the post-tool hook, the next request
/// the same way, the stop hook on the answer, and memory extraction after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_turn_runs_its_steps_in_the_loops_order() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let log = Log::default();
    let model = Arc::new(LoggedModel {
        log: log.clone(),
        script: ScriptedModel::replies([
            // The turn before: a job in the background.
            tool_round(vec![call(
                "j1",
                "bash",
                json!({"command": "echo job-done", "run_in_background": true}),
            )]),
            ModelReply::text("Started."),
            ModelReply::text("[]"),
            // The recorded turn.
            tool_round(vec![call("c1", "bash", json!({"command": "echo hi"}))]),
            ModelReply::text("Done."),
            ModelReply::text("[]"),
        ]),
    });
    let mut deps = AgentDeps::new(model, Workspace::new(dir.path()).unwrap());
    deps.events = Arc::new(log.clone());
    deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
    deps.board = Some(board);
    deps.worktrees = Some(trees);
    deps.mcp = Some(empty_hub(dir.path()));
    for kind in [
        HookEventKind::UserPromptSubmit,
        HookEventKind::PreToolUse,
        HookEventKind::PostToolUse,
        HookEventKind::Stop,
    ] {
        deps.hooks.register(kind, None, logging_hook(&log, kind));
    }
    let mut agent = build_agent(Profile::for_chapter(20).unwrap(), deps).unwrap();
    agent.run_turn("Start a job.").await.unwrap();
    // The job ends on its own; its notice waits in the inbox for the next request.
    while !log
        .0
        .lock()
        .unwrap()
        .iter()
        .any(|line| line.starts_with("job 1 finished"))
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    log.take();

    let outcome = agent.run_turn("Say hi.").await.unwrap();
    assert_eq!(outcome.final_text, "Done.");
    assert_eq!(
        log.take(),
        [
            // The prompt-submit hooks first; then chapter 9's selection, before the loop.
            "hook UserPromptSubmit",
            "memory selected []",
            // The job's notice joined the history after the prompt: the request ends with it.
            "compacted (Micro)",
            "system prompt assembled",
            "request 0 sent",
            "model asked (the request ends: user Say hi., user <job>)",
            "hook PreToolUse bash",
            "permission: bash allowed by execute_asks",
            "hook PostToolUse (the call said: hi)",
            "tool bash answered",
            "compacted (Micro)",
            "system prompt assembled",
            "request 1 sent",
            "model asked (the request ends: assistant calling bash, tool result hi)",
            "hook Stop",
            "model asked (the request ends: system You decide what a coding agent should remember from the conversation below for future sessions in this project., user Existing memories:)",
            "memory extracted []",
        ]
    );
}

/// A prompt a hook blocks ends the turn before anything else of it runs: with a memory in the
/// workspace (so selecting one is a model call), the model is never asked.
#[tokio::test]
async fn a_prompt_a_hook_blocks_costs_no_memory_selection() {
    let dir = workspace();
    crate::support::command("agent-tutorial", dir.path())
        .args(["memory", "add", "tabs", "--type", "user"])
        .args([
            "--description",
            "Indent with tabs",
            "--body",
            "The user wants tabs.",
        ])
        .assert()
        .success();
    let (trees, board) = repository(dir.path());
    let model =
        Arc::new(ScriptedModel::replies([]).recording(agent_test_support::Recording::Requests));
    let mut deps = AgentDeps::new(model.clone(), Workspace::new(dir.path()).unwrap());
    deps.board = Some(board);
    deps.worktrees = Some(trees);
    deps.mcp = Some(empty_hub(dir.path()));
    let guard = Arc::new(FnHook::new("guard", |event: &HookEvent| {
        HookOutput::from_json(event.kind(), json!({"block": "no secrets in prompts"}))
    }));
    deps.hooks
        .register(HookEventKind::UserPromptSubmit, None, guard);
    let mut agent = build_agent(Profile::for_chapter(20).unwrap(), deps).unwrap();
    let blocked = agent.run_turn("my password is hunter2").await.unwrap_err();
    assert_eq!(
        (
            blocked.to_string(),
            model.requests().len(),
            agent.history().len()
        ),
        (
            "the prompt was blocked by a hook: no secrets in prompts (hook `guard`)".to_string(),
            0,
            0
        )
    );
}
