//! Chapter 15: the team file `.agent_tutorial/team.json` is written by an attacker. `team
//! list` refuses what it cannot trust with one clear line, never hangs on a FIFO, never
//! reads or writes through a link out of the workspace, and still answers.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::support::{command, stderr_of, workspace};

/// A safety net only (a hang would otherwise hold the suite forever); nothing is timed.
const NO_HANG: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Every path under `root`, relative and sorted, with each file's bytes.
fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
                out.push((format!("{rel}/"), Vec::new()));
            } else if meta.is_file() {
                out.push((rel, std::fs::read(&path).unwrap()));
            } else {
                out.push((rel, b"<special>".to_vec()));
            }
        }
    }
    out.sort();
    out
}

/// `team list` in `dir`: its exit code, stdout and stderr.
fn team_list(dir: &Path) -> (Option<i32>, String, String) {
    let assert = command("agent-tutorial", dir)
        .args(["team", "list"])
        .timeout(NO_HANG)
        .assert();
    let code = assert.get_output().status.code();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    (code, stdout, stderr_of(assert))
}

fn refused(detail: &str) -> (Option<i32>, String, String) {
    (
        Some(1),
        String::new(),
        format!("error: the team file is not usable: {detail}\n"),
    )
}

#[test]
fn a_corrupt_team_file_or_a_fifo_in_its_place_is_refused_with_one_line_and_no_hang() {
    let dir = workspace();
    let state = dir.path().join(".agent_tutorial");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("team.json"), r#"{"teammates": ["#).unwrap();
    let eof = "EOF while parsing a list at line 1 column 15";
    assert_eq!(
        team_list(dir.path()),
        refused(&format!(
            ".agent_tutorial/team.json is not a valid record: {eof}"
        ))
    );
    std::fs::remove_file(state.join("team.json")).unwrap();
    mkfifo(&state.join("team.json"));
    assert_eq!(
        team_list(dir.path()),
        refused("`.agent_tutorial/team.json` is a FIFO (named pipe), not a regular file")
    );
}

#[test]
fn a_record_naming_a_path_or_a_non_slug_is_refused_and_nothing_is_written_for_it() {
    for name in ["../x", "Bob Smith", "a/../../x"] {
        let dir = workspace();
        let state = dir.path().join(".agent_tutorial");
        std::fs::create_dir_all(&state).unwrap();
        let file = json!({"teammates": [
            {"name": "alice", "role": "r", "status": "idle"},
            {"name": name, "role": "r", "status": "idle"},
        ]})
        .to_string();
        std::fs::write(state.join("team.json"), &file).unwrap();
        let before = snapshot(dir.path());
        let quoted = format!("\"{name}\"");
        let column = file.find(&quoted).unwrap() + quoted.len();
        let why = format!(
            "`{name}` is not an agent name: use 1 to 32 lowercase letters, digits and single hyphens (like `reviewer-2`) at line 1 column {column}"
        );
        assert_eq!(
            team_list(dir.path()),
            refused(&format!(
                ".agent_tutorial/team.json is not a valid record: {why}"
            )),
            "{name}"
        );
        // The reader takes the file's lock (an empty file beside it) and changes nothing else.
        let mut expected = before;
        expected.push((".agent_tutorial/team.lock".into(), Vec::new()));
        expected.sort();
        assert_eq!(snapshot(dir.path()), expected, "{name}");
        assert!(!dir.path().parent().unwrap().join("x").exists());
    }
}

#[test]
fn a_team_file_or_state_folder_linked_outside_is_neither_read_nor_written_through() {
    let outside = tempfile::tempdir().unwrap();
    let secret =
        json!({"teammates": [{"name": "mallory", "role": "secret", "status": "idle"}]}).to_string();
    std::fs::write(outside.path().join("team.json"), &secret).unwrap();
    let before = snapshot(outside.path());

    // The file itself is a link out.
    let dir = workspace();
    let state = dir.path().join(".agent_tutorial");
    std::fs::create_dir_all(&state).unwrap();
    symlink(outside.path().join("team.json"), state.join("team.json")).unwrap();
    let eloop = "Too many levels of symbolic links (os error 40)";
    assert_eq!(
        team_list(dir.path()),
        refused(&format!("cannot read `.agent_tutorial/team.json`: {eloop}"))
    );
    assert_eq!(snapshot(outside.path()), before);

    // The whole state folder is a link out.
    let dir = workspace();
    symlink(outside.path(), dir.path().join(".agent_tutorial")).unwrap();
    assert_eq!(
        team_list(dir.path()),
        refused("`.agent_tutorial` resolves outside the workspace")
    );
    assert_eq!(snapshot(outside.path()), before);
}
