//! A repository written by an attacker: every file the team stores read, planted as a link
//! out, a FIFO, a huge file, or corrupt JSON, and state folders linked outside.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;

use agent_protocol::AgentId;
use agent_team::mailbox::{QuarantineEntry, READ_LIMIT};
use agent_team::requests::READ_LIMIT as REQUESTS_LIMIT;
use agent_team::{MailError, MailKind, NewRequest, RequestError, RequestKind};
use agent_workspace::PathError;

use super::{fixture, id, send, team, tree};

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// The ready folder of alice's mailbox, made by a real message sent after a planted one.
fn ready(f: &super::Fixture) -> std::path::PathBuf {
    let ready = f.dir.path().join(".agent_tutorial/mail/alice/ready");
    std::fs::create_dir_all(&ready).unwrap();
    ready
}

/// A planted file name that sorts before every real message.
const FIRST: &str = "00000000000000000001-0000abcd-1.json";

fn claim_skips_planted(f: &super::Fixture) -> Vec<QuarantineEntry> {
    send(f, "alice", "real");
    let claimed = f.mailbox.claim(&id("alice")).unwrap().unwrap();
    assert_eq!(claimed.body, "real");
    f.mailbox.quarantined(&id("alice")).unwrap()
}

#[test]
fn a_planted_symlink_to_a_file_outside_is_quarantined_unread_and_unfollowed() {
    let f = fixture();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.json");
    std::fs::write(&secret, "{}").unwrap();
    symlink(&secret, ready(&f).join(FIRST)).unwrap();
    let entries = claim_skips_planted(&f);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].file, FIRST);
    assert!(entries[0].reason.starts_with(&format!(
        "cannot read `.agent_tutorial/mail/alice/ready/{FIRST}`"
    )));
    // The link itself was moved; the file it pointed to is untouched.
    assert!(
        std::fs::symlink_metadata(
            f.dir
                .path()
                .join(".agent_tutorial/mail/alice/quarantine")
                .join(FIRST)
        )
        .unwrap()
        .file_type()
        .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "{}");
}

#[test]
fn a_planted_fifo_is_quarantined_without_blocking() {
    let f = fixture();
    mkfifo(&ready(&f).join(FIRST));
    let entries = claim_skips_planted(&f);
    assert_eq!(
        entries,
        [QuarantineEntry {
            file: FIRST.into(),
            reason: format!(
                "`.agent_tutorial/mail/alice/ready/{FIRST}` is a FIFO (named pipe), not a regular file"
            ),
        }]
    );
}

#[test]
fn a_planted_huge_file_is_quarantined_without_being_read() {
    let f = fixture();
    let file = std::fs::File::create(ready(&f).join(FIRST)).unwrap();
    file.set_len(READ_LIMIT + 1).unwrap();
    let entries = claim_skips_planted(&f);
    assert_eq!(
        entries,
        [QuarantineEntry {
            file: FIRST.into(),
            reason: format!(
                "`.agent_tutorial/mail/alice/ready/{FIRST}` is {} bytes, over the limit of {READ_LIMIT} bytes",
                READ_LIMIT + 1
            ),
        }]
    );
}

#[test]
fn planted_names_folders_and_temp_files_are_set_aside_or_skipped() {
    let f = fixture();
    let ready = ready(&f);
    std::fs::write(ready.join("notes.txt"), "hi").unwrap();
    std::fs::create_dir(ready.join(FIRST)).unwrap();
    std::fs::write(ready.join(".tmp-agent-1-1"), "half").unwrap();
    let mut entries = claim_skips_planted(&f);
    entries.sort_by(|a, b| a.file.cmp(&b.file));
    let reasons: Vec<(String, String)> = entries.into_iter().map(|e| (e.file, e.reason)).collect();
    assert_eq!(
        reasons,
        [
            (
                FIRST.to_string(),
                format!(
                    "`.agent_tutorial/mail/alice/ready/{FIRST}` is a directory, not a regular file"
                )
            ),
            (
                "notes.txt".to_string(),
                "its name is not `<created_at>-<id>.json`".to_string()
            ),
        ]
    );
    // The temp file of a dead writer is left for recovery, which removes it (and puts the
    // claimed message back).
    assert_eq!(
        std::fs::read_dir(&ready).unwrap().count(),
        1,
        "only the temp file is left in ready"
    );
    f.mailbox.recover(&id("alice")).unwrap();
    let processing = f.dir.path().join(".agent_tutorial/mail/alice/processing");
    assert_eq!(tree(&processing), Vec::<String>::new());
    let left: Vec<String> = tree(&ready)
        .into_iter()
        .map(|n| n.get(..11).unwrap_or_default().to_string())
        .collect();
    assert_eq!(left, ["00000000000"]);
}

