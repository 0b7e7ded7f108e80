//! The agent's inbox: what joins a request, what starts a turn, the bound, the wake-up.

use agent_core::{AgentInbox, INBOX_CAPACITY, Inbox, InboxFull, InboxItem, InboxKind, Sender};

fn item(from: Sender, kind: InboxKind, body: &str) -> InboxItem {
    InboxItem {
        from,
        kind,
        request_id: None,
        body: body.to_string(),
    }
}

#[test]
fn notices_join_the_request_and_scheduled_runs_wait_for_a_turn_of_their_own() {
    let inbox = AgentInbox::new();
    let run = item(
        Sender::Schedule("s1".into()),
        InboxKind::ScheduledRun,
        "run",
    );
    let first = item(Sender::Job(1), InboxKind::JobNotice, "<job 1>");
    let second = item(Sender::Job(2), InboxKind::JobNotice, "<job 2>");
    for posted in [&first, &run, &second] {
        inbox.post(posted.clone()).unwrap();
    }

    assert_eq!(inbox.take(), vec![first, second]);
    assert_eq!(inbox.take(), Vec::<InboxItem>::new());
    assert_eq!(inbox.take_turn(), Some(run));
    assert!(inbox.is_empty());
}

#[test]
fn a_full_inbox_refuses_the_next_item() {
    let inbox = AgentInbox::new();
    for n in 0..INBOX_CAPACITY {
        inbox
            .post(item(Sender::Job(n as u64), InboxKind::JobNotice, "x"))
            .unwrap();
    }
    assert_eq!(
        inbox.post(item(Sender::Job(9999), InboxKind::JobNotice, "x")),
        Err(InboxFull {
            from: Sender::Job(9999)
        })
    );
    assert_eq!(inbox.take().len(), INBOX_CAPACITY);
}

#[tokio::test]
async fn a_post_before_the_wait_is_not_lost() {
    let inbox = AgentInbox::new();
    inbox
        .post(item(Sender::Job(1), InboxKind::JobNotice, "x"))
        .unwrap();
    // Returns at once: the post left a permit.
    inbox.changed().await;
    assert_eq!(inbox.take().len(), 1);
}
