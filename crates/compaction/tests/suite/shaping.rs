use agent_compaction::groups::groups;
use agent_compaction::{ArtifactConfig, ArtifactStore, micro, snip};
use agent_core::seams::ResultShaper;
use agent_core::{Message, ToolCall};
use agent_workspace::Workspace;

fn round(id: &str, result: &str) -> Vec<Message> {
    vec![
        Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        },
        Message::tool_result(id, result),
    ]
}

fn history(rounds: usize) -> Vec<Message> {
    let mut messages = vec![Message::user("task")];
    for i in 0..rounds {
        messages.extend(round(
            &format!("c{i}"),
            &format!("result {i} {}", "x".repeat(60)),
        ));
    }
    messages.push(Message::assistant_text("done"));
    messages
}

fn texts(groups: Vec<Vec<Message>>) -> Vec<String> {
    groups
        .into_iter()
        .flatten()
        .map(|m| {
            format!(
                "{} {}",
                m.role(),
                m.text().chars().take(80).collect::<String>()
            )
        })
        .collect()
}

#[test]
fn snip_keeps_the_first_user_message_and_the_newest_groups() {
    let out = texts(snip(groups(history(5)), 2));
    assert_eq!(
        out,
        vec![
            "user task",
            "system [snipped: 8 earlier messages (4 tool rounds) are not shown]",
            "assistant ",
            "tool result 4 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "assistant done",
        ]
    );
    // Nothing to snip: unchanged.
    assert_eq!(snip(groups(history(1)), 2), groups(history(1)));
}

#[test]
fn micro_stubs_results_older_than_the_newest_groups() {
    let out: Vec<Message> = micro(groups(history(4)), 3).into_iter().flatten().collect();
    let results: Vec<&str> = out
        .iter()
        .filter(|m| m.role() == "tool")
        .map(Message::text)
        .collect();
    assert_eq!(
        results,
        vec![
            "[earlier tool result cleared: 69 bytes]",
            "[earlier tool result cleared: 69 bytes]",
            &format!("result 2 {}", "x".repeat(60)),
            &format!("result 3 {}", "x".repeat(60)),
        ]
    );
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: "{}".into(),
    }
}

#[tokio::test]
async fn large_results_are_persisted_and_previewed() {
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::new(
        Workspace::new(dir.path()).unwrap(),
        ArtifactConfig::default(),
    );
    let big: String = (0..40_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut batch = vec![(call("c1"), big.clone()), (call("c2"), "small".to_string())];
    store.shape(&mut batch).await;
    let saved =
        std::fs::read_to_string(dir.path().join(".agent_tutorial/artifacts/c1.txt")).unwrap();
    assert_eq!(saved, big);
    assert_eq!(
        batch[0].1,
        format!(
            "<persisted-tool-result path=\".agent_tutorial/artifacts/c1.txt\" bytes=\"40000\">\n{}\n[... 37000 bytes not shown; the whole result is in .agent_tutorial/artifacts/c1.txt: read it with read_file, or search it with bash ...]\n{}\n</persisted-tool-result>",
            &big[..2000],
            &big[39_000..]
        )
    );
    assert_eq!(batch[1].1, "small");
}

#[tokio::test]
async fn a_batch_over_its_budget_persists_the_largest_next() {
    let dir = tempfile::tempdir().unwrap();
    let config = ArtifactConfig {
        max_result_bytes: 1_000,
        max_batch_bytes: 1_500,
        preview_head_bytes: 10,
        preview_tail_bytes: 10,
    };
    let store = ArtifactStore::new(Workspace::new(dir.path()).unwrap(), config);
    let mut batch = vec![
        (call("a"), "a".repeat(900)),
        (call("b"), "b".repeat(800)),
        (call("c"), "c".repeat(100)),
    ];
    store.shape(&mut batch).await;
    let persisted: Vec<bool> = batch
        .iter()
        .map(|(_, c)| c.starts_with("<persisted-tool-result"))
        .collect();
    assert_eq!(persisted, vec![true, false, false]);
    assert!(dir.path().join(".agent_tutorial/artifacts/a.txt").exists());
    assert!(!dir.path().join(".agent_tutorial/artifacts/b.txt").exists());
}

#[tokio::test]
async fn an_artifact_folder_or_file_linked_outside_is_never_written_through() {
    let config = ArtifactConfig {
        max_result_bytes: 10,
        ..ArtifactConfig::default()
    };
    let big = "x".repeat(100);
    // The folder is a link to outside; then the file name is a dangling link to outside.
    for plant in ["folder", "file"] {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let artifacts = dir.path().join(".agent_tutorial/artifacts");
        match plant {
            "folder" => {
                std::fs::create_dir_all(dir.path().join(".agent_tutorial")).unwrap();
                std::os::unix::fs::symlink(outside.path(), &artifacts).unwrap();
            }
            _ => {
                std::fs::create_dir_all(&artifacts).unwrap();
                std::os::unix::fs::symlink(
                    outside.path().join("planted.txt"),
                    artifacts.join("c1.txt"),
                )
                .unwrap();
            }
        }
        let store = ArtifactStore::new(Workspace::new(dir.path()).unwrap(), config);
        let mut batch = vec![(call("c1"), big.clone())];
        store.shape(&mut batch).await;
        let outside_files: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert_eq!(outside_files.len(), 0, "{plant}");
        // Kept whole rather than lost: the result stays in the history.
        assert_eq!(batch[0].1, big, "{plant}");
    }
}
