//! A small, strict JSON-schema validator for tool arguments.
//!
//! Models send arguments that almost match; we want the mismatch told back precisely
//! (`$.todos[0].status: expected one of ...`). A full JSON-schema engine would be a heavy
//! dependency for the handful of keywords tool schemas use, so this module supports exactly
//! that subset and *refuses to register* one of our own schemas using anything else — an
//! unsupported keyword is never silently unenforced.
//!
//! Schemas written elsewhere (an MCP server's tools, chapter 19) use whatever their generator
//! emits; [`adopt`] takes them in a [`SchemaMode`] that says what happens to the keywords
//! this checker does not enforce.

mod foreign;

use serde_json::{Map, Value};

pub use foreign::{MAX_SCHEMA_DEPTH, SchemaMode, adopt};

/// Why a schema cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The whole schema is not an object.
    #[error("the schema is not a JSON object")]
    NotAnObject,
    /// The root does not describe an object (Chat Completions wants object parameters).
    #[error("the root schema must have \"type\": \"object\"")]
    RootNotObject,
    /// A nested schema is not an object.
    #[error("{at}: a schema must be an object")]
    NodeNotObject {
        /// Where.
        at: String,
    },
    /// A keyword this checker does not enforce, in a schema of our own.
    #[error("{at}: unsupported schema keyword `{keyword}`")]
    Unsupported {
        /// Where.
        at: String,
        /// The keyword.
        keyword: String,
    },
    /// `properties` is not an object.
    #[error("{at}: `properties` must be an object")]
    PropertiesNotObject {
        /// Where.
        at: String,
    },
    /// `$ref` (and the `$defs` it points into): resolving references is not supported, so a
    /// referenced constraint would go unchecked; the schema must be self-contained.
    #[error("{at}: `$ref` is not supported; the schema must be self-contained")]
    Reference {
        /// The node that holds the `$ref`.
        at: String,
    },
    /// Nested deeper than [`MAX_SCHEMA_DEPTH`]: a foreign schema is untrusted input.
    #[error("{at}: the schema nests deeper than {max} levels")]
    TooDeep {
        /// The first node past the bound.
        at: String,
        /// The bound.
        max: usize,
    },
}

/// Where a value does not match its schema, and how: the text the model reads to fix its
/// next call (`$.todos[0].status: expected one of …`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{at}: {problem}")]
pub struct Mismatch {
    /// The JSON path of the first bad value (`$`, `$.path`, `$.todos[2]`).
    pub at: String,
    /// What is wrong with it.
    pub problem: Problem,
}

/// How a value does not match.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    /// `type` does not match.
    #[error("expected {expected}, got {got}")]
    WrongType {
        /// The allowed type names, `or`-joined.
        expected: String,
        /// The value's type.
        got: &'static str,
    },
    /// Not one of `enum`.
    #[error("expected one of {options}")]
    NotOneOf {
        /// The allowed values, as JSON, comma-separated.
        options: String,
    },
    /// Shorter than `minLength` (counted in characters).
    #[error("must be at least {min} characters")]
    TooShort {
        /// The bound.
        min: u64,
    },
    /// Below `minimum`.
    #[error("must be >= {min}")]
    BelowMinimum {
        /// The bound.
        min: f64,
    },
    /// Above `maximum`.
    #[error("must be <= {max}")]
    AboveMaximum {
        /// The bound.
        max: f64,
    },
    /// A `required` field is absent.
    #[error("missing required field `{name}`")]
    MissingField {
        /// The field.
        name: String,
    },
    /// A field the schema does not name, where extra fields are not allowed.
    #[error("unknown field `{key}`")]
    UnknownField {
        /// The field.
        key: String,
    },
    /// More items than `maxItems`.
    #[error("at most {max} items allowed, got {len}")]
    TooMany {
        /// The bound.
        max: u64,
        /// The items given.
        len: u64,
    },
    /// Fewer items than `minItems`.
    #[error("at least {min} items required, got {len}")]
    TooFew {
        /// The bound.
        min: u64,
        /// The items given.
        len: u64,
    },
}

fn mismatch(at: &str, problem: Problem) -> Mismatch {
    Mismatch {
        at: at.to_string(),
        problem,
    }
}

/// The keywords this checker enforces (and `description`, which it shows).
const KNOWN_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxItems",
    "minItems",
];

/// Checks that a schema only uses keywords this validator enforces and that the root
/// describes an object (Chat Completions requires object parameters).
pub fn check_schema(schema: &Value) -> Result<(), SchemaError> {
    let root = schema.as_object().ok_or(SchemaError::NotAnObject)?;
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::RootNotObject);
    }
    check_node(schema, "$")
}

fn check_node(schema: &Value, at: &str) -> Result<(), SchemaError> {
    let node = schema
        .as_object()
        .ok_or_else(|| SchemaError::NodeNotObject { at: at.to_string() })?;
    for key in node.keys() {
        if !KNOWN_KEYWORDS.contains(&key.as_str()) {
            return Err(SchemaError::Unsupported {
                at: at.to_string(),
                keyword: key.clone(),
            });
        }
    }
    if let Some(props) = node.get("properties") {
        let props = props
            .as_object()
            .ok_or_else(|| SchemaError::PropertiesNotObject { at: at.to_string() })?;
        for (name, sub) in props {
            check_node(sub, &format!("{at}.{name}"))?;
        }
    }
    if let Some(items) = node.get("items") {
        check_node(items, &format!("{at}[]"))?;
    }
    Ok(())
}

