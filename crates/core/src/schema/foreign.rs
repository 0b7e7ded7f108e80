//! Schemas that come from elsewhere: an MCP server's `inputSchema` (chapter 19), written by
//! a generator (zod, pydantic, schemars) that emits keywords this checker does not enforce
//! (`$schema`, `default`, `format`, `pattern`, `anyOf`, …).
//!
//! Two ways to take one, chosen per server ([`SchemaMode`]): *sanitize* it down to the subset
//! the checker enforces, so the model is sent exactly what is checked (codex-rs does the same
//! to fit MCP schemas into its own schema type), or *pass it through* as it came, checking
//! the keywords we know and leaving the rest to the server that owns the tool. Either way a
//! `$ref` is refused (what it points to would go unchecked, and following references into a
//! hostile document is more than this checker should do) and the depth is bounded.

use serde_json::{Map, Value};

use super::{KNOWN_KEYWORDS, SchemaError, check_schema};

/// How deep a foreign schema may nest (`properties` and `items` inside each other, and any
/// keyword's value): far beyond a real tool's arguments, and the recursion stays shallow.
pub const MAX_SCHEMA_DEPTH: usize = 32;

/// Keywords whose values are data, not schemas: an object with a `$ref` key inside a
/// `default` is a value, not a reference.
const DATA_KEYWORDS: &[&str] = &["default", "examples", "example", "const", "enum"];

/// How the registry takes a tool's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaMode {
    /// The harness's own schemas: every keyword must be one the checker enforces; any other
    /// refuses the registration, so nothing is silently unenforced.
    #[default]
    Strict,
    /// A foreign schema cut down to what the checker enforces before it is registered:
    /// other keywords are removed (recursively), a schema under `additionalProperties`
    /// becomes `true`, and `true` as a schema becomes `{}`. The model sees exactly what is
    /// checked; the server may still refuse what the removed keywords described.
    Sanitize,
    /// A foreign schema registered and sent as it came: the keywords the checker knows are
    /// enforced, the others are not (the server that owns the tool enforces them).
    PassThrough,
}

/// The schema to register for `schema` in `mode`: as it is for [`SchemaMode::Strict`] (once
/// checked) and [`SchemaMode::PassThrough`], reduced for [`SchemaMode::Sanitize`].
pub fn adopt(schema: &Value, mode: SchemaMode) -> Result<Value, SchemaError> {
    match mode {
        SchemaMode::Strict => check_schema(schema).map(|()| schema.clone()),
        SchemaMode::PassThrough => {
            check_foreign_root(schema)?;
            refuse_references(schema, "$", 0)?;
            Ok(schema.clone())
        }
        SchemaMode::Sanitize => {
            check_foreign_root(schema)?;
            refuse_references(schema, "$", 0)?;
            let sanitized = sanitize_node(schema, "$")?;
            // What is left uses only enforced keywords; checked like one of our own.
            check_schema(&sanitized)?;
            Ok(sanitized)
        }
    }
}

/// Chat Completions (and MCP) want object parameters at the root.
fn check_foreign_root(schema: &Value) -> Result<(), SchemaError> {
    let root = schema.as_object().ok_or(SchemaError::NotAnObject)?;
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::RootNotObject);
    }
    Ok(())
}

