use agent_prompting::{ContextError, PromptContext};
use serde_json::json;

#[derive(serde::Serialize)]
enum Mode {
    Plan,
    Edit { files: Vec<String> },
}

#[derive(serde::Serialize)]
struct Ctx {
    chapter: u8,
    modes: Vec<Mode>,
    #[serde(rename = "a key")]
    spaced: Option<f32>,
}

#[test]
fn rust_values_become_the_same_canonical_json_as_parsed_json() {
    let from_rust = PromptContext::from_serialize(&Ctx {
        chapter: 10,
        modes: vec![
            Mode::Plan,
            Mode::Edit {
                files: vec!["a.rs".into()],
            },
        ],
        spaced: None,
    })
    .unwrap();
    let from_json = PromptContext::from_value(json!({
        "modes": ["Plan", {"Edit": {"files": ["a.rs"]}}],
        "chapter": 10,
        "a key": null
    }))
    .unwrap();
    assert_eq!(from_rust, from_json);
    assert_eq!(
        from_rust.stable_json(),
        r#"{"a key":null,"chapter":10,"modes":["Plan",{"Edit":{"files":["a.rs"]}}]}"#
    );
}

#[derive(serde::Serialize)]
struct Deep {
    #[serde(rename = "a key")]
    spaced: Vec<Option<f32>>,
}

#[test]
fn paths_name_odd_keys_in_brackets() {
    let err = PromptContext::from_serialize(&Deep {
        spaced: vec![None, Some(f32::NEG_INFINITY)],
    })
    .unwrap_err();
    assert_eq!(
        err,
        ContextError::Invalid {
            path: "context[\"a key\"][1]".into(),
            reason: "-inf is not a JSON number (NaN and infinities are not allowed)".into()
        }
    );
}
