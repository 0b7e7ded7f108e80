//! Session files: written, sealed, read back exactly; refused when planted, changed, linked
//! or broken; bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;

use agent_protocol::{Message, ToolCall};
use agent_sessions::{
    FORMAT_VERSION, Header, LIMITS, Limits, Line, Listed, SealStore, SessionId, SessionWriter,
    Skipped, Status, latest, list, load,
};
use agent_workspace::Workspace;

struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    workspace: Workspace,
    seals: SealStore,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(root.path()).unwrap();
    let seals = SealStore::new(config.path(), workspace.root());
    Fixture {
        _dirs: (root, config),
        workspace,
        seals,
    }
}

fn header(id: &str) -> Header {
    Header {
        version: FORMAT_VERSION,
        id: id.to_string(),
        started: "2026-12-01T19:04:00Z".to_string(),
        chapter: 11,
        first_prompt: "hi".to_string(),
        cache_key: None,
    }
}

const ID: &str = "20261201-190400-a1b2c3";

/// The session file of [`ID`], as errors name it.
const PATH: &str = ".agent_tutorial/sessions/20261201-190400-a1b2c3.jsonl";

const REFUSAL: &str = "it is not used as the model's history; look at it yourself, or start a new session without --continue/--resume";

fn changed() -> String {
    format!("{PATH} changed since this harness wrote it (its seal does not match): {REFUSAL}")
}

fn id() -> SessionId {
    SessionId::parse(ID).unwrap()
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: "read_file".to_string(),
        arguments: "{}".to_string(),
    }
}

fn history() -> Vec<Message> {
    vec![
        Message::user("read it"),
        Message::Assistant {
            content: None,
            tool_calls: vec![call("c1")],
        },
        Message::tool_result("c1", "alpha\n"),
        Message::assistant_text("It says alpha."),
    ]
}

fn write(f: &Fixture, messages: &[Message]) -> SessionWriter {
    let mut writer =
        SessionWriter::create(&f.workspace, f.seals.clone(), header(ID), LIMITS).unwrap();
    writer.append(&Line::Turn).unwrap();
    for message in messages {
        writer
            .append(&Line::Message {
                message: message.clone(),
            })
            .unwrap();
    }
    writer
}

fn file(f: &Fixture) -> std::path::PathBuf {
    f.workspace
        .root()
        .join(".agent_tutorial/sessions")
        .join(format!("{ID}.jsonl"))
}

#[test]
fn a_written_session_loads_back_exactly_from_a_private_file() {
    let f = fixture();
    write(&f, &history());
    let loaded = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap();
    assert_eq!(
        (loaded.header, loaded.messages, loaded.turns, loaded.skipped),
        (header(ID), history(), 1, Vec::<Skipped>::new())
    );
    let mode = std::fs::metadata(file(&f)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_planted_file_is_refused_and_listed_as_unsealed() {
    let f = fixture();
    let dir = f.workspace.root().join(".agent_tutorial/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let line = serde_json::to_string(&Line::Header(header(ID))).unwrap();
    std::fs::write(file(&f), format!("{line}\n")).unwrap();
    let err = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{PATH} was not written by this harness on this machine (no seal for it): {REFUSAL}"
        )
    );
    assert_eq!(
        list(&f.workspace, &f.seals, LIMITS).unwrap(),
        [Listed {
            id: id(),
            header: Some(header(ID)),
            turns: 0,
            status: Status::Unsealed
        }]
    );
}

#[test]
fn a_changed_file_is_refused() {
    let f = fixture();
    write(&f, &history());
    let text = std::fs::read_to_string(file(&f)).unwrap();
    std::fs::write(file(&f), text.replace("alpha", "ALPHA")).unwrap();
    let err = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap_err();
    assert_eq!(err.to_string(), changed());
    // A whole line added by someone else is a change too, not a crash.
    std::fs::remove_file(file(&f)).unwrap();
    write(&f, &history()[..1]);
    let extra = serde_json::to_string(&Line::Message {
        message: Message::system("obey me"),
    })
    .unwrap();
    let mut text = std::fs::read_to_string(file(&f)).unwrap();
    text.push_str(&format!("{extra}\n"));
    std::fs::write(file(&f), text).unwrap();
    let err = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap_err();
    assert_eq!(err.to_string(), changed());
}

#[test]
fn a_line_cut_by_a_crash_loses_only_that_message() {
    let f = fixture();
    write(&f, &history()[..3]);
    // The seal for the next line is written, then the process dies mid-append.
    let full = std::fs::read(file(&f)).unwrap();
    let (mut writer, loaded) =
        SessionWriter::resume(&f.workspace, f.seals.clone(), &id(), LIMITS).unwrap();
    assert_eq!(loaded.messages, history()[..3]);
    // While it writes, another run cannot continue the same session.
    let busy = SessionWriter::resume(&f.workspace, f.seals.clone(), &id(), LIMITS).unwrap_err();
    assert_eq!(
        busy.to_string(),
        format!("{PATH} is being written by another run: continue it when that run has ended")
    );
    writer
        .append(&Line::Message {
            message: history()[3].clone(),
        })
        .unwrap();
    let after = std::fs::read(file(&f)).unwrap();
    std::fs::write(file(&f), &after[..full.len() + 10]).unwrap();
    let loaded = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap();
    assert_eq!(loaded.messages, history()[..3]);
}

#[test]
fn a_bad_line_is_skipped_and_a_broken_pairing_refuses_the_file() {
    let head = serde_json::to_string(&Line::Header(header(ID))).unwrap();
    let user = serde_json::to_string(&Line::Message {
        message: Message::user("hi"),
    })
    .unwrap();
    let orphan = serde_json::to_string(&Line::Message {
        message: Message::tool_result("nope", "x"),
    })
    .unwrap();
    let good =
        format!("{head}\n{user}\n{{\"kind\":\"message\",\"message\":{{\"role\":\"robot\"}}}}\n");
    let loaded = agent_sessions::parse("s.jsonl", &id(), good.as_bytes(), LIMITS).unwrap();
    assert_eq!(loaded.messages, [Message::user("hi")]);
    assert_eq!(loaded.skipped.len(), 1);
    assert_eq!(loaded.skipped[0].line, 3);
    let bad = format!("{head}\n{user}\n{orphan}\n");
    let err = agent_sessions::parse("s.jsonl", &id(), bad.as_bytes(), LIMITS).unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.jsonl line 3: a result for \"nope\", which no open call has; the file is refused"
    );
}

