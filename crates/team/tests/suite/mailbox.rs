use std::sync::Arc;

use agent_protocol::AgentId;
use agent_team::mailbox::{MAX_MESSAGE_BYTES, MAX_WAITING, QuarantineEntry};
use agent_team::{Acked, Counts, Failed, MailError, MailKind, MailMessage, Mailbox};
use agent_workspace::ManualClock;

use super::{fixture, id, send, team, tree};

fn bodies(f: &super::Fixture, who: &str) -> Vec<String> {
    std::iter::from_fn(|| f.mailbox.claim(&id(who)).unwrap())
        .map(|m| m.body)
        .collect()
}

#[test]
fn messages_are_claimed_oldest_first_by_creation_time_then_id() {
    let f = fixture();
    send(&f, "alice", "first at 1000");
    send(&f, "alice", "second at 1000");
    // Another process whose clock is behind.
    let behind = Mailbox::new(
        f.workspace.clone(),
        Arc::new(ManualClock::new(super::at(500))),
    );
    behind
        .send(
            &team(),
            &AgentId::lead(),
            "alice",
            MailKind::Message,
            "sent later, stamped 500",
        )
        .unwrap();
    f.clock.set(super::at(2_000));
    send(&f, "alice", "at 2000");
    assert_eq!(
        bodies(&f, "alice"),
        [
            "sent later, stamped 500",
            "first at 1000",
            "second at 1000",
            "at 2000"
        ]
    );
}

#[test]
fn a_claimed_message_is_the_one_sent_and_moves_to_processing() {
    let f = fixture();
    let sent = send(&f, "alice", "hello");
    assert_eq!(
        sent,
        MailMessage {
            id: sent.id.clone(),
            from: AgentId::lead(),
            to: id("alice"),
            kind: MailKind::Message,
            body: "hello".into(),
            created_at: 1_000,
            failures: vec![],
        }
    );
    assert_eq!(f.mailbox.claim(&id("alice")).unwrap(), Some(sent));
    assert_eq!(
        f.mailbox.counts(&id("alice")).unwrap(),
        Counts {
            ready: 0,
            processing: 1,
            done: 0,
            quarantine: 0
        }
    );
    assert_eq!(f.mailbox.claim(&id("alice")).unwrap(), None);
}

#[test]
fn what_was_processing_when_the_process_died_is_ready_again_at_start() {
    let f = fixture();
    let first = send(&f, "alice", "one");
    send(&f, "alice", "two");
    assert_eq!(f.mailbox.claim(&id("alice")).unwrap(), Some(first.clone()));
    // A new process: a fresh store over the same folder.
    let restarted = Mailbox::new(f.workspace.clone(), f.clock.clone());
    assert_eq!(restarted.recover(&id("alice")).unwrap(), 1);
    assert_eq!(
        restarted.counts(&id("alice")).unwrap(),
        Counts {
            ready: 2,
            processing: 0,
            done: 0,
            quarantine: 0
        }
    );
    assert_eq!(restarted.claim(&id("alice")).unwrap(), Some(first));
}

#[test]
fn recovery_of_a_mailbox_never_used_creates_nothing() {
    let f = fixture();
    assert_eq!(f.mailbox.recover(&id("alice")).unwrap(), 0);
    assert_eq!(tree(f.dir.path()), Vec::<String>::new());
}

#[test]
fn an_ack_is_idempotent_and_a_different_message_under_its_id_is_refused() {
    let f = fixture();
    send(&f, "alice", "hello");
    let claimed = f.mailbox.claim(&id("alice")).unwrap().unwrap();
    assert_eq!(f.mailbox.ack(&claimed).unwrap(), Acked::Done);
    assert_eq!(f.mailbox.ack(&claimed).unwrap(), Acked::AlreadyDone);
    let forged = MailMessage {
        body: "something else".into(),
        ..claimed.clone()
    };
    let err = f.mailbox.ack(&forged).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "message {} was stored with different content than the one acknowledged",
            claimed.id
        )
    );
    assert_eq!(
        f.mailbox.counts(&id("alice")).unwrap(),
        Counts {
            ready: 0,
            processing: 0,
            done: 1,
            quarantine: 0
        }
    );
}

