use serde_json::json;

use super::Fixture;

#[tokio::test]
async fn every_file_tool_refuses_every_escape() {
    let fx = Fixture::new();
    let secret = fx.outside.path().join("secret.txt");
    let secret = secret.to_str().unwrap();
    for path in ["../x.txt", secret, "link_out/secret.txt", "src/../../x.txt"] {
        let expected = format!("Error [path_escape]: `{path}` resolves outside the workspace");
        assert_eq!(fx.call("read_file", json!({"path": path})).await, expected);
        assert_eq!(
            fx.call("write_file", json!({"path": path, "content": "pwned"}))
                .await,
            expected
        );
        assert_eq!(
            fx.call(
                "edit_file",
                json!({"path": path, "old_text": "secret", "new_text": "pwned"})
            )
            .await,
            expected
        );
    }
    assert_eq!(
        std::fs::read_to_string(fx.outside.path().join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(!fx.outside.path().join("x.txt").exists());
    assert_eq!(
        fx.call("glob", json!({"pattern": "../**"})).await,
        "Error [path_escape]: pattern `../**` must be relative to the workspace and must not use `..`"
    );
}

#[tokio::test]
async fn read_file_honours_limit() {
    let fx = Fixture::new();
    assert_eq!(
        fx.call("read_file", json!({"path": "notes.txt"})).await,
        "one\ntwo\nthree\n"
    );
    assert_eq!(
        fx.call("read_file", json!({"path": "notes.txt", "limit": 2}))
            .await,
        "one\ntwo\n[... 1 more lines not shown ...]"
    );
    assert_eq!(
        fx.call("read_file", json!({"path": "notes.txt", "limit": 0}))
            .await,
        "Error [invalid_arguments]: $.limit: must be >= 1"
    );
    let missing = fx.call("read_file", json!({"path": "nope.txt"})).await;
    assert_eq!(
        missing,
        "Error [tool_execution_error]: cannot read `nope.txt`: No such file or directory (os error 2)"
    );
}

#[tokio::test]
async fn write_file_creates_folders() {
    let fx = Fixture::new();
    assert_eq!(
        fx.call(
            "write_file",
            json!({"path": "new/dir/f.txt", "content": "héllo"})
        )
        .await,
        "Wrote 6 bytes to new/dir/f.txt"
    );
    assert_eq!(fx.read("new/dir/f.txt"), "héllo");
}

#[tokio::test]
async fn edit_file_replaces_exactly_one_match_or_changes_nothing() {
    let fx = Fixture::new();
    assert_eq!(
        fx.call(
            "edit_file",
            json!({"path": "notes.txt", "old_text": "two", "new_text": "2"})
        )
        .await,
        "Edited notes.txt: replaced 1 occurrence"
    );
    assert_eq!(fx.read("notes.txt"), "one\n2\nthree\n");

    assert_eq!(
        fx.call(
            "edit_file",
            json!({"path": "notes.txt", "old_text": "four", "new_text": "4"})
        )
        .await,
        "Error [tool_execution_error]: old_text was not found in notes.txt; read the file and copy the text exactly"
    );
    assert_eq!(
        fx.call(
            "edit_file",
            json!({"path": "src/a.rs", "old_text": "fn a()", "new_text": "fn z()"})
        )
        .await,
        "Error [tool_execution_error]: old_text occurs 2 times in src/a.rs; include more surrounding text so it occurs exactly once"
    );
    assert_eq!(fx.read("notes.txt"), "one\n2\nthree\n");
    assert_eq!(fx.read("src/a.rs"), "fn a() {}\nfn a() {}\n");
}

#[tokio::test]
async fn glob_returns_sorted_relative_paths_and_does_not_follow_links_out() {
    let fx = Fixture::new();
    assert_eq!(
        fx.call("glob", json!({"pattern": "src/**/*.rs"})).await,
        "src/a.rs\nsrc/b.rs\nsrc/nested/c.rs"
    );
    assert_eq!(
        fx.call("glob", json!({"pattern": "src/*.rs"})).await,
        "src/a.rs\nsrc/b.rs"
    );
    assert_eq!(
        fx.call("glob", json!({"pattern": "**/secret.txt"})).await,
        "(no matches)"
    );
}

#[tokio::test]
async fn bash_runs_through_the_registry() {
    let fx = Fixture::new();
    assert_eq!(
        fx.call("bash", json!({"command": "cat notes.txt | wc -l"}))
            .await,
        "3\n"
    );
    assert_eq!(
        fx.call("bash", json!({"command": ""})).await,
        "Error [invalid_arguments]: $.command: must be at least 1 characters"
    );
}
