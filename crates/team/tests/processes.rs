//! Two OS processes, each with several sender and claimer threads, on one mailbox: every
//! message is claimed exactly once and none is lost. The test re-runs its own binary as the
//! two workers (the ignored test `worker`, told what to do by environment variables).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_protocol::AgentId;
use agent_team::mailbox::Counts;
use agent_team::{MailKind, Mailbox, Member, Roster, TeammateStatus};
use agent_workspace::{SystemClock, Workspace};

const ENV_DIR: &str = "AGENT_TEAM_WORKER_DIR";
const ENV_NAME: &str = "AGENT_TEAM_WORKER_NAME";
const PROCESSES: [&str; 2] = ["p1", "p2"];
const SENDERS: usize = 2;
const CLAIMERS: usize = 2;
const PER_SENDER: usize = 25;
const TOTAL: usize = PROCESSES.len() * SENDERS * PER_SENDER;
/// Empty polls a claimer makes before it gives up (so a lost message ends the test with a
/// failed comparison instead of a hang).
const MAX_EMPTY_POLLS: usize = 20_000;

fn alice() -> AgentId {
    AgentId::new("alice").unwrap()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn two_processes_of_senders_and_claimers_claim_every_message_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = PROCESSES
        .iter()
        .map(|name| {
            Command::new(&exe)
                .args([
                    "worker",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(ENV_DIR, dir.path())
                .env(ENV_NAME, name)
                .env_remove("OPENAI_API_KEY")
                .env_remove("OPENAI_BASE_URL")
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let expected: BTreeSet<String> = PROCESSES
        .iter()
        .flat_map(|p| {
            (0..SENDERS).flat_map(move |s| (0..PER_SENDER).map(move |n| format!("{p}-s{s}-{n}")))
        })
        .collect();
    let mut sent = Vec::new();
    let mut claimed = Vec::new();
    for name in PROCESSES {
        sent.extend(lines(&dir.path().join(format!("sent-{name}.txt"))));
        claimed.extend(lines(&dir.path().join(format!("claimed-{name}.txt"))));
    }
    sent.sort();
    claimed.sort();
    // Each sent once, each claimed once (a duplicate would show twice), none lost.
    assert_eq!(sent, expected.iter().cloned().collect::<Vec<_>>());
    assert_eq!(claimed, sent);
    let workspace = Workspace::new(dir.path()).unwrap();
    let mailbox = Mailbox::new(workspace, Arc::new(SystemClock));
    assert_eq!(
        mailbox.counts(&alice()).unwrap(),
        Counts {
            ready: 0,
            processing: 0,
            done: TOTAL,
            quarantine: 0
        }
    );
}

/// One worker process: `SENDERS` threads send to alice, `CLAIMERS` threads claim and ack
/// until every message of both processes is done.
#[test]
#[ignore = "a worker of two_processes_of_senders_and_claimers_claim_every_message_exactly_once"]
fn worker() {
    let dir = std::path::PathBuf::from(std::env::var(ENV_DIR).unwrap());
    let name = std::env::var(ENV_NAME).unwrap();
    let workspace = Workspace::new(&dir).unwrap();
    let mailbox = Mailbox::new(workspace, Arc::new(SystemClock));
    let roster = Roster::new(vec![Member {
        name: alice(),
        role: "claims".into(),
        status: TeammateStatus::Idle,
    }]);
    let sender = AgentId::new(&format!("sender-{name}")).unwrap();
    let sent = Mutex::new(Vec::new());
    let claimed = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for s in 0..SENDERS {
            let (mailbox, roster, sender, sent, name) = (&mailbox, &roster, &sender, &sent, &name);
            scope.spawn(move || {
                for n in 0..PER_SENDER {
                    let body = format!("{name}-s{s}-{n}");
                    mailbox
                        .send(roster, sender, "alice", MailKind::Message, &body)
                        .unwrap();
                    sent.lock().unwrap().push(body);
                }
            });
        }
        for _ in 0..CLAIMERS {
            let (mailbox, claimed) = (&mailbox, &claimed);
            scope.spawn(move || {
                let mut empty = 0;
                while empty < MAX_EMPTY_POLLS {
                    match mailbox.claim(&alice()).unwrap() {
                        Some(message) => {
                            mailbox.ack(&message).unwrap();
                            claimed.lock().unwrap().push(message.body);
                        }
                        None if mailbox.counts(&alice()).unwrap().done >= TOTAL => break,
                        None => {
                            empty += 1;
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                }
            });
        }
    });
    let write = |file: &str, lines: Vec<String>| {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join(format!("{file}-{name}.txt")), text).unwrap();
    };
    write("sent", sent.into_inner().unwrap());
    write("claimed", claimed.into_inner().unwrap());
}