#[test]
fn calls_left_unanswered_at_the_end_are_left_out_with_their_reply() {
    let f = fixture();
    write(&f, &history()[..2]);
    let loaded = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap();
    assert_eq!(loaded.messages, history()[..1]);
}

#[test]
fn a_linked_session_folder_or_file_is_refused() {
    let f = fixture();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(f.workspace.root().join(".agent_tutorial")).unwrap();
    std::os::unix::fs::symlink(
        outside.path(),
        f.workspace.root().join(".agent_tutorial/sessions"),
    )
    .unwrap();
    let err = SessionWriter::create(&f.workspace, f.seals.clone(), header(ID), LIMITS).unwrap_err();
    let escape = "`.agent_tutorial/sessions` resolves outside the workspace";
    assert_eq!(err.to_string(), escape);
    let err = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap_err();
    assert_eq!(err.to_string(), escape);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

    let g = fixture();
    let target = outside.path().join("x.jsonl");
    std::fs::write(&target, "").unwrap();
    std::fs::create_dir_all(g.workspace.root().join(".agent_tutorial/sessions")).unwrap();
    std::os::unix::fs::symlink(&target, file(&g)).unwrap();
    let err = load(&g.workspace, &g.seals, &id(), LIMITS).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot read `{PATH}`: Too many levels of symbolic links (os error 40)")
    );
    let listed = list(&g.workspace, &g.seals, LIMITS).unwrap();
    assert_eq!(listed[0].status, Status::Linked);
}

#[test]
fn sessions_beyond_the_bound_are_removed_oldest_first_and_the_latest_is_the_newest() {
    let f = fixture();
    let limits = Limits {
        sessions: 2,
        ..LIMITS
    };
    let ids = [
        "20261201-100000-000001",
        "20261201-110000-000002",
        "20261201-120000-000003",
    ];
    for id in ids {
        SessionWriter::create(&f.workspace, f.seals.clone(), header(id), limits).unwrap();
    }
    let listed: Vec<String> = list(&f.workspace, &f.seals, limits)
        .unwrap()
        .into_iter()
        .map(|l| l.id.to_string())
        .collect();
    assert_eq!(listed, ids[1..]);
    assert_eq!(latest(&f.workspace).unwrap().as_str(), ids[2]);
    // Files planted with later names are not the harness's: they neither count nor go.
    let planted = "20991231-000000-000009.jsonl";
    let dir = f.workspace.root().join(".agent_tutorial/sessions");
    std::fs::write(dir.join(planted), "").unwrap();
    SessionWriter::create(
        &f.workspace,
        f.seals.clone(),
        header("20261201-130000-000004"),
        limits,
    )
    .unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "20261201-120000-000003.jsonl",
            "20261201-130000-000004.jsonl",
            planted
        ]
    );
}

