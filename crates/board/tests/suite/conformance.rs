//! The conformance suite: one behaviour, written once against `TaskBoard`, run on every
//! backend (`sqlite.rs`, `postgres.rs`). Times are compared relative to the claim, since
//! PostgreSQL's clock is the server's.

use std::collections::BTreeSet;
use std::sync::Arc;

use agent_board::{
    BoardError, Claim, ClaimEnd, ClaimTarget, ClaimToken, ImportedTask, Millis, NewTask, Status,
    Task, TaskBoard, TaskId,
};

use super::harness::{Harness, agent};

/// A task as the suite compares it: what every backend must agree on.
#[derive(Debug, PartialEq, Eq)]
pub struct Seen {
    pub id: TaskId,
    pub subject: String,
    pub status: Status,
    pub blocked_by: Vec<TaskId>,
    pub owner: Option<String>,
    pub result: Option<String>,
}

pub fn seen(task: &Task) -> Seen {
    Seen {
        id: task.id,
        subject: task.subject.clone(),
        status: task.status,
        blocked_by: task.blocked_by.clone(),
        owner: task.holder.as_ref().map(|h| h.owner.to_string()),
        result: task.result.clone(),
    }
}

/// A claim as the suite compares it: who, which task, which token, how long. (On
/// PostgreSQL the harness moves stored times, so absolute times are not comparable.)
pub fn held(claim: &Claim) -> (TaskId, String, ClaimToken, i64) {
    (
        claim.task,
        claim.owner.to_string(),
        claim.token.clone(),
        claim.expires_at.0 - claim.claimed_at.0,
    )
}

pub async fn create(board: &impl TaskBoard, subject: &str, blocked_by: &[TaskId]) -> TaskId {
    board
        .create(NewTask {
            subject: subject.to_string(),
            description: String::new(),
            blocked_by: blocked_by.to_vec(),
        })
        .await
        .unwrap()
        .id
}

async fn subjects(board: &impl TaskBoard) -> Vec<String> {
    board
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.subject)
        .collect()
}

/// Ready tasks are claimed oldest first; a blocked one is refused until its blocker is
/// completed; a missing dependency stores nothing.
pub async fn dependencies_and_creation_order(h: &impl Harness) {
    let board = h.open().await;
    let (alice, bob) = (agent("alice"), agent("bob"));
    let a = create(&board, "design", &[]).await;
    let b = create(&board, "build", &[a]).await;
    let c = create(&board, "docs", &[]).await;

    let first = board.claim(&alice, ClaimTarget::OldestReady).await.unwrap();
    assert_eq!(first.task, a);
    let second = board.claim(&bob, ClaimTarget::OldestReady).await.unwrap();
    assert_eq!(second.task, c, "b waits for a, so c is the oldest ready");
    let blocked = board.claim(&bob, ClaimTarget::Task(b)).await.unwrap_err();
    assert_eq!(
        blocked.to_string(),
        format!("task {b} is not ready: it waits for {a}")
    );
    let none = board
        .claim(&bob, ClaimTarget::OldestReady)
        .await
        .unwrap_err();
    assert!(matches!(none, BoardError::NothingReady), "{none:?}");

    board
        .complete(&alice, a, &first.token, "designed")
        .await
        .unwrap();
    let third = board.claim(&bob, ClaimTarget::OldestReady).await.unwrap();
    assert_eq!(third.task, b);

    let listed: Vec<Seen> = board.list().await.unwrap().iter().map(seen).collect();
    assert_eq!(
        listed,
        vec![
            Seen {
                id: a,
                subject: "design".into(),
                status: Status::Completed,
                blocked_by: vec![],
                owner: None,
                result: Some("designed".into()),
            },
            Seen {
                id: b,
                subject: "build".into(),
                status: Status::InProgress,
                blocked_by: vec![a],
                owner: Some("bob".into()),
                result: None,
            },
            Seen {
                id: c,
                subject: "docs".into(),
                status: Status::InProgress,
                blocked_by: vec![],
                owner: Some("bob".into()),
                result: None,
            },
        ]
    );

    // A missing dependency: refused, and no row of the task is left behind.
    let missing = board
        .create(NewTask {
            subject: "orphan".into(),
            description: String::new(),
            blocked_by: vec![a, TaskId(9_999)],
        })
        .await
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "task #9999 cannot be waited for: there is no such task"
    );
    assert_eq!(subjects(&board).await, ["design", "build", "docs"]);
}

