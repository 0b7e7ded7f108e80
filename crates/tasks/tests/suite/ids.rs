//! Ids are typed by people and models: numbers or strings, never paths.

use agent_tasks::parse_id;
use serde_json::json;

use super::Fixture;

#[test]
fn ids_parse_from_numbers_and_strings_and_nothing_else() {
    let parsed: Vec<Result<u64, String>> = [
        json!(3),
        json!("3"),
        json!(" #3 "),
        json!("../3"),
        json!("3/../4"),
        json!(0),
        json!(-1),
        json!(3.5),
        json!(""),
        json!(null),
    ]
    .iter()
    .map(|v| parse_id(v).map_err(|e| e.to_string()))
    .collect();
    let bad = |v: &str| {
        Err(format!(
            "{v} is not a task id; give the task's number, e.g. 3 or \"3\""
        ))
    };
    assert_eq!(
        parsed,
        vec![
            Ok(3),
            Ok(3),
            Ok(3),
            bad("\"../3\""),
            bad("\"3/../4\""),
            bad("0"),
            bad("-1"),
            bad("3.5"),
            bad("\"\""),
            bad("null"),
        ]
    );
}

#[tokio::test]
async fn the_tools_take_ids_as_numbers_or_strings() {
    let f = Fixture::new();
    f.call("task_create", json!({"subject": "a", "description": "d"}))
        .await;
    let by_number = f.call("task_get", json!({"id": 1})).await;
    assert_eq!(f.call("task_get", json!({"id": "1"})).await, by_number);
    assert_eq!(
        by_number,
        "#1 [pending] a (ready)\nowner: (none)\nblocked by: (none)\nblocks: (none)\ncreated: 1700000000, updated: 1700000000\n\nd"
    );
    assert_eq!(
        f.call("task_get", json!({"id": "../1"})).await,
        "Error [invalid_arguments]: $.id: \"../1\" is not a task id; give the task's number, e.g. 3 or \"3\""
    );
    assert_eq!(
        f.call("task_get", json!({"id": [1]})).await,
        "Error [invalid_arguments]: $.id: expected integer or string, got array"
    );
}
