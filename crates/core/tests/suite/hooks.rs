use agent_core::Behavior;
use agent_core::hooks::{HookEventKind, HookResult};

#[test]
fn each_field_is_accepted_only_for_its_own_event() {
    let result = |json: &str| -> HookResult { serde_json::from_str(json).unwrap() };
    assert_eq!(
        result(r#"{"block": "no"}"#).check_for(HookEventKind::PreToolUse),
        Ok(())
    );
    assert_eq!(
        result(r#"{"permission": "ask"}"#).permission,
        Some(Behavior::Ask)
    );
    assert_eq!(
        result(r#"{"updated_output": "x"}"#).check_for(HookEventKind::PreToolUse),
        Err("`updated_output` is not a PreToolUse result field (allowed: block, permission, updated_input)".into())
    );
    assert_eq!(
        result(r#"{"block": "x"}"#).check_for(HookEventKind::PostToolUse),
        Err("`block` is not a PostToolUse result field (allowed: updated_output, stop)".into())
    );
    assert_eq!(
        result(r#"{"continue_with": "x"}"#).check_for(HookEventKind::UserPromptSubmit),
        Err("`continue_with` is not a UserPromptSubmit result field (allowed: block, additional_context)".into())
    );
    assert!(serde_json::from_str::<HookResult>(r#"{"decision": "block"}"#).is_err());
}