#[test]
fn a_claimed_message_acked_with_other_content_stays_in_processing() {
    let f = fixture();
    send(&f, "alice", "hello");
    let claimed = f.mailbox.claim(&id("alice")).unwrap().unwrap();
    let forged = MailMessage {
        from: id("bob"),
        ..claimed.clone()
    };
    assert!(matches!(f.mailbox.ack(&forged), Err(MailError::Conflict(i)) if i == claimed.id));
    assert_eq!(f.mailbox.counts(&id("alice")).unwrap().processing, 1);
}

#[test]
fn a_message_never_claimed_cannot_be_acked() {
    let f = fixture();
    let sent = send(&f, "alice", "hello");
    let err = f.mailbox.ack(&sent).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "message {} is not being processed, so it cannot be acknowledged or failed",
            sent.id
        )
    );
}

#[test]
fn a_message_that_fails_its_recipient_three_times_is_quarantined_with_the_reasons() {
    let f = fixture();
    let poison = send(&f, "alice", "poison");
    f.clock.set(super::at(2_000));
    send(&f, "alice", "fine");
    let mut outcomes = Vec::new();
    for attempt in 1..=3 {
        let claimed = f.mailbox.claim(&id("alice")).unwrap().unwrap();
        assert_eq!(claimed.body, "poison");
        outcomes.push(
            f.mailbox
                .fail(&claimed, &format!("boom {attempt}"))
                .unwrap(),
        );
    }
    assert_eq!(
        outcomes,
        [
            Failed::Released { attempts: 1 },
            Failed::Released { attempts: 2 },
            Failed::Quarantined { attempts: 3 },
        ]
    );
    assert_eq!(bodies(&f, "alice"), ["fine"]);
    assert_eq!(
        f.mailbox.quarantined(&id("alice")).unwrap(),
        [QuarantineEntry {
            file: poison.file_name(),
            reason: "it made its recipient fail 3 times: boom 1; boom 2; boom 3".into(),
        }]
    );
}

#[test]
fn a_released_message_keeps_its_place_and_counts_no_failure() {
    let f = fixture();
    send(&f, "alice", "one");
    send(&f, "alice", "two");
    let claimed = f.mailbox.claim(&id("alice")).unwrap().unwrap();
    f.mailbox.release(&claimed).unwrap();
    assert_eq!(f.mailbox.claim(&id("alice")).unwrap(), Some(claimed));
}

#[test]
fn a_corrupt_file_is_quarantined_and_the_others_are_still_delivered() {
    let f = fixture();
    send(&f, "alice", "after the corrupt one");
    let ready = f.dir.path().join(".agent_tutorial/mail/alice/ready");
    let name = "00000000000000000001-0000abcd-1.json";
    std::fs::write(ready.join(name), "{not json").unwrap();
    assert_eq!(bodies(&f, "alice"), ["after the corrupt one"]);
    assert_eq!(
        f.mailbox.quarantined(&id("alice")).unwrap(),
        [QuarantineEntry {
            file: name.into(),
            reason: "not a message: key must be a string at line 1 column 2".into(),
        }]
    );
}

#[test]
fn a_file_for_someone_else_or_not_matching_its_name_is_quarantined() {
    let f = fixture();
    let sent = f
        .mailbox
        .send(&team(), &id("alice"), "bob", MailKind::Message, "for bob")
        .unwrap();
    // Planted in alice's mailbox under its own name: it says it is for bob.
    let from = f
        .dir
        .path()
        .join(".agent_tutorial/mail/bob/ready")
        .join(sent.file_name());
    let planted = f.dir.path().join(".agent_tutorial/mail/alice/ready");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::copy(&from, planted.join(sent.file_name())).unwrap();
    assert_eq!(f.mailbox.claim(&id("alice")).unwrap(), None);
    assert_eq!(
        f.mailbox.quarantined(&id("alice")).unwrap(),
        [QuarantineEntry {
            file: sent.file_name(),
            reason: format!(
                "it holds message {} for `bob`, not the one its name and mailbox say",
                sent.id
            ),
        }]
    );
}