#[test]
fn a_state_folder_linked_outside_is_refused_and_nothing_is_written_there() {
    let f = fixture();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), f.dir.path().join(".agent_tutorial")).unwrap();
    let err = f
        .mailbox
        .send(&team(), &AgentId::lead(), "alice", MailKind::Message, "hi")
        .unwrap_err();
    assert!(
        matches!(err, MailError::Storage(PathError::Escape { .. })),
        "{err}"
    );
    let err = f
        .requests
        .create(NewRequest {
            kind: RequestKind::Shutdown,
            from: AgentId::lead(),
            to: id("alice"),
            content: "stop".into(),
        })
        .unwrap_err();
    assert!(
        matches!(err, RequestError::Storage(PathError::Escape { .. })),
        "{err}"
    );
    assert_eq!(tree(outside.path()), Vec::<String>::new());
}

#[test]
fn a_mailbox_folder_linked_outside_is_refused_and_nothing_outside_moves() {
    let f = fixture();
    let outside = tempfile::tempdir().unwrap();
    let planted = outside.path().join("00000000000000000001-0000abcd-1.json");
    std::fs::write(&planted, "{}").unwrap();
    let mail = f.dir.path().join(".agent_tutorial/mail/alice");
    std::fs::create_dir_all(&mail).unwrap();
    symlink(outside.path(), mail.join("ready")).unwrap();
    let err = f.mailbox.claim(&id("alice")).unwrap_err();
    assert!(
        matches!(err, MailError::Storage(PathError::Escape { .. })),
        "{err}"
    );
    assert_eq!(
        tree(outside.path()),
        ["00000000000000000001-0000abcd-1.json"]
    );
}

fn plant_requests(f: &super::Fixture) -> std::path::PathBuf {
    let state = f.dir.path().join(".agent_tutorial");
    std::fs::create_dir_all(&state).unwrap();
    state.join("requests.json")
}

#[test]
fn a_request_file_that_is_corrupt_a_fifo_huge_or_a_link_out_is_an_error_not_a_hang() {
    let f = fixture();
    let path = plant_requests(&f);
    let errors = [
        {
            std::fs::write(&path, "{\"next_id\": 1, \"requests\": [{}]}").unwrap();
            f.requests.all().unwrap_err().to_string()
        },
        {
            std::fs::remove_file(&path).unwrap();
            mkfifo(&path);
            f.requests.all().unwrap_err().to_string()
        },
        {
            std::fs::remove_file(&path).unwrap();
            std::fs::File::create(&path)
                .unwrap()
                .set_len(REQUESTS_LIMIT + 1)
                .unwrap();
            f.requests.all().unwrap_err().to_string()
        },
    ];
    assert_eq!(
        errors,
        [
            "the request store is not usable: .agent_tutorial/requests.json is not a valid record: missing field `id` at line 1 column 30".to_string(),
            "the request store is not usable: `.agent_tutorial/requests.json` is a FIFO (named pipe), not a regular file".to_string(),
            format!(
                "the request store is not usable: `.agent_tutorial/requests.json` is {} bytes, over the limit of {REQUESTS_LIMIT} bytes",
                REQUESTS_LIMIT + 1
            ),
        ]
    );
    std::fs::remove_file(&path).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("requests.json");
    std::fs::write(&target, "{\"next_id\": 0, \"requests\": []}").unwrap();
    symlink(&target, &path).unwrap();
    assert!(f.requests.all().is_err());
    // A change is refused too: nothing is written through the link.
    f.requests
        .create(NewRequest {
            kind: RequestKind::Shutdown,
            from: AgentId::lead(),
            to: id("alice"),
            content: "stop".into(),
        })
        .unwrap_err();
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "{\"next_id\": 0, \"requests\": []}"
    );
}