/// Walks every schema-valued place of `value` (not data keywords) for a `$ref`, within
/// [`MAX_SCHEMA_DEPTH`]. Paths read like the validator's: `$.item`, `$.list[]`, and the
/// keyword for anything else (`$.x.anyOf[1]`).
fn refuse_references(value: &Value, at: &str, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(SchemaError::TooDeep {
            at: at.to_string(),
            max: MAX_SCHEMA_DEPTH,
        });
    }
    match value {
        Value::Object(node) => {
            if node.contains_key("$ref") {
                return Err(SchemaError::Reference { at: at.to_string() });
            }
            for (key, sub) in node {
                match key.as_str() {
                    "properties" => {
                        if let Some(properties) = sub.as_object() {
                            for (name, property) in properties {
                                refuse_references(property, &format!("{at}.{name}"), depth + 1)?;
                            }
                        }
                    }
                    "items" => refuse_references(sub, &format!("{at}[]"), depth + 1)?,
                    key if DATA_KEYWORDS.contains(&key) => {}
                    key => refuse_references(sub, &format!("{at}.{key}"), depth + 1)?,
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| refuse_references(item, &format!("{at}[{i}]"), depth + 1)),
        _ => Ok(()),
    }
}

/// One schema node reduced to the enforced keywords. Depth and references were checked.
fn sanitize_node(schema: &Value, at: &str) -> Result<Value, SchemaError> {
    let node = match schema {
        // `true` accepts anything: the empty schema says the same in the subset.
        Value::Bool(true) => return Ok(Value::Object(Map::new())),
        Value::Object(node) => node,
        _ => return Err(SchemaError::NodeNotObject { at: at.to_string() }),
    };
    let mut kept = Map::new();
    for (key, value) in node {
        if !KNOWN_KEYWORDS.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "properties" => {
                let properties = value
                    .as_object()
                    .ok_or_else(|| SchemaError::PropertiesNotObject { at: at.to_string() })?;
                let mut reduced = Map::new();
                for (name, property) in properties {
                    // `false`: the field may never be given; leaving it out says so (unknown
                    // fields are refused unless `additionalProperties` allows them).
                    if property == &Value::Bool(false) {
                        continue;
                    }
                    reduced.insert(
                        name.clone(),
                        sanitize_node(property, &format!("{at}.{name}"))?,
                    );
                }
                Value::Object(reduced)
            }
            "items" => sanitize_node(value, &format!("{at}[]"))?,
            // A schema for the extra fields: they are allowed, what it says is not checked.
            "additionalProperties" if value.is_object() => Value::Bool(true),
            _ => value.clone(),
        };
        kept.insert(key.clone(), value);
    }
    Ok(Value::Object(kept))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{MAX_SCHEMA_DEPTH, SchemaMode, adopt};
    use crate::schema::{SchemaError, validate};

    /// `edit_file` of the reference MCP filesystem server, as its zod schema is emitted:
    /// `$schema`, `default` and `additionalProperties: false` at two levels.
    fn filesystem_edit_file() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
                            "newText": {"type": "string", "description": "Text to replace with"}
                        },
                        "required": ["oldText", "newText"],
                        "additionalProperties": false
                    }
                },
                "dryRun": {"type": "boolean", "default": false, "description": "Preview changes using git-style diff format"}
            },
            "required": ["path", "edits"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    /// A pydantic-generated schema (FastMCP): a nested model through `$defs` and `$ref`.
    fn pydantic_with_reference() -> Value {
        json!({
            "type": "object",
            "properties": {
                "item": {"$ref": "#/$defs/Item"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "Note"}
            },
            "required": ["item"],
            "$defs": {"Item": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "title": "add_itemArguments"
        })
    }

    #[test]
    fn strict_refuses_what_a_generator_adds() {
        assert_eq!(
            adopt(&filesystem_edit_file(), SchemaMode::Strict),
            Err(SchemaError::Unsupported {
                at: "$".into(),
                keyword: "$schema".into()
            })
        );
    }

    #[test]
    fn sanitize_keeps_exactly_the_enforced_subset() {
        assert_eq!(
            adopt(&filesystem_edit_file(), SchemaMode::Sanitize),
            Ok(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "edits": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
                                "newText": {"type": "string", "description": "Text to replace with"}
                            },
                            "required": ["oldText", "newText"],
                            "additionalProperties": false
                        }
                    },
                    "dryRun": {"type": "boolean", "description": "Preview changes using git-style diff format"}
                },
                "required": ["path", "edits"],
                "additionalProperties": false
            }))
        );
    }

    #[test]
    fn pass_through_sends_it_as_it_came_and_checks_what_it_knows() {
        let schema = adopt(&filesystem_edit_file(), SchemaMode::PassThrough).unwrap();
        assert_eq!(schema, filesystem_edit_file());
        let results: Vec<Result<(), String>> = [
            json!({"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": true}),
            json!({"path": "a.txt", "edits": [{"oldText": "a"}]}),
            json!({"path": "a.txt", "edits": [], "force": true}),
        ]
        .iter()
        .map(|arguments| validate(&schema, arguments).map_err(|e| e.to_string()))
        .collect();
        assert_eq!(
            results,
            [
                Ok(()),
                Err("$.edits[0]: missing required field `newText`".into()),
                Err("$: unknown field `force`".into()),
            ]
        );
    }

    #[test]
    fn a_reference_is_refused_in_every_foreign_mode() {
        for mode in [SchemaMode::Sanitize, SchemaMode::PassThrough] {
            assert_eq!(
                adopt(&pydantic_with_reference(), mode),
                Err(SchemaError::Reference {
                    at: "$.item".into()
                })
            );
        }
        // Inside a combinator, and not inside a value.
        let nested = json!({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/X"}]}}});
        let in_data = json!({"type": "object", "properties": {"x": {"type": "object", "default": {"$ref": "not a reference"}}}});
        assert_eq!(
            (
                adopt(&nested, SchemaMode::PassThrough),
                adopt(&in_data, SchemaMode::PassThrough).map(|_| ())
            ),
            (
                Err(SchemaError::Reference {
                    at: "$.x.anyOf[1]".into()
                }),
                Ok(())
            )
        );
        assert_eq!(
            SchemaError::Reference {
                at: "$.item".into()
            }
            .to_string(),
            "$.item: `$ref` is not supported; the schema must be self-contained"
        );
    }

    #[test]
    fn sanitize_turns_schema_booleans_and_extra_field_schemas_into_the_subset() {
        let schema = json!({
            "type": "object",
            "properties": {"any": true, "never": false, "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}}},
            "additionalProperties": {"type": "string"}
        });
        assert_eq!(
            adopt(&schema, SchemaMode::Sanitize),
            Ok(json!({
                "type": "object",
                "properties": {"any": {}, "tags": {"type": "array", "items": {"type": "string"}}},
                "additionalProperties": true
            }))
        );
    }

    #[test]
    fn a_schema_nested_past_the_bound_is_refused() {
        let mut schema = json!({"type": "string"});
        for _ in 0..=MAX_SCHEMA_DEPTH {
            schema = json!({"type": "object", "properties": {"a": schema}});
        }
        let error = adopt(&schema, SchemaMode::PassThrough).unwrap_err();
        assert_eq!(
            error,
            SchemaError::TooDeep {
                at: format!("${}", ".a".repeat(MAX_SCHEMA_DEPTH + 1)),
                max: MAX_SCHEMA_DEPTH
            }
        );
    }

    #[test]
    fn the_root_must_still_be_an_object() {
        assert_eq!(
            adopt(&json!({"type": "string"}), SchemaMode::Sanitize),
            Err(SchemaError::RootNotObject)
        );
    }
}
