//! The prompt context: a small JSON object (chapter number, mode, …) rendered into the identity
//! section and into the cache key.
//!
//! Because the same canonical text is both shown and used as the cache key, the context must
//! be plain JSON: an object at the root; values recursively scalar, array or object. Anything
//! else — NaN and infinities (which `serde_json` would quietly turn into `null`), map keys
//! that are not strings, a root that is not an object — is rejected with the path of the bad
//! value (`context.a[2]`) before any cache is touched. A `"__proto__"` key is an ordinary key.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Number, Value};

mod checked;

/// Why a context was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// The root is not a JSON object.
    #[error("context must be a JSON object, got {found}")]
    NotAnObject {
        /// What it is instead ("an array", "null", …).
        found: &'static str,
    },
    /// A value inside is not plain JSON.
    #[error("{path}: {reason}")]
    Invalid {
        /// Where: `context.a[2]`.
        path: String,
        /// Why it was rejected.
        reason: String,
    },
}

/// A validated context, kept in canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptContext {
    value: Map<String, Value>,
    stable: String,
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl PromptContext {
    /// From parsed JSON.
    pub fn from_value(value: Value) -> Result<Self, ContextError> {
        match value {
            Value::Object(map) => Ok(Self {
                stable: stable_json(&Value::Object(map.clone())),
                value: map,
            }),
            other => Err(ContextError::NotAnObject {
                found: kind(&other),
            }),
        }
    }

    /// From any Rust value, checked on the way: NaN, infinities and non-string map keys are
    /// errors naming their path, never silently turned into something else.
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Result<Self, ContextError> {
        let value = value.serialize(checked::Checked::root())?;
        Self::from_value(value)
    }

    /// The canonical text: keys sorted by code point, compact, non-ASCII kept as is.
    pub fn stable_json(&self) -> &str {
        &self.stable
    }

    /// The context as a JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.value
    }
}

impl Serialize for PromptContext {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

/// Stable JSON, written by hand so key order never depends on how `serde_json::Map` is built
/// (its order changes if any crate in the build enables `preserve_order`).
pub fn stable_json(value: &Value) -> String {
    let mut out = String::new();
    write_stable(value, &mut out);
    out
}

fn write_stable(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // Rust's `str` ordering is byte order, which for UTF-8 is code point order.
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, val)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_stable(val, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_stable(item, out);
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        Value::Number(n) => write_number(n, out),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

fn write_number(n: &Number, out: &mut String) {
    let _ = write!(out, "{n}");
}

/// JSON string escaping that keeps non-ASCII characters as they are.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stable_json_sorts_keys_keeps_non_ascii_and_escapes_controls() {
        let value = json!({"b": 1, "a": {"z": [true, null, 1.5], "é": "日本\n\"x\""}, "A": -2});
        assert_eq!(
            stable_json(&value),
            "{\"A\":-2,\"a\":{\"z\":[true,null,1.5],\"é\":\"日本\\n\\\"x\\\"\"},\"b\":1}"
        );
    }
}