#[test]
fn a_request_file_with_more_requests_than_allowed_is_refused_on_load() {
    let f = fixture();
    let path = plant_requests(&f);
    let one = r#"{"id":"req-1","kind":"shutdown","from":"lead","to":"alice","status":"pending","content":"","created_at":0,"expires_at":1}"#;
    let many = vec![one; agent_team::requests::MAX_REQUESTS + 1].join(",");
    std::fs::write(&path, format!("{{\"next_id\": 1, \"requests\": [{many}]}}")).unwrap();
    assert_eq!(
        f.requests.all().unwrap_err().to_string(),
        "128 requests are pending; answer some first"
    );
}

#[test]
fn a_request_file_naming_an_agent_that_is_not_a_slug_is_corrupt() {
    let f = fixture();
    let path = plant_requests(&f);
    std::fs::write(
        &path,
        r#"{"next_id":1,"requests":[{"id":"req-1","kind":"plan_approval","from":"../../x","to":"lead","status":"approved","content":"","created_at":0,"expires_at":1}]}"#,
    )
    .unwrap();
    assert!(matches!(
        f.requests.all(),
        Err(RequestError::Store(
            agent_workspace::StoreError::Json { .. }
        ))
    ));
}

#[test]
fn a_mailbox_folder_filled_past_the_listing_bound_is_refused_without_being_held() {
    let f = fixture();
    let ready = ready(&f);
    for i in 0..=agent_workspace::store::MAX_ENTRIES {
        std::fs::write(ready.join(format!("x{i}")), "").unwrap();
    }
    assert_eq!(
        f.mailbox.claim(&id("alice")).unwrap_err().to_string(),
        "`.agent_tutorial/mail/alice/ready` holds more than 20000 entries; remove what does not belong there"
    );
}

/// What a session writes at its start (the harness saves the team file; only `team list`
/// reads it): a `team.json` planted as a link out is replaced, never written through, and a
/// state folder linked out is refused before anything is written there.
#[test]
fn the_team_file_is_never_written_through_a_link_out() {
    use agent_team::{TeamFile, TeamFileError, TeamRecord, TeammateStatus};

    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("team.json");
    std::fs::write(&secret, "keep me").unwrap();
    let record = TeamRecord {
        name: id("alice"),
        role: "reads".into(),
        status: TeammateStatus::Idle,
        current: None,
        last_result: None,
    };

    let f = super::fixture();
    let state = f.dir.path().join(".agent_tutorial");
    std::fs::create_dir_all(&state).unwrap();
    symlink(&secret, state.join("team.json")).unwrap();
    let file = TeamFile::new(&f.workspace);
    file.save(std::slice::from_ref(&record)).unwrap();
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep me");
    assert!(
        std::fs::symlink_metadata(state.join("team.json"))
            .unwrap()
            .is_file()
    );
    assert_eq!(
        file.load().unwrap(),
        agent_team::Loaded {
            records: vec![record.clone()],
            skipped: 0
        }
    );

    let f = super::fixture();
    symlink(outside.path(), f.dir.path().join(".agent_tutorial")).unwrap();
    let err = TeamFile::new(&f.workspace).save(&[record]).unwrap_err();
    assert_eq!(
        (
            matches!(err, TeamFileError::Storage(PathError::Escape { .. })),
            err.to_string()
        ),
        (
            true,
            "the team file is not usable: `.agent_tutorial` resolves outside the workspace"
                .to_string()
        )
    );
    assert_eq!(tree(outside.path()), ["team.json"]);
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep me");
}
