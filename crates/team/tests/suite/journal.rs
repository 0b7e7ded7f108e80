//! The delivery records read back after a crash, written by an attacker: corrupt, a FIFO,
//! huge, a link out, or their folder linked outside — each an error, never a hang, and
//! nothing written through a link.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use agent_protocol::AgentId;
use agent_team::journal::{JOURNAL_DIR, READ_LIMIT};
use agent_team::{Deliveries, DeliveryRecord, MessageId, TurnState};
use agent_workspace::Workspace;

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn journal(dir: &Path) -> Deliveries {
    Deliveries::new(&Workspace::new(dir).unwrap())
}

/// The lead's record file, its folder made.
fn plant(dir: &Path) -> PathBuf {
    let folder = dir.join(JOURNAL_DIR);
    std::fs::create_dir_all(&folder).unwrap();
    folder.join("lead.json")
}

#[test]
fn a_record_says_how_far_the_turn_got_and_is_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(dir.path());
    let lead = AgentId::lead();
    assert_eq!(j.load(&lead).unwrap(), None);
    j.clear(&lead).unwrap();
    let id = MessageId::generate();
    j.started(&lead, &id).unwrap();
    assert_eq!(
        j.load(&lead).unwrap(),
        Some(DeliveryRecord {
            id: id.clone(),
            turn: TurnState::Started
        })
    );
    j.answered(&lead, &id).unwrap();
    assert_eq!(
        j.load(&lead).unwrap(),
        Some(DeliveryRecord {
            id: id.clone(),
            turn: TurnState::Answered
        })
    );
    // Another agent's record is its own.
    assert_eq!(j.load(&AgentId::new("alice").unwrap()).unwrap(), None);
    j.clear(&lead).unwrap();
    assert_eq!(j.load(&lead).unwrap(), None);
}

#[test]
fn a_record_that_is_corrupt_a_fifo_or_huge_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(dir.path());
    let lead = AgentId::lead();
    let path = plant(dir.path());
    let errors = [
        {
            std::fs::write(&path, "{\"id\": \"not an id\", \"turn\": \"answered\"}").unwrap();
            j.load(&lead).unwrap_err().to_string()
        },
        {
            std::fs::write(&path, "{\"id\": ").unwrap();
            j.load(&lead).unwrap_err().to_string()
        },
        {
            std::fs::remove_file(&path).unwrap();
            mkfifo(&path);
            j.load(&lead).unwrap_err().to_string()
        },
        {
            std::fs::remove_file(&path).unwrap();
            std::fs::File::create(&path)
                .unwrap()
                .set_len(READ_LIMIT + 1)
                .unwrap();
            j.load(&lead).unwrap_err().to_string()
        },
    ];
    assert_eq!(
        errors,
        [
            "the delivery record is not usable: .agent_tutorial/deliveries/lead.json is not a valid record: `not an id` is not a message id at line 1 column 18".to_string(),
            "the delivery record is not usable: .agent_tutorial/deliveries/lead.json is not a valid record: EOF while parsing a value at line 1 column 7".to_string(),
            "the delivery record is not usable: `.agent_tutorial/deliveries/lead.json` is a FIFO (named pipe), not a regular file".to_string(),
            format!(
                "the delivery record is not usable: `.agent_tutorial/deliveries/lead.json` is {} bytes, over the limit of {READ_LIMIT} bytes",
                READ_LIMIT + 1
            ),
        ]
    );
}

#[test]
fn a_record_linked_outside_is_neither_read_nor_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let j = journal(dir.path());
    let lead = AgentId::lead();
    let path = plant(dir.path());
    let target = outside.path().join("secret.json");
    let id = MessageId::generate();
    let record = format!("{{\"id\": \"{id}\", \"turn\": \"answered\"}}");
    std::fs::write(&target, &record).unwrap();
    symlink(&target, &path).unwrap();
    assert_eq!(
        j.load(&lead).unwrap_err().to_string(),
        "the delivery record is not usable: cannot read `.agent_tutorial/deliveries/lead.json`: Too many levels of symbolic links (os error 40)"
    );
    // A write replaces the link (atomic rename), never the file it points to.
    j.started(&lead, &id).unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), record);

    // The whole folder linked outside: refused, nothing created there.
    let dir = tempfile::tempdir().unwrap();
    let j = journal(dir.path());
    std::fs::create_dir_all(dir.path().join(".agent_tutorial")).unwrap();
    symlink(outside.path(), dir.path().join(JOURNAL_DIR)).unwrap();
    let outside_error = "the delivery record is not usable: `.agent_tutorial/deliveries` resolves outside the workspace";
    assert_eq!(j.load(&lead).unwrap_err().to_string(), outside_error);
    assert_eq!(
        j.started(&lead, &id).unwrap_err().to_string(),
        outside_error
    );
    assert_eq!(j.clear(&lead).unwrap_err().to_string(), outside_error);
    let names: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["secret.json"]);
}

#[test]
fn a_half_written_record_left_by_a_killed_writer_is_removed_and_the_record_kept() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(dir.path());
    let lead = AgentId::lead();
    let id = MessageId::generate();
    j.started(&lead, &id).unwrap();
    let folder = dir.path().join(JOURNAL_DIR);
    let leftover = format!("{}lead.json-1", agent_workspace::TEMP_PREFIX);
    std::fs::write(folder.join(&leftover), "{\"id\": ").unwrap();
    j.remove_leftovers().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [".lock", "lead.json"]);
    assert_eq!(
        j.load(&lead).unwrap(),
        Some(DeliveryRecord {
            id,
            turn: TurnState::Started
        })
    );
}
