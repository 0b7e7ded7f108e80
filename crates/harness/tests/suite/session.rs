//! The session's loop: a schedule fires while it waits for input, several agents emit into one
//! stamped stream, a job's end is told while the person types.

use std::sync::Arc;

use agent_core::{AgentEvent, AgentId, Message, ModelReply, ModelRequest, TurnId};
use agent_cron::{Durability, NewSchedule, Scheduler};
use agent_harness::Capability;
use agent_harness::session::{EndReason, Interrupts, Mode, Op, Session, SessionEvent};
use agent_tools::Workspace;
use serde_json::json;

use agent_workspace::ManualClock;

use super::{call, caps, next, session_agent};

#[tokio::test]
async fn a_durable_schedule_fires_at_its_minute_while_the_session_waits_for_input() {
    let dir = tempfile::tempdir().unwrap();
    let start: agent_cron::Timestamp = "2026-03-02T08:59:30Z".parse().unwrap();
    let clock = Arc::new(ManualClock::new(start));
    let new = NewSchedule {
        cron: "0 9 * * *".to_string(),
        prompt: "check the build".to_string(),
        timezone: None,
        durability: Durability::Durable,
    };
    Scheduler::new(&Workspace::new(dir.path()).unwrap(), clock.clone())
        .add(new)
        .unwrap();
    let mut session = Session::new(Interrupts::CancelTurn);
    let lead = AgentId::lead();
    let (agent, model) = session_agent(
        &mut session,
        &lead,
        dir.path(),
        caps(&[Capability::Bash, Capability::Cron]),
        vec![ModelReply::text("The build is green.")],
        |deps| deps.cron_clock = clock.clone(),
    );
    let preview = agent.preview_request("x").await.unwrap();
    session.add(lead.clone(), agent);
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    let running = tokio::spawn(async move { session.run(Mode::Interactive).await });

    // Waiting for input, nothing typed: the prompt is up.
    assert_eq!(next(&mut events).await, SessionEvent::Idle);
    // 09:00 comes, nothing typed: the session's timer wakes and the schedule runs as a turn.
    clock.advance(std::time::Duration::from_secs(30));
    let mut seen = Vec::new();
    loop {
        match next(&mut events).await {
            SessionEvent::Idle => break,
            SessionEvent::Agent(envelope) => seen.push(envelope),
            SessionEvent::TurnEnded { result, .. } => assert_eq!(result, Ok(())),
            other => panic!("unexpected {other:?}"),
        }
    }
    handle.submit(Op::Shutdown(EndReason::Done));
    assert_eq!(running.await.unwrap(), EndReason::Done);

    let marker = "[scheduled run of cron 1 (`0 9 * * *` UTC), due 2026-03-02 09:00 UTC]";
    let kinds: Vec<(u64, Option<TurnId>, String)> = seen
        .iter()
        .map(|e| (e.seq, e.turn, kind(&e.event)))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, Some(TurnId(1)), "ScheduleDue".to_string()),
            (2, Some(TurnId(1)), "RequestSent".to_string()),
            (3, Some(TurnId(1)), "ReplyReceived".to_string()),
            (4, Some(TurnId(1)), "TurnAnswered".to_string()),
        ]
    );
    assert_eq!(
        seen[0].event,
        AgentEvent::ScheduleDue {
            id: "1".to_string(),
            marker: marker.to_string()
        }
    );
    assert_eq!(
        seen[3].event,
        AgentEvent::TurnAnswered {
            text: "The build is green.".to_string()
        }
    );
    model.finish().unwrap();
    assert_eq!(
        model.requests(),
        vec![ModelRequest {
            messages: vec![
                preview.messages[0].clone(),
                Arc::new(Message::user(format!("{marker}\ncheck the build"))),
            ],
            tools: preview.tools.clone(),
            max_tokens: None,
        }]
    );
}

