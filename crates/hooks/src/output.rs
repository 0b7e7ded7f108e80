//! What a hook may answer: one output struct per event, each refusing fields it does not have.
//!
//! | event | output | fields |
//! |---|---|---|
//! | `UserPromptSubmit` | [`UserPromptSubmitOutput`] | `block`, `additional_context` |
//! | `PreToolUse` | [`PreToolUseOutput`] | `block`, `permission`, `updated_input` |
//! | `PostToolUse` | [`PostToolUseOutput`] | `updated_output`, `stop` |
//! | `Stop` | [`StopOutput`] | `continue_with` |
//!
//! A JSON answer (a shell hook's stdout) is parsed as the output of the event the hook was
//! run for, so a field of another event is an error naming it — silently ignoring it would
//! hide a misconfigured hook. Rust hooks return the typed output directly.

use agent_core::Behavior;
use agent_core::fragment::{Fragment, FragmentKind, Template};
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;

use crate::error::HookError;
use crate::event::HookEventKind;

/// What a UserPromptSubmit hook may answer.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserPromptSubmitOutput {
    /// Refuse the prompt for this reason; it is not stored.
    #[serde(default)]
    pub block: Option<String>,
    /// Added to the turn as a `<hook-context>` user message after the prompt.
    #[serde(default)]
    pub additional_context: Option<String>,
}

/// The `<hook-context>` block, laid out in its own file.
const HOOK_CONTEXT: Template =
    Template::new(FragmentKind::HookContext, include_str!("hook_context.md"));

/// A hook's `additional_context` as the model reads it: a `user` message naming the hook.
/// Neither the name (from `hooks.json`) nor the text can close the block or forge another.
pub fn hook_context(hook: &str, text: &str) -> Fragment {
    HOOK_CONTEXT
        .fill()
        .attr("source", hook)
        .text("context", text)
        .render()
}

/// What a PreToolUse hook may answer.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreToolUseOutput {
    /// Do not run the call; later hooks are skipped.
    #[serde(default)]
    pub block: Option<String>,
    /// A recommendation merged into the permission pipeline (deny > ask > allow).
    #[serde(default)]
    pub permission: Option<Behavior>,
    /// New arguments for the same call; validated again before the call runs.
    #[serde(default)]
    pub updated_input: Option<Value>,
}

/// What a PostToolUse hook may answer.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostToolUseOutput {
    /// Replaces the call's output (an error becomes this text).
    #[serde(default)]
    pub updated_output: Option<String>,
    /// End the run after this batch, for this reason.
    #[serde(default)]
    pub stop: Option<String>,
}

/// What a Stop hook may answer.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopOutput {
    /// Send this as a user message and run one more turn (honoured once per run).
    #[serde(default)]
    pub continue_with: Option<String>,
}

/// A hook's answer: the output of one event, or nothing to change.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum HookOutput {
    /// Change nothing; fits every event (a shell hook's empty stdout).
    #[default]
    Nothing,
    /// A UserPromptSubmit hook's answer.
    UserPromptSubmit(UserPromptSubmitOutput),
    /// A PreToolUse hook's answer.
    PreToolUse(PreToolUseOutput),
    /// A PostToolUse hook's answer.
    PostToolUse(PostToolUseOutput),
    /// A Stop hook's answer.
    Stop(StopOutput),
}

impl HookOutput {
    /// The event this output belongs to; `None` for [`HookOutput::Nothing`].
    pub fn event(&self) -> Option<HookEventKind> {
        match self {
            Self::Nothing => None,
            Self::UserPromptSubmit(_) => Some(HookEventKind::UserPromptSubmit),
            Self::PreToolUse(_) => Some(HookEventKind::PreToolUse),
            Self::PostToolUse(_) => Some(HookEventKind::PostToolUse),
            Self::Stop(_) => Some(HookEventKind::Stop),
        }
    }

    /// Fails when this is the output of another event than `event`.
    pub fn check_for(&self, event: HookEventKind) -> Result<(), HookError> {
        match self.event() {
            Some(answered) if answered != event => Err(HookError::WrongEvent { event, answered }),
            _ => Ok(()),
        }
    }

    /// Parses a JSON answer as the output of `event`.
    pub fn from_json(event: HookEventKind, answer: Value) -> Result<Self, HookError> {
        Ok(match event {
            HookEventKind::UserPromptSubmit => Self::UserPromptSubmit(parse(answer)?),
            HookEventKind::PreToolUse => Self::PreToolUse(parse(answer)?),
            HookEventKind::PostToolUse => Self::PostToolUse(parse(answer)?),
            HookEventKind::Stop => Self::Stop(parse(answer)?),
        })
    }

    /// Parses a text answer (a shell hook's stdout) as the output of `event`; blank text is
    /// [`HookOutput::Nothing`].
    pub fn from_text(event: HookEventKind, text: &str) -> Result<Self, HookError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Self::Nothing);
        }
        let answer =
            serde_json::from_str(text).map_err(|source| HookError::InvalidJson { source })?;
        Self::from_json(event, answer)
    }
}

/// The output struct of one event.
pub trait EventOutput: DeserializeOwned + Default + Into<HookOutput> {
    /// The event this is the output of.
    const EVENT: HookEventKind;

    /// This event's output from a hook's answer ([`HookOutput::Nothing`] is the default).
    fn take(output: HookOutput) -> Result<Self, HookError>;

    /// The JSON field names, in declaration order, read from serde's derive so that the list
    /// in an error cannot drift from what is accepted.
    fn fields() -> &'static [&'static str] {
        let mut fields = None;
        // The probe always fails after recording the names; only the names matter.
        let _ = Self::deserialize(FieldProbe(&mut fields));
        fields.unwrap_or(&[])
    }
}

macro_rules! event_output {
    ($output:ident, $event:ident) => {
        impl EventOutput for $output {
            const EVENT: HookEventKind = HookEventKind::$event;

            fn take(output: HookOutput) -> Result<Self, HookError> {
                output.check_for(Self::EVENT)?;
                Ok(match output {
                    HookOutput::$event(output) => output,
                    // `check_for` let only `Nothing` through besides this event's output.
                    _ => Self::default(),
                })
            }
        }

        impl From<$output> for HookOutput {
            fn from(output: $output) -> Self {
                Self::$event(output)
            }
        }
    };
}

event_output!(UserPromptSubmitOutput, UserPromptSubmit);
event_output!(PreToolUseOutput, PreToolUse);
event_output!(PostToolUseOutput, PostToolUse);
event_output!(StopOutput, Stop);

/// Fields are checked by name first, so the error names the stray field and what the event
/// allows; `deny_unknown_fields` stays as the guarantee behind it.
fn parse<T: EventOutput>(answer: Value) -> Result<T, HookError> {
    if let Value::Object(fields) = &answer {
        let allowed = T::fields();
        if let Some(field) = fields.keys().find(|f| !allowed.contains(&f.as_str())) {
            return Err(HookError::FieldNotForEvent {
                event: T::EVENT,
                field: field.clone(),
                allowed,
            });
        }
    }
    serde_json::from_value(answer).map_err(|source| HookError::InvalidJson { source })
}

/// A deserializer that only records the field names a derived struct asks for.
struct FieldProbe<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only structs have field names"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("field names recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}
