use std::sync::Arc;

use agent_compaction::CompactOnDemand;
use agent_core::{AgentId, Message, ModelReply};
use agent_harness::session::{EndReason, Interrupts, Mode, Op, Session};
use agent_test_support::ScriptedModel;
use agent_tools::Workspace;

use super::*;
use crate::{AgentDeps, Profile, build_agent};

#[test]
fn a_line_is_parsed_in_one_place_into_whole_values() {
    let cases = [
        ("/help", Parsed::Command(SlashCommand::Help)),
        ("  /tools  ", Parsed::Command(SlashCommand::Tools)),
        ("/memory", Parsed::Command(SlashCommand::Memory)),
        ("/tasks", Parsed::Command(SlashCommand::Tasks)),
        ("/team", Parsed::Command(SlashCommand::Team)),
        ("/mcp", Parsed::Command(SlashCommand::Mcp)),
        ("/compact", Parsed::Command(SlashCommand::Compact)),
        ("/clear", Parsed::Command(SlashCommand::Clear)),
        ("/cost", Parsed::Command(SlashCommand::Cost)),
        ("/quit", Parsed::Command(SlashCommand::Quit)),
        ("/clear now", Parsed::Arguments(SlashCommand::Clear)),
        ("/bogus", Parsed::Unknown("bogus".into())),
        ("/", Parsed::Unknown(String::new())),
        ("/Help", Parsed::Unknown("Help".into())),
        ("read /etc/passwd", Parsed::Prompt),
        ("help", Parsed::Prompt),
    ];
    for (line, want) in cases {
        assert_eq!(parse(line), want, "{line:?}");
    }
}

#[test]
fn help_and_completion_come_from_the_one_table() {
    assert_eq!(
        help(),
        "  /help     what each command does\n\
         \x20 /tools    the tools the model is offered\n\
         \x20 /memory   the workspace's memories\n\
         \x20 /tasks    the task board\n\
         \x20 /team     the teammates and what they do\n\
         \x20 /mcp      the MCP servers and their tools\n\
         \x20 /compact  summarize the conversation at the next request\n\
         \x20 /clear    a new conversation, same settings\n\
         \x20 /cost     requests and tokens so far\n\
         \x20 /quit     end the session\n"
    );
    assert_eq!(completions("/c"), ["/compact", "/clear", "/cost"]);
    assert_eq!(completions("/t"), ["/tools", "/tasks", "/team"]);
    assert_eq!(completions("/"), COMMANDS.map(|s| format!("/{}", s.name)));
    assert_eq!(completions("/x"), Vec::<String>::new());
    assert_eq!(completions("c"), Vec::<String>::new());
}

/// Chapter 2's lead on `replies`, in a session.
fn lead(dir: &std::path::Path, replies: Vec<ModelReply>) -> (Session, SlashContext) {
    let workspace = Workspace::new(dir).unwrap();
    let model = Arc::new(ScriptedModel::replies(replies));
    let mut session = Session::new(Interrupts::CancelTurn);
    let mut deps = AgentDeps::new(model, workspace.clone());
    deps.events = session.sink(&AgentId::lead());
    let agent = build_agent(Profile::for_chapter(2).unwrap(), deps).unwrap();
    let context = SlashContext {
        workspace,
        tools: agent.tools().clone(),
        board: String::new(),
        compact: CompactOnDemand::default(),
    };
    session.add(AgentId::lead(), agent);
    (session, context)
}

fn out(text: &str) -> Option<Outcome> {
    Some(Outcome {
        out: text.to_string(),
        err: String::new(),
        op: None,
    })
}

fn err(text: &str) -> Option<Outcome> {
    Some(Outcome {
        out: String::new(),
        err: text.to_string(),
        op: None,
    })
}

#[test]
fn each_command_says_what_it_shows_in_a_fresh_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let (_session, context) = lead(dir.path(), vec![]);
    let me = AgentId::lead();
    let cost = Summary {
        requests: 3,
        input_tokens: 1200,
        output_tokens: 80,
        cached_tokens: 1000,
        replies_without_usage: 1,
        ..Summary::default()
    };
    let run = |line: &str| run(parse(line), &context, &me, &cost);
    assert_eq!(run("/help"), out(&help()));
    assert_eq!(
        run("/tools"),
        out("bash\nread_file\nwrite_file\nedit_file\nglob\n")
    );
    assert_eq!(run("/memory"), out("(no memories)\n"));
    assert_eq!(
        run("/tasks"),
        out("no task board yet (a chapter 17 session creates .agent_tutorial/board.sqlite3)\n")
    );
    assert_eq!(
        run("/team"),
        out("no teammates (a chapter 15 session's lead starts them)\n")
    );
    assert_eq!(
        run("/mcp"),
        out("No .mcp.json in this workspace: no MCP server is configured.\n")
    );
    assert!(!context.compact.is_requested());
    assert_eq!(run("/compact"), err(COMPACT));
    assert!(context.compact.is_requested(), "/compact asked for nothing");
    assert_eq!(
        run("/cost"),
        out(
            "requests: 3\ntokens in: 1200 (cached: 1000)\ntokens out: 80\nreplies without usage: 1\n"
        )
    );
    assert_eq!(
        run("/nope"),
        err(
            "unknown command /nope; the commands are: /help /tools /memory /tasks /team /mcp /compact /clear /cost /quit\n"
        )
    );
    assert_eq!(run("/cost now"), err("/cost takes no arguments\n"));
    assert_eq!(run("what is /tmp?"), None);
}

#[tokio::test]
async fn clear_starts_a_new_conversation_and_quit_ends_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, context) = lead(
        dir.path(),
        vec![ModelReply::text("Hello."), ModelReply::text("Hi again.")],
    );
    let me = AgentId::lead();
    let handle = session.handle();
    let prompt = |text: &str| Op::Prompt {
        agent: me.clone(),
        text: text.into(),
    };
    handle.submit(prompt("hi"));
    assert_eq!(session.run(Mode::UntilIdle).await, EndReason::Done);
    let clear = run(parse("/clear"), &context, &me, &Summary::default()).unwrap();
    assert_eq!(
        clear,
        Outcome {
            out: String::new(),
            err: "[clear] a new conversation: the next prompt starts it (and a new session)\n"
                .into(),
            op: Some(Op::Clear(me.clone())),
        }
    );
    handle.submit(clear.op.unwrap());
    handle.submit(prompt("hi again"));
    assert_eq!(session.run(Mode::UntilIdle).await, EndReason::Done);
    // Only the turn after /clear is in the history.
    assert_eq!(
        session.agent(&me).unwrap().history(),
        [
            Message::user("hi again"),
            Message::assistant_text("Hi again.")
        ]
    );
    let quit = run(parse("/quit"), &context, &me, &Summary::default()).unwrap();
    assert_eq!(quit.op, Some(Op::Shutdown(EndReason::Done)));
    handle.submit(quit.op.unwrap());
    assert_eq!(session.run(Mode::Interactive).await, EndReason::Done);
}