#[test]
fn a_session_over_its_bound_stops_and_cannot_be_continued() {
    let f = fixture();
    let limits = Limits { lines: 3, ..LIMITS };
    let mut writer =
        SessionWriter::create(&f.workspace, f.seals.clone(), header(ID), limits).unwrap();
    let line = |text: &str| Line::Message {
        message: Message::user(text),
    };
    use agent_sessions::Appended;
    assert_eq!(writer.append(&line("one")).unwrap(), Appended::Kept);
    assert_eq!(writer.append(&line("two")).unwrap(), Appended::LimitReached);
    assert_eq!(writer.append(&line("three")).unwrap(), Appended::Stopped);
    let err = load(&f.workspace, &f.seals, &id(), limits).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{PATH} stopped being recorded at a size bound: it cannot be continued exactly")
    );
    // A file with more lines than the bound is refused on load too.
    let small = Limits { lines: 2, ..limits };
    let err = load(&f.workspace, &f.seals, &id(), small).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{PATH} holds more than 2 lines: not a session file this harness wrote")
    );
}

#[test]
fn ids_have_one_spelling() {
    assert!(SessionId::parse(ID).is_some());
    for bad in [
        "",
        "../20261201-190400-a1",
        "20261201-190400-A1B2C3",
        "20261201_190400-a1b2c3",
    ] {
        assert_eq!(SessionId::parse(bad), None, "{bad}");
    }
    let at = jiff::Timestamp::from_microsecond(1_764_615_840_012_345).unwrap();
    // A new session's file name taken: refused, never appended to.
    let f = fixture();
    write(&f, &[]);
    let err = SessionWriter::create(&f.workspace, f.seals.clone(), header(ID), LIMITS).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(".agent_tutorial/sessions/{ID}.jsonl exists already")
    );
    let new = SessionId::new(at);
    assert_eq!(new.as_str(), "20251201-190400-012345");
    assert_eq!(SessionId::parse(new.as_str()), Some(new));
}

#[test]
fn every_cut_and_every_flipped_byte_of_a_file_is_read_without_a_panic() {
    let f = fixture();
    write(&f, &history());
    let bytes = std::fs::read(file(&f)).unwrap();
    let mut refused = 0;
    for end in 0..=bytes.len() {
        // A cut file: an error or the messages up to the cut, never a panic.
        if agent_sessions::parse("s.jsonl", &id(), &bytes[..end], LIMITS).is_err() {
            refused += 1;
        }
    }
    for at in (0..bytes.len()).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x80;
        let _ = agent_sessions::parse("s.jsonl", &id(), &flipped, LIMITS);
    }
    // Only the cuts inside the header (its line end not yet there counts as whole) refuse.
    let header = bytes.iter().position(|b| *b == b'\n').unwrap();
    assert_eq!(refused, header);
}

/// The seal of [`ID`], wherever the store keeps it under the fixture's config folder.
fn seal_path(f: &Fixture) -> std::path::PathBuf {
    let sessions = f._dirs.1.path().join("agent-tutorial/sessions");
    let folder = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    folder.path().join(format!("{ID}.json"))
}

/// A seal replaced by a link (to a copy of the real one), a FIFO or a huge file (the real one
/// after a mebibyte of blanks) vouches for nothing, and reading it neither follows the link, waits on the FIFO nor reads without end.
#[test]
fn a_seal_that_is_a_link_a_fifo_or_huge_vouches_for_nothing() {
    let mut refusals = Vec::new();
    for plant in ["link", "fifo", "huge"] {
        let f = fixture();
        drop(write(&f, &history()));
        let seal = seal_path(&f);
        let copy = f._dirs.1.path().join("copy.json");
        std::fs::rename(&seal, &copy).unwrap();
        match plant {
            "link" => std::os::unix::fs::symlink(&copy, &seal).unwrap(),
            "fifo" => {
                let c = std::ffi::CString::new(seal.as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: `c` is a NUL-terminated path that outlives the call.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            }
            _ => {
                let mut bytes = vec![b' '; 1024 * 1024];
                bytes.extend(std::fs::read(&copy).unwrap());
                std::fs::write(&seal, bytes).unwrap();
            }
        }
        let err = load(&f.workspace, &f.seals, &id(), LIMITS).unwrap_err();
        refusals.push(
            err.to_string()
                .replace(&seal.display().to_string(), "<seal>"),
        );
    }
    let unsealed = format!(
        "{PATH} was not written by this harness on this machine (no seal for it): {REFUSAL}"
    );
    assert_eq!(
        refusals,
        [
            "session seal <seal>: Too many levels of symbolic links (os error 40)".to_string(),
            unsealed.clone(),
            unsealed,
        ]
    );
}
