//! Overloaded answers in a row switch to the fallback model, and the next request says so.

use agent_core::ModelClient;
use agent_recovery::Fallback;

use super::{Rig, bodies, hi, no_jitter, openai, server, status, text};

fn models(bodies: &[serde_json::Value]) -> Vec<String> {
    bodies
        .iter()
        .map(|b| b["model"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn three_overloads_send_the_next_request_with_the_fallback_model() {
    let server = server(vec![
        status(529),
        status(503),
        status(529),
        text("from the small one", "stop"),
        text("again", "stop"),
    ])
    .await;
    let mut rig = Rig::new(openai(&server, "main-model"), no_jitter());
    rig.model = rig.model.fallback(Fallback {
        client: openai(&server, "small-model"),
        name: "small-model".into(),
    });
    let first = rig.model.complete(&hi()).await.unwrap();
    let second = rig.model.complete(&hi()).await.unwrap();
    assert_eq!(
        (first.content.as_deref(), second.content.as_deref()),
        (Some("from the small one"), Some("again"))
    );
    // The switch is in the request body itself, and it lasts.
    assert_eq!(
        models(&bodies(&server).await),
        [
            "main-model",
            "main-model",
            "main-model",
            "small-model",
            "small-model"
        ]
    );
    assert_eq!(
        rig.lines(),
        [
            "retrying in 0.5 s (529, attempt 2 of 6)",
            "retrying in 1.0 s (503, attempt 3 of 6)",
            "switching to the fallback model small-model after 3 overloaded answers",
        ]
    );
    assert_eq!(
        rig.clock.sleeps(),
        [500, 1000].map(std::time::Duration::from_millis)
    );
}

#[tokio::test]
async fn overloads_interrupted_by_another_failure_do_not_switch() {
    let server = server(vec![
        status(529),
        status(500),
        status(529),
        status(529),
        text("main", "stop"),
    ])
    .await;
    let mut rig = Rig::new(openai(&server, "main-model"), no_jitter());
    rig.model = rig.model.fallback(Fallback {
        client: openai(&server, "small-model"),
        name: "small-model".into(),
    });
    rig.model.complete(&hi()).await.unwrap();
    assert_eq!(models(&bodies(&server).await), ["main-model"; 5]);
}

#[tokio::test]
async fn the_switch_on_the_last_allowed_attempt_still_asks_the_fallback() {
    // Three attempts, three overloads: before, the run gave up with the fallback never asked.
    let server = server(vec![
        status(529),
        status(529),
        status(529),
        text("from the small one", "stop"),
    ])
    .await;
    let policy = agent_recovery::RetryPolicy {
        max_attempts: 3,
        ..no_jitter()
    };
    let mut rig = Rig::new(openai(&server, "main-model"), policy);
    rig.model = rig.model.fallback(Fallback {
        client: openai(&server, "small-model"),
        name: "small-model".into(),
    });
    let reply = rig.model.complete(&hi()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("from the small one"));
    assert_eq!(
        models(&bodies(&server).await),
        ["main-model", "main-model", "main-model", "small-model"]
    );
}
