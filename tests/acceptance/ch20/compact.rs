//! `/compact` at chapter 20's prompt: the next request is summarized although it is far under
//! the byte budget, and the conversation stays compacted (the stored history stays whole).

use serde_json::{Value, json};

use crate::support::{command, workspace, write_script};

const SUMMARY: &str = r#"{"current_goal": "g", "key_findings": ["k"], "files_read_or_changed": [], "remaining_work": [], "user_constraints": []}"#;

#[test]
fn compact_summarizes_the_next_request_under_the_budget() {
    let ws = workspace();
    let out = tempfile::tempdir().unwrap();
    // Each answer is followed by chapter 9's memory extraction (nothing to keep); the summary
    // call comes first in the request after `/compact`.
    let mut steps: Vec<Value> = (1..=6)
        .flat_map(|n| {
            [
                json!({"content": format!("a{n}")}),
                json!({"content": "[]"}),
            ]
        })
        .collect();
    steps.extend([
        json!({"content": SUMMARY}),
        json!({"content": "a7"}),
        json!({"content": "[]"}),
    ]);
    let script = write_script(out.path(), Value::Array(steps));
    let record = out.path().join("requests.jsonl");
    let done = command("agent-tutorial", ws.path())
        .args(["run", "--chapter", "20", "--approve", "all", "--script"])
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .write_stdin("q1\nq2\nq3\nq4\nq5\nq6\n/compact\nq7\n")
        .assert()
        .success();
    let output = done.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let compact_lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("[compact"))
        .collect();
    assert_eq!(
        compact_lines,
        [
            "ch20 >> [compact] the next request summarizes the older part of the conversation (the newest rounds stay as they are); the stored history stays whole",
            "[lead] [compact] summary: 13 -> 6 messages",
        ]
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        (1..=7)
            .map(|n| format!("[lead] a{n}\n"))
            .collect::<String>()
    );
    // The request after `/compact`: the first message, the summary, the newest rounds.
    let requests: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let last: Vec<(String, String)> = requests[6]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| {
            let text = m["content"].as_str().unwrap_or_default().to_string();
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect();
    let pair = |role: &str, text: &str| (role.to_string(), text.to_string());
    assert_eq!(
        (requests.len(), last),
        (
            7,
            vec![
                pair("user", "q1"),
                pair(
                    "system",
                    "<conversation-summary>\n{\n  \"current_goal\": \"g\",\n  \"key_findings\": [\n    \"k\"\n  ],\n  \"files_read_or_changed\": [],\n  \"remaining_work\": [],\n  \"user_constraints\": []\n}\n</conversation-summary>"
                ),
                pair("assistant", "a5"),
                pair("user", "q6"),
                pair("assistant", "a6"),
                pair("user", "q7"),
            ]
        )
    );
}