/// Self-dependencies and cycles can only arrive with explicit ids (an import): refused whole.
pub async fn self_dependency_and_cycle_store_nothing(h: &impl Harness) {
    let board = h.open().await;
    let task = |id: i64, blocked_by: &[i64]| ImportedTask {
        id: TaskId(id),
        subject: format!("task {id}"),
        description: String::new(),
        status: Status::Pending,
        blocked_by: blocked_by.iter().copied().map(TaskId).collect(),
        created_at: Millis(id),
    };
    let itself = board.import_once(vec![task(50, &[50])]).await.unwrap_err();
    assert_eq!(itself.to_string(), "task #50 cannot wait for itself");
    let cycle = board
        .import_once(vec![task(60, &[62]), task(61, &[60]), task(62, &[61])])
        .await
        .unwrap_err();
    assert_eq!(
        cycle.to_string(),
        "that dependency would make a cycle: #62, #61, #62"
    );
    assert_eq!(subjects(&board).await, Vec::<String>::new());
    // Nothing was recorded either: a valid import still goes in, once.
    assert!(
        board
            .import_once(vec![task(3, &[]), task(4, &[3])])
            .await
            .unwrap()
    );
    assert!(!board.import_once(vec![task(7, &[])]).await.unwrap());
    assert_eq!(subjects(&board).await, ["task 3", "task 4"]);
    // New tasks continue after the imported ids.
    let next = create(&board, "after import", &[TaskId(4)]).await;
    assert_eq!(next, TaskId(5));
}

/// At exactly the lease's end the task is pending again; the old token gets
/// `task_lease_expired` everywhere; the next claim's token differs.
pub async fn expiry_is_half_open(h: &impl Harness) {
    let board = h.open().await;
    let (alice, bob) = (agent("alice"), agent("bob"));
    let id = create(&board, "long job", &[]).await;
    let old = board.claim(&alice, ClaimTarget::Task(id)).await.unwrap();
    let lease = old.expires_at.0 - old.claimed_at.0;
    assert_eq!(lease, 120_000, "the default lease");

    h.advance(std::time::Duration::from_millis(120_000) - h.tick())
        .await;
    assert_eq!(board.get(id).await.unwrap().status, Status::InProgress);
    assert_eq!(
        held(&board.check_held(&alice, id, &old.token).await.unwrap()),
        held(&old)
    );

    h.advance(h.tick()).await;
    assert_eq!(
        seen(&board.get(id).await.unwrap()),
        Seen {
            id,
            subject: "long job".into(),
            status: Status::Pending,
            blocked_by: vec![],
            owner: None,
            result: None,
        }
    );
    let late = board
        .complete(&alice, id, &old.token, "done")
        .await
        .unwrap_err();
    assert_eq!(late.kind().proposed_code(), "task_lease_expired");
    for err in [
        board.renew(&alice, id, &old.token).await.unwrap_err(),
        board.check_held(&alice, id, &old.token).await.unwrap_err(),
        board
            .release(&alice, id, &old.token, "gave up")
            .await
            .unwrap_err(),
    ] {
        assert!(
            matches!(err, BoardError::LeaseExpired(t) if t == id),
            "{err:?}"
        );
    }

    let new = board.claim(&bob, ClaimTarget::Task(id)).await.unwrap();
    assert_ne!(new.token, old.token);
    // The old holder's token stays void while bob holds the task; bob's token is not alice's.
    let still_late = board
        .complete(&alice, id, &old.token, "done")
        .await
        .unwrap_err();
    assert!(
        matches!(still_late, BoardError::LeaseExpired(_)),
        "{still_late:?}"
    );
    let mismatch = board
        .complete(&alice, id, &new.token, "done")
        .await
        .unwrap_err();
    assert_eq!(mismatch.kind().proposed_code(), "task_claim_mismatch");
    assert_eq!(
        mismatch.to_string(),
        format!("that token is not the claim held on task {id} by you")
    );

    let history = board.history(id).await.unwrap();
    let ends: Vec<(String, ClaimToken, Option<ClaimEnd>)> = history
        .iter()
        .map(|r| (r.owner.to_string(), r.token.clone(), r.ended.map(|e| e.0)))
        .collect();
    assert_eq!(
        ends,
        vec![
            ("alice".into(), old.token.clone(), Some(ClaimEnd::Expired)),
            ("bob".into(), new.token.clone(), None),
        ]
    );
    // An expired claim ends at its lease's end, not when somebody noticed.
    assert_eq!(history[0].ended.map(|e| e.1), Some(history[0].expires_at));
}

/// A holder that renews keeps its claim across many leases' worth of time.
pub async fn renewal_keeps_a_long_claim(h: &impl Harness) {
    let board = h.open().await;
    let alice = agent("alice");
    let id = create(&board, "a long turn", &[]).await;
    let claim = board.claim(&alice, ClaimTarget::Task(id)).await.unwrap();
    let step = std::time::Duration::from_millis(120_000) - h.tick();
    let mut last = claim.clone();
    for _ in 0..5 {
        h.advance(step).await;
        let renewed = board.renew(&alice, id, &claim.token).await.unwrap();
        // The same claim, a lease that now runs well past one lease from the claim.
        assert_eq!((renewed.task, &renewed.token), (claim.task, &claim.token));
        assert!(
            renewed.expires_at.0 - renewed.claimed_at.0 > last.expires_at.0 - last.claimed_at.0,
            "{renewed:?} after {last:?}"
        );
        last = renewed;
    }
    h.advance(step).await;
    let done = board
        .complete(&alice, id, &claim.token, "finished")
        .await
        .unwrap();
    assert_eq!(
        seen(&done),
        Seen {
            id,
            subject: "a long turn".into(),
            status: Status::Completed,
            blocked_by: vec![],
            owner: None,
            result: Some("finished".into()),
        }
    );
    let history = board.history(id).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].ended.map(|e| e.0), Some(ClaimEnd::Completed));
}