/// The variant's name: what a test compares when the payload is not the point.
fn kind(event: &AgentEvent) -> String {
    let debug = format!("{event:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn two_agents_emit_into_one_stream_each_event_stamped_with_who_and_a_rising_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(Interrupts::CancelTurn);
    let ids = [AgentId::lead(), AgentId::new("helper").unwrap()];
    let mut models = Vec::new();
    for id in &ids {
        let replies = vec![
            ModelReply::tool_calls(vec![call("c1", "bash", json!({"command": "echo hi"}))]),
            ModelReply::text(format!("{id} done")),
        ];
        let (agent, model) = session_agent(
            &mut session,
            id,
            dir.path(),
            caps(&[Capability::Bash]),
            replies,
            |_| {},
        );
        session.add(id.clone(), agent);
        models.push(model);
    }
    let mut events = session.take_events().unwrap();
    for id in &ids {
        session.handle().submit(Op::Prompt {
            agent: id.clone(),
            text: "say hi".to_string(),
        });
    }

    // Both turns start at once, as two tasks.
    assert_eq!(session.run(Mode::UntilIdle).await, EndReason::Done);

    let mut envelopes = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::Agent(envelope) = event {
            envelopes.push(envelope);
        }
    }
    let seqs: Vec<u64> = envelopes.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=envelopes.len() as u64).collect::<Vec<_>>());
    for id in &ids {
        let own: Vec<(Option<TurnId>, String)> = envelopes
            .iter()
            .filter(|e| &e.agent == id)
            .map(|e| (e.turn, kind(&e.event)))
            .collect();
        let turn = Some(TurnId(1));
        assert_eq!(
            own,
            [
                "RequestSent",
                "ReplyReceived",
                "ToolStarted",
                "ToolFinished",
                "RequestSent",
                "ReplyReceived",
                "TurnAnswered"
            ]
            .map(|k| (turn, k.to_string())),
            "{id}"
        );
    }
    assert_eq!(envelopes.len(), 14);
    for model in models {
        model.finish().unwrap();
    }
}

#[tokio::test]
async fn a_job_that_ends_while_the_session_waits_is_told_at_once_and_reaches_the_model_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(Interrupts::CancelTurn);
    let lead = AgentId::lead();
    let replies = vec![
        ModelReply::tool_calls(vec![call(
            "c1",
            "bash",
            json!({"command": "echo built", "run_in_background": true}),
        )]),
        ModelReply::text("Started."),
        ModelReply::text("It built."),
    ];
    let (agent, model) = session_agent(
        &mut session,
        &lead,
        dir.path(),
        caps(&[Capability::Bash, Capability::Background]),
        replies,
        |_| {},
    );
    session.add(lead.clone(), agent);
    let mut events = session.take_events().unwrap();
    let handle = session.handle();
    handle.submit(Op::Prompt {
        agent: lead.clone(),
        text: "build it in the background".to_string(),
    });
    let running = tokio::spawn(async move { session.run(Mode::Interactive).await });

    // The turn, then the prompt; then, with nothing typed, the job's end.
    let mut answered = false;
    let finished = loop {
        match next(&mut events).await {
            SessionEvent::Agent(envelope) => match envelope.event {
                AgentEvent::TurnAnswered { .. } => answered = true,
                AgentEvent::JobFinished { .. } => break envelope,
                _ => {}
            },
            SessionEvent::Idle => assert!(answered),
            SessionEvent::TurnEnded { result, .. } => assert_eq!(result, Ok(())),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(finished.turn, None);
    assert!(matches!(
        finished.event,
        AgentEvent::JobFinished { id: 1, ref status, .. } if status == "exit 0"
    ));
    handle.submit(Op::Prompt {
        agent: lead.clone(),
        text: "is it done?".to_string(),
    });
    loop {
        if let SessionEvent::Agent(envelope) = next(&mut events).await
            && matches!(envelope.event, AgentEvent::TurnAnswered { .. })
        {
            break;
        }
    }
    handle.submit(Op::Shutdown(EndReason::Done));
    assert_eq!(running.await.unwrap(), EndReason::Done);
    model.finish().unwrap();
    let requests = model.requests();
    let notices: Vec<usize> = requests
        .iter()
        .map(|r| {
            r.messages
                .iter()
                .filter(|m| matches!(&***m, Message::User { content } if content.starts_with("<job id=\"1\"")))
                .count()
        })
        .collect();
    // Not in the first turn's two requests; once in the next turn's.
    assert_eq!(notices, [0, 0, 1]);
}
