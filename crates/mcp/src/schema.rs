//! [`ArgumentSchema`]: a server's `inputSchema`, compiled once when its tool list is taken,
//! that every call's arguments are checked against before anything is sent.
//!
//! The registry's own checker (`agent_core::schema`) enforces the subset a model is shown; this
//! is the full JSON Schema (drafts 4 to 2020-12, 2020-12 when the schema names none, as MCP
//! says), by `boon`. Two properties matter more than the dialect:
//! - nothing outside the document is ever read: the loader knows no scheme, so a `$ref` to a
//!   file or an address is a compile error, not a file read or a request;
//! - a server's `pattern` runs on the `regex` crate, whose matching time is linear in the
//!   input, so a server cannot hand us a pattern that stalls a call (a look-around, which
//!   `regex` cannot run, makes the schema, and so the server's tool list, refused).

use boon::{CompileError, Compiler, Draft, ErrorKind, SchemaIndex, Schemas, SchemeUrlLoader};
use serde_json::Value;

/// The name the schema is compiled under; it appears in nothing the model reads.
const LOCATION: &str = "urn:agent-tutorial:mcp-input-schema";

/// A server's input schema, compiled: cheap to share, checked with [`ArgumentSchema::check`].
pub(crate) struct ArgumentSchema {
    schemas: Schemas,
    index: SchemaIndex,
}

impl ArgumentSchema {
    /// Compiles `schema`, or says in one line why it is not one (invalid against its
    /// dialect's metaschema, a reference out of the document, a pattern `regex` cannot run).
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let mut compiler = Compiler::new();
        // No scheme registered: the default loader would read `file://` references.
        compiler.use_loader(Box::new(SchemeUrlLoader::new()));
        compiler.set_default_draft(Draft::V2020_12);
        let refused = |error: CompileError| one_line(&compile_reason(&error));
        compiler
            .add_resource(LOCATION, schema.clone())
            .map_err(refused)?;
        let mut schemas = Schemas::new();
        let index = compiler.compile(LOCATION, &mut schemas).map_err(refused)?;
        Ok(Self { schemas, index })
    }

    /// The first mismatch of `arguments`, as `<JSON pointer>: <what is wrong>` (`/` for the
    /// whole object), or nothing.
    pub(crate) fn check(&self, arguments: &Value) -> Result<(), String> {
        self.schemas
            .validate(arguments, self.index)
            .map_err(|error| one_line(&describe(&error)))
    }
}

/// `text` on one line: a regex error, or a value quoted in a message, can span several.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why a schema did not compile, in one line: for a schema its metaschema refuses, the first
/// place it is wrong rather than "not valid against metaschema".
fn compile_reason(error: &CompileError) -> String {
    match error {
        CompileError::ValidationError { src, .. } => {
            format!("it is not a valid JSON Schema: {}", describe(src))
        }
        CompileError::LoadUrlError { url, .. } => {
            format!("it refers to `{url}`, outside the schema, which is never fetched")
        }
        other => other.to_string(),
    }
}

/// One line for a validation error: the first concrete failure under the wrappers (the
/// schema, a `$ref`, an `allOf`). An `anyOf`/`oneOf` is reported as itself: which of its
/// branches' failures to show would be a guess.
fn describe(error: &boon::ValidationError<'_, '_>) -> String {
    let mut at = error;
    while matches!(
        at.kind,
        ErrorKind::Group
            | ErrorKind::Schema { .. }
            | ErrorKind::Reference { .. }
            | ErrorKind::AllOf
    ) {
        match at.causes.first() {
            Some(cause) => at = cause,
            None => break,
        }
    }
    let pointer = at.instance_location.to_string();
    let pointer = if pointer.is_empty() { "/" } else { &pointer };
    format!("{pointer}: {}", at.kind)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ArgumentSchema;

    /// Nothing out of the document is resolved: a reference to an address or a file is an
    /// error when the schema is compiled, never a request or a file read (the registry's
    /// checker refuses every `$ref` before this, but the validator must not fetch whatever
    /// reaches it). A reference inside the document works.
    #[test]
    fn references_out_of_the_document_are_refused_and_local_ones_work() {
        let refused: Vec<String> = ["https://example.com/schema.json", "file:///etc/passwd"]
            .into_iter()
            .map(|target| {
                let schema = json!({"type": "object", "properties": {"x": {"$ref": target}}});
                ArgumentSchema::compile(&schema).err().unwrap_or_default()
            })
            .collect();
        assert_eq!(
            refused,
            [
                "it refers to `https://example.com/schema.json`, outside the schema, which is never fetched",
                "it refers to `file:///etc/passwd`, outside the schema, which is never fetched",
            ]
        );
        let local = ArgumentSchema::compile(&json!({
            "type": "object",
            "$defs": {"n": {"type": "integer"}},
            "properties": {"x": {"$ref": "#/$defs/n"}}
        }))
        .unwrap();
        assert_eq!(
            (
                local.check(&json!({"x": 1})),
                local.check(&json!({"x": "a"}))
            ),
            (Ok(()), Err("/x: want integer, but got string".to_string()))
        );
    }

    /// A schema its dialect refuses, and a pattern the linear-time engine cannot run, are
    /// refused with the place that is wrong.
    #[test]
    fn an_invalid_schema_says_where() {
        let reasons: Vec<String> = [
            json!({"type": "object", "properties": {"x": {"minLength": -1}}}),
            json!({"type": "object", "properties": {"x": {"pattern": "(?<=a)b"}}}),
        ]
        .iter()
        .map(|schema| ArgumentSchema::compile(schema).err().unwrap_or_default())
        .collect();
        assert_eq!(
            reasons,
            [
                "it is not a valid JSON Schema: /properties/x/minLength: must be >=0, but got -1",
                "it is not a valid JSON Schema: /properties/x/pattern: '(?<=a)b' is not valid regex: regex parse error: (?<=a)b ^^^^ error: look-around, including look-ahead and look-behind, is not supported",
            ]
        );
    }

    /// The dialect a schema names is the one it is checked in (draft 7's `dependencies`), and
    /// a combinator is reported as itself, not as one of its branches.
    #[test]
    fn the_named_dialect_is_used_and_a_one_of_is_reported_whole() {
        let draft7 = ArgumentSchema::compile(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "dependencies": {"a": ["b"]},
            "properties": {"o": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}
        }))
        .unwrap();
        assert_eq!(
            [
                draft7.check(&json!({"a": 1})),
                draft7.check(&json!({"o": 1.5})),
                draft7.check(&json!({"a": 1, "b": 2, "o": "s"})),
            ],
            [
                Err("/: properties 'b' required, if 'a' property exists".to_string()),
                Err("/o: oneOf failed, none matched".to_string()),
                Ok(()),
            ]
        );
    }
}
