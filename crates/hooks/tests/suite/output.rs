use agent_core::Behavior;
use agent_hooks::{
    EventOutput, HookError, HookEventKind, HookOutput, PostToolUseOutput, PreToolUseOutput,
    StopOutput, UserPromptSubmitOutput,
};

/// A text answer parsed as `kind`'s output, the error as the text a hook failure shows.
fn parse(kind: HookEventKind, text: &str) -> Result<HookOutput, String> {
    HookOutput::from_text(kind, text).map_err(|e| e.to_string())
}

// Moved from agent-core (`hooks.rs`): the same answers and messages, through the typed outputs.
#[test]
fn each_field_is_accepted_only_for_its_own_event() {
    assert_eq!(
        parse(HookEventKind::PreToolUse, r#"{"block": "no"}"#),
        Ok(HookOutput::PreToolUse(PreToolUseOutput {
            block: Some("no".into()),
            ..PreToolUseOutput::default()
        }))
    );
    assert_eq!(
        parse(HookEventKind::PreToolUse, r#"{"permission": "ask"}"#),
        Ok(HookOutput::PreToolUse(PreToolUseOutput {
            permission: Some(Behavior::Ask),
            ..PreToolUseOutput::default()
        }))
    );
    assert_eq!(
        parse(HookEventKind::PreToolUse, r#"{"updated_output": "x"}"#),
        Err("`updated_output` is not a PreToolUse result field (allowed: block, permission, updated_input)".into())
    );
    assert_eq!(
        parse(HookEventKind::PostToolUse, r#"{"block": "x"}"#),
        Err("`block` is not a PostToolUse result field (allowed: updated_output, stop)".into())
    );
    assert_eq!(
        parse(HookEventKind::UserPromptSubmit, r#"{"continue_with": "x"}"#),
        Err("`continue_with` is not a UserPromptSubmit result field (allowed: block, additional_context)".into())
    );
    assert!(serde_json::from_str::<PreToolUseOutput>(r#"{"decision": "block"}"#).is_err());
}

#[test]
fn the_allowed_fields_come_from_each_output_struct() {
    assert_eq!(
        [
            UserPromptSubmitOutput::fields(),
            PreToolUseOutput::fields(),
            PostToolUseOutput::fields(),
            StopOutput::fields(),
        ],
        [
            &["block", "additional_context"][..],
            &["block", "permission", "updated_input"],
            &["updated_output", "stop"],
            &["continue_with"],
        ]
    );
}

#[test]
fn a_field_no_event_has_is_named_with_what_the_event_allows() {
    let err = HookOutput::from_text(HookEventKind::Stop, r#"{"decision": "block"}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`decision` is not a Stop result field (allowed: continue_with)"
    );
    assert!(matches!(
        err,
        HookError::FieldNotForEvent { event: HookEventKind::Stop, ref field, .. } if field == "decision"
    ));
}

#[test]
fn blank_text_is_nothing_and_a_wrong_value_type_is_invalid_json() {
    assert_eq!(parse(HookEventKind::Stop, " \n"), Ok(HookOutput::Nothing));
    assert_eq!(
        parse(HookEventKind::Stop, r#"{"continue_with": 7}"#),
        Err("answered invalid JSON (invalid type: integer `7`, expected a string)".into())
    );
    assert_eq!(
        parse(HookEventKind::Stop, "not-json"),
        Err("answered invalid JSON (expected ident at line 1 column 2)".into())
    );
}

#[test]
fn a_typed_output_fits_only_its_own_event_and_nothing_fits_all() {
    let post = HookOutput::from(PostToolUseOutput::default());
    assert_eq!(
        post.check_for(HookEventKind::PreToolUse)
            .map_err(|e| e.to_string()),
        Err("answered a PostToolUse result to a PreToolUse event".into())
    );
    assert_eq!(
        StopOutput::take(HookOutput::Nothing).unwrap(),
        StopOutput::default()
    );
    assert_eq!(
        PostToolUseOutput::take(post).unwrap(),
        PostToolUseOutput::default()
    );
}