/// Twenty claims and releases of one task: twenty different tokens, each in the history
/// once, and a released token is void.
pub async fn tokens_are_never_reused(h: &impl Harness) {
    let board = h.open().await;
    let alice = agent("alice");
    let id = create(&board, "ping-pong", &[]).await;
    let mut tokens = Vec::new();
    for round in 0..20 {
        let claim = board.claim(&alice, ClaimTarget::Task(id)).await.unwrap();
        let released = board
            .release(&alice, id, &claim.token, &format!("round {round}"))
            .await
            .unwrap();
        assert_eq!(released.status, Status::Pending);
        tokens.push(claim.token);
    }
    let distinct: BTreeSet<&ClaimToken> = tokens.iter().collect();
    assert_eq!(distinct.len(), 20);
    let history = board.history(id).await.unwrap();
    let recorded: Vec<(ClaimToken, Option<ClaimEnd>, Option<String>)> = history
        .iter()
        .map(|r| (r.token.clone(), r.ended.map(|e| e.0), r.reason.clone()))
        .collect();
    let expected: Vec<(ClaimToken, Option<ClaimEnd>, Option<String>)> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (
                t.clone(),
                Some(ClaimEnd::Released),
                Some(format!("round {i}")),
            )
        })
        .collect();
    assert_eq!(recorded, expected);
    let void = board.check_held(&alice, id, &tokens[0]).await.unwrap_err();
    assert!(matches!(void, BoardError::ClaimMismatch(_)), "{void:?}");
}

/// Fencing: only the live claim of this owner on this task passes.
pub async fn fencing_checks_owner_task_and_token(h: &impl Harness) {
    let board = h.open().await;
    let (alice, mallory) = (agent("alice"), agent("mallory"));
    let one = create(&board, "one", &[]).await;
    let two = create(&board, "two", &[]).await;
    let claim = board.claim(&alice, ClaimTarget::Task(one)).await.unwrap();
    assert_eq!(
        board.check_held(&alice, one, &claim.token).await.unwrap(),
        claim
    );
    let refusals = [
        board
            .check_held(&mallory, one, &claim.token)
            .await
            .unwrap_err(),
        board
            .check_held(&alice, two, &claim.token)
            .await
            .unwrap_err(),
        board
            .check_held(
                &alice,
                one,
                &ClaimToken("0123456789abcdef0123456789abcdef".into()),
            )
            .await
            .unwrap_err(),
        board
            .complete(&mallory, one, &claim.token, "stolen")
            .await
            .unwrap_err(),
        board
            .renew(&alice, one, &ClaimToken("f".repeat(100_000)))
            .await
            .unwrap_err(),
    ];
    let codes: Vec<&str> = refusals.iter().map(|e| e.kind().proposed_code()).collect();
    assert_eq!(codes, ["task_claim_mismatch"; 5]);
    let taken = board
        .claim(&mallory, ClaimTarget::Task(one))
        .await
        .unwrap_err();
    assert_eq!(taken.to_string(), format!("task {one} is held by alice"));
    board
        .complete(&alice, one, &claim.token, "ok")
        .await
        .unwrap();
    let twice = board
        .complete(&alice, one, &claim.token, "again")
        .await
        .unwrap_err();
    assert!(matches!(twice, BoardError::ClaimMismatch(_)), "{twice:?}");
    let done = board
        .claim(&mallory, ClaimTarget::Task(one))
        .await
        .unwrap_err();
    assert_eq!(
        done.to_string(),
        format!("task {one} is completed; only a pending task can be claimed")
    );
    let unknown = board.get(TaskId(4_242)).await.unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "there is no task #4242; list_tasks shows the ids"
    );
}

/// Claimers on their own connections racing in one process: one winner per task.
pub async fn concurrent_claimers_in_one_process(h: &impl Harness) {
    let board = h.open().await;
    let contested = create(&board, "contested", &[]).await;
    let mut handles = Vec::new();
    for i in 0..8 {
        let mine = Arc::new(h.open().await);
        handles.push(tokio::spawn(async move {
            mine.claim(&agent(&format!("mate-{i}")), ClaimTarget::Task(contested))
                .await
                .is_ok()
        }));
    }
    let mut winners = 0;
    for handle in handles {
        winners += usize::from(handle.await.unwrap());
    }
    assert_eq!(winners, 1);

    for n in 0..4 {
        create(&board, &format!("open {n}"), &[]).await;
    }
    let mut handles = Vec::new();
    for i in 0..8 {
        let mine = Arc::new(h.open().await);
        handles.push(tokio::spawn(async move {
            mine.claim(&agent(&format!("mate-{i}")), ClaimTarget::OldestReady)
                .await
                .map(|c| c.task)
        }));
    }
    let mut won = BTreeSet::new();
    let mut lost = 0;
    for handle in handles {
        match handle.await.unwrap() {
            Ok(task) => assert!(won.insert(task), "{task} won twice"),
            Err(_) => lost += 1,
        }
    }
    assert_eq!((won.len(), lost), (4, 4));
}
