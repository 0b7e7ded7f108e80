use agent_core::side_call::{
    JsonShape, SideCallError, TranscriptStyle, ask_json, json_part, request, transcript,
};
use agent_core::{Message, ModelReply, ToolCall};
use agent_test_support::{Recording, ScriptedModel};

#[test]
fn the_json_part_is_between_the_first_opening_and_the_last_closing_bracket() {
    let cases = [
        (
            "```json\n[\"a\", [\"b\"]]\n```",
            JsonShape::Array,
            "[\"a\", [\"b\"]]",
        ),
        (
            "Here: {\"k\": {\"v\": 1}} done",
            JsonShape::Object,
            "{\"k\": {\"v\": 1}}",
        ),
        // Brackets in the wrong order or missing: the trimmed reply, for the parser to name.
        ("} no summary {", JsonShape::Object, "} no summary {"),
        ("  none  ", JsonShape::Array, "none"),
        ("{\"k\": 1}", JsonShape::Array, "{\"k\": 1}"),
    ];
    for (reply, shape, part) in cases {
        assert_eq!(json_part(reply, shape), part, "{reply:?}");
    }
}

#[tokio::test]
async fn ask_json_sends_one_tool_less_request_and_parses_the_reply() {
    let model = ScriptedModel::replies([
        ModelReply::text("```json\n[\"x\"]\n```"),
        ModelReply::text("not json"),
    ])
    .recording(Recording::Requests);
    let names: Vec<String> = ask_json(&model, "  Pick.\n", "input".into(), JsonShape::Array)
        .await
        .unwrap();
    assert_eq!(names, vec!["x"]);
    let err = ask_json::<Vec<String>>(&model, "Pick.", "again".into(), JsonShape::Array)
        .await
        .unwrap_err();
    assert!(matches!(err, SideCallError::Reply(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the reply is not valid: expected ident at line 1 column 2"
    );
    assert_eq!(
        model.requests(),
        vec![
            request("Pick.", "input".into()),
            request("Pick.", "again".into())
        ]
    );
    assert_eq!(
        model.requests()[0].messages,
        vec![Message::system("Pick."), Message::user("input")]
    );
    assert!(model.requests()[0].tools.is_empty());
    model.finish().unwrap();
}

/// The two styles on the same messages, a cut exactly at the limit included (no marker).
#[test]
fn the_two_transcript_styles_side_by_side() {
    let messages = vec![
        Message::user("hi"),
        Message::Assistant {
            content: Some("ok".into()),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "glob".into(),
                arguments: "{}".into(),
            }],
        },
        Message::tool_result("c1", "y".repeat(500)),
        Message::tool_result("c1", "z".repeat(2_000)),
    ];
    assert_eq!(
        transcript(&messages, TranscriptStyle::Brief),
        format!(
            "user: hi\nassistant: ok\n  called glob {{}}\ntool result: {}\ntool result: {}",
            "y".repeat(500),
            "z".repeat(500)
        )
    );
    assert_eq!(
        transcript(&messages, TranscriptStyle::Detailed),
        format!(
            "user: hi\nassistant: ok\nassistant called glob {{}}\ntool result [c1]: {}\ntool result [c1]: {}",
            "y".repeat(500),
            "z".repeat(2_000)
        )
    );
}
