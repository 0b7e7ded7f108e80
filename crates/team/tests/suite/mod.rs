mod attacks;
mod gate;
mod journal;
mod mailbox;
mod requests;
mod tools;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_protocol::AgentId;
use agent_team::{MailKind, Mailbox, Member, RequestStore, Roster, TeammateStatus};
use agent_workspace::ManualClock;
use agent_workspace::Workspace;
use tempfile::TempDir;

/// A temp workspace with a mailbox and a request store on one manual clock.
pub struct Fixture {
    pub dir: TempDir,
    pub workspace: Workspace,
    pub clock: Arc<ManualClock>,
    pub mailbox: Mailbox,
    pub requests: RequestStore,
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let clock = Arc::new(ManualClock::new(at(1_000)));
    Fixture {
        mailbox: Mailbox::new(workspace.clone(), clock.clone()),
        requests: RequestStore::new(workspace.clone(), clock.clone()),
        dir,
        workspace,
        clock,
    }
}

pub fn id(name: &str) -> AgentId {
    AgentId::new(name).unwrap()
}

pub fn member(name: &str, status: TeammateStatus) -> Member {
    Member {
        name: id(name),
        role: format!("{name}'s role"),
        status,
    }
}

/// alice idle, bob running, carol failed, dave shut down.
pub fn team() -> Roster {
    Roster::new(vec![
        member("alice", TeammateStatus::Idle),
        member("bob", TeammateStatus::Running),
        member("carol", TeammateStatus::Failed),
        member("dave", TeammateStatus::ShutDown),
    ])
}

/// Sends `body` from the lead to `to` as a plain message.
pub fn send(f: &Fixture, to: &str, body: &str) -> agent_team::MailMessage {
    f.mailbox
        .send(&team(), &AgentId::lead(), to, MailKind::Message, body)
        .unwrap()
}

/// Every path under `root`, relative, sorted (folders end with `/`).
pub fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if entry.file_type().unwrap().is_dir() {
                out.push(format!("{rel}/"));
                stack.push(path);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// The wall time `ms` milliseconds after the Unix epoch.
pub fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}