/// Validates `value` against `schema`; the error names the path of the first bad value.
pub fn validate(schema: &Value, value: &Value) -> Result<(), Mismatch> {
    validate_at(schema, value, "$")
}

fn validate_at(schema: &Value, value: &Value, at: &str) -> Result<(), Mismatch> {
    let Some(node) = schema.as_object() else {
        return Ok(());
    };
    // `type` is one name or a list of names (`["array", "string"]`).
    let expected: Vec<&str> = match node.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !expected.is_empty() && !expected.iter().any(|t| has_type(value, t)) {
        return Err(mismatch(
            at,
            Problem::WrongType {
                expected: expected.join(" or "),
                got: type_name(value),
            },
        ));
    }
    if let Some(options) = node.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(mismatch(
            at,
            Problem::NotOneOf {
                options: list.join(", "),
            },
        ));
    }
    match value {
        Value::Object(map) => validate_object(node, map, at),
        Value::Array(items) => validate_array(node, items, at),
        Value::String(s) => {
            if let Some(min) = node.get("minLength").and_then(Value::as_u64)
                && (s.chars().count() as u64) < min
            {
                return Err(mismatch(at, Problem::TooShort { min }));
            }
            Ok(())
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = node.get("minimum").and_then(Value::as_f64)
                && x < min
            {
                return Err(mismatch(at, Problem::BelowMinimum { min }));
            }
            if let Some(max) = node.get("maximum").and_then(Value::as_f64)
                && x > max
            {
                return Err(mismatch(at, Problem::AboveMaximum { max }));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn validate_object(
    node: &Map<String, Value>,
    map: &Map<String, Value>,
    at: &str,
) -> Result<(), Mismatch> {
    let empty = Map::new();
    let props = node
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if let Some(required) = node.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                return Err(mismatch(
                    at,
                    Problem::MissingField {
                        name: name.to_string(),
                    },
                ));
            }
        }
    }
    // Strict by default: only `additionalProperties: true` allows unknown fields. A schema
    // there (foreign schemas use it) allows them too; what it says of them is not checked.
    let open = matches!(
        node.get("additionalProperties"),
        Some(Value::Bool(true) | Value::Object(_))
    );
    for (key, val) in map {
        match props.get(key) {
            Some(sub) => validate_at(sub, val, &format!("{at}.{key}"))?,
            None if open => {}
            None => {
                return Err(mismatch(at, Problem::UnknownField { key: key.clone() }));
            }
        }
    }
    Ok(())
}

fn validate_array(node: &Map<String, Value>, items: &[Value], at: &str) -> Result<(), Mismatch> {
    let len = items.len() as u64;
    if let Some(max) = node.get("maxItems").and_then(Value::as_u64)
        && len > max
    {
        return Err(mismatch(at, Problem::TooMany { max, len }));
    }
    if let Some(min) = node.get("minItems").and_then(Value::as_u64)
        && len < min
    {
        return Err(mismatch(at, Problem::TooFew { min, len }));
    }
    if let Some(item_schema) = node.get("items") {
        for (i, item) in items.iter().enumerate() {
            validate_at(item_schema, item, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => false,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn todo_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "maxItems": 2,
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "completed"]}
                        },
                        "required": ["content", "status"]
                    }
                },
                "limit": {"type": "integer", "minimum": 1},
                "either": {"type": ["array", "string"]}
            },
            "required": ["todos"]
        })
    }

    #[test]
    fn accepts_a_matching_value() {
        let value = json!({"todos": [{"content": "a", "status": "pending"}], "limit": 3});
        assert_eq!(validate(&todo_schema(), &value), Ok(()));
    }

    #[test]
    fn names_the_path_of_the_first_bad_value() {
        let cases = [
            (json!({}), "$: missing required field `todos`"),
            (json!({"todos": [], "x": 1}), "$: unknown field `x`"),
            (
                json!({"todos": [{"content": "a", "status": "done"}]}),
                "$.todos[0].status: expected one of \"pending\", \"completed\"",
            ),
            (
                json!({"todos": [{"content": 1, "status": "pending"}]}),
                "$.todos[0].content: expected string, got number",
            ),
            (
                json!({"todos": [], "limit": 1.5}),
                "$.limit: expected integer, got number",
            ),
            (json!({"todos": [], "limit": 0}), "$.limit: must be >= 1"),
            (
                json!({"todos": [], "either": null}),
                "$.either: expected array or string, got null",
            ),
            (
                json!({"todos": [{"content": "a", "status": "pending"}, {"content": "b", "status": "pending"}, {"content": "c", "status": "pending"}]}),
                "$.todos: at most 2 items allowed, got 3",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(
                validate(&todo_schema(), &value).map_err(|e| e.to_string()),
                Err(expected.to_string())
            );
        }
    }

    #[test]
    fn refuses_schemas_it_cannot_enforce() {
        assert_eq!(check_schema(&todo_schema()), Ok(()));
        assert_eq!(
            check_schema(
                &json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}})
            ),
            Err(SchemaError::Unsupported {
                at: "$.p".into(),
                keyword: "pattern".into()
            })
        );
        assert_eq!(
            SchemaError::Unsupported {
                at: "$.p".into(),
                keyword: "pattern".into()
            }
            .to_string(),
            "$.p: unsupported schema keyword `pattern`"
        );
        assert_eq!(
            check_schema(&json!({"type": "string"})),
            Err(SchemaError::RootNotObject)
        );
    }
}