#[test]
fn a_recipient_that_cannot_receive_mail_is_an_error_naming_the_team_and_creates_nothing() {
    let f = fixture();
    let lead = AgentId::lead();
    let errors: Vec<String> = ["bbo", "carol", "dave", "Alice", "missing/../../x", ""]
        .iter()
        .map(|to| {
            f.mailbox
                .send(&team(), &lead, to, MailKind::Message, "hi")
                .unwrap_err()
                .to_string()
        })
        .collect();
    let roster_line =
        "the agents are: lead, alice (idle), bob (running), carol (failed), dave (shut down)";
    assert_eq!(
        errors,
        [
            format!("there is no teammate named `bbo`; {roster_line}"),
            format!("teammate `carol` is failed and receives no messages; {roster_line}"),
            format!("teammate `dave` is shut down and receives no messages; {roster_line}"),
            format!("there is no teammate named `Alice`; {roster_line}"),
            format!("there is no teammate named `missing/../../x`; {roster_line}"),
            format!("there is no teammate named ``; {roster_line}"),
        ]
    );
    let to_self = f
        .mailbox
        .send(&team(), &id("alice"), "alice", MailKind::Message, "hi")
        .unwrap_err();
    assert_eq!(
        to_self.to_string(),
        "`alice` is you: send a message to another agent"
    );
    assert_eq!(tree(f.dir.path()), Vec::<String>::new());
}

#[test]
fn a_teammate_may_write_to_the_lead() {
    let f = fixture();
    let sent = f
        .mailbox
        .send(&team(), &id("alice"), "lead", MailKind::Result, "done")
        .unwrap();
    assert_eq!(f.mailbox.claim(&AgentId::lead()).unwrap(), Some(sent));
}

#[test]
fn a_message_over_the_size_limit_is_refused_and_writes_nothing() {
    let f = fixture();
    let body = "x".repeat(MAX_MESSAGE_BYTES + 1);
    let err = f
        .mailbox
        .send(&team(), &AgentId::lead(), "alice", MailKind::Message, &body)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the message is 65537 bytes, over the limit of 65536 bytes"
    );
    assert_eq!(tree(f.dir.path()), Vec::<String>::new());
    send(&f, "alice", &"x".repeat(MAX_MESSAGE_BYTES));
}

#[test]
fn a_recipient_with_the_most_messages_waiting_takes_no_more() {
    let f = fixture();
    for i in 0..MAX_WAITING {
        send(&f, "alice", &i.to_string());
    }
    // Claimed but not acked still waits.
    f.mailbox.claim(&id("alice")).unwrap().unwrap();
    let err = f
        .mailbox
        .send(
            &team(),
            &AgentId::lead(),
            "alice",
            MailKind::Message,
            "one more",
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`alice` already has 256 messages waiting; try again after it has read them"
    );
    send(&f, "bob", "bob's mailbox is separate");
}

#[test]
fn peeking_shows_the_oldest_waiting_messages_and_changes_nothing() {
    let f = fixture();
    assert_eq!(f.mailbox.peek(&id("alice"), 2).unwrap(), []);
    assert_eq!(tree(f.dir.path()), Vec::<String>::new());
    let first = send(&f, "alice", "one");
    let second = send(&f, "alice", "two");
    send(&f, "alice", "three");
    let ready = f.dir.path().join(".agent_tutorial/mail/alice/ready");
    std::fs::write(ready.join("00000000000000000001-0000abcd-1.json"), "{").unwrap();
    let before = tree(f.dir.path());
    assert_eq!(f.mailbox.peek(&id("alice"), 2).unwrap(), [first, second]);
    assert_eq!(tree(f.dir.path()), before);
}

#[test]
fn only_the_newest_acknowledged_messages_are_kept() {
    let f = fixture();
    let mailbox = f.mailbox.clone().keep_done(2);
    let mut acked = Vec::new();
    for (i, body) in ["one", "two", "three"].iter().enumerate() {
        f.clock
            .advance(std::time::Duration::from_millis(i as u64 + 1));
        send(&f, "alice", body);
        let claimed = mailbox.claim(&id("alice")).unwrap().unwrap();
        mailbox.ack(&claimed).unwrap();
        acked.push(claimed);
    }
    let done = f.dir.path().join(".agent_tutorial/mail/alice/done");
    assert_eq!(tree(&done), [acked[1].file_name(), acked[2].file_name()]);
    // The pruned one is no longer known; the kept ones still ack idempotently.
    assert_eq!(mailbox.ack(&acked[2]).unwrap(), Acked::AlreadyDone);
    assert!(matches!(
        mailbox.ack(&acked[0]),
        Err(MailError::NotClaimed(_))
    ));
}
