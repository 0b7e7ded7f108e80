//! A `serde::Serializer` that builds a `serde_json::Value` like `serde_json::to_value`, but
//! refuses what plain JSON cannot hold — and says where: `context.limits[2]: NaN is not JSON`.

use serde::ser::{self, Serialize};
use serde_json::{Map, Number, Value};

use super::ContextError;

impl ser::Error for ContextError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        ContextError::Invalid {
            path: "context".into(),
            reason: msg.to_string(),
        }
    }
}

/// The serializer for one value at `path`.
pub(super) struct Checked {
    path: String,
}

impl Checked {
    pub(super) fn root() -> Self {
        Self {
            path: "context".into(),
        }
    }

    fn invalid(&self, reason: impl Into<String>) -> ContextError {
        ContextError::Invalid {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    fn field(&self, key: &str) -> Checked {
        let plain = !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_');
        let path = if plain {
            format!("{}.{key}", self.path)
        } else {
            format!("{}[{}]", self.path, Value::String(key.into()))
        };
        Checked { path }
    }

    fn index(&self, i: usize) -> Checked {
        Checked {
            path: format!("{}[{i}]", self.path),
        }
    }

    fn float(&self, x: f64) -> Result<Value, ContextError> {
        Number::from_f64(x).map(Value::Number).ok_or_else(|| {
            self.invalid(format!(
                "{x} is not a JSON number (NaN and infinities are not allowed)"
            ))
        })
    }
}

pub(super) struct Seq {
    at: Checked,
    items: Vec<Value>,
    /// For tuple variants: wrap the array in `{variant: [...]}` like serde_json does.
    variant: Option<&'static str>,
}

pub(super) struct Obj {
    at: Checked,
    map: Map<String, Value>,
    key: Option<String>,
    variant: Option<&'static str>,
}

fn wrap(variant: Option<&'static str>, value: Value) -> Value {
    match variant {
        Some(name) => {
            let mut map = Map::new();
            map.insert(name.to_string(), value);
            Value::Object(map)
        }
        None => value,
    }
}

impl ser::Serializer for Checked {
    type Ok = Value;
    type Error = ContextError;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Seq;
    type SerializeMap = Obj;
    type SerializeStruct = Obj;
    type SerializeStructVariant = Obj;

    fn serialize_bool(self, v: bool) -> Result<Value, ContextError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, ContextError> {
        Ok(Value::from(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, ContextError> {
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, ContextError> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<Value, ContextError> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, ContextError> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, ContextError> {
        Ok(Value::Array(v.iter().map(|b| Value::from(*b)).collect()))
    }
    fn serialize_none(self) -> Result<Value, ContextError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, ContextError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, ContextError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, ContextError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Value, ContextError> {
        Ok(Value::String(variant.to_string()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Value, ContextError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, ContextError> {
        let inner = value.serialize(self.field(variant))?;
        Ok(wrap(Some(variant), inner))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, ContextError> {
        Ok(Seq {
            at: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq, ContextError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq, ContextError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq, ContextError> {
        Ok(Seq {
            at: self.field(variant),
            items: Vec::with_capacity(len),
            variant: Some(variant),
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Obj, ContextError> {
        Ok(Obj {
            at: self,
            map: Map::new(),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Obj, ContextError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Obj, ContextError> {
        Ok(Obj {
            at: self.field(variant),
            map: Map::new(),
            key: None,
            variant: Some(variant),
        })
    }
}

impl Seq {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ContextError> {
        let item = value.serialize(self.at.index(self.items.len()))?;
        self.items.push(item);
        Ok(())
    }
    fn done(self) -> Value {
        wrap(self.variant, Value::Array(self.items))
    }
}

/// serde has four sequence traits with the same shape; each element goes to `push`.
macro_rules! sequence {
    ($($trait:ident :: $method:ident),+) => {$(
        impl ser::$trait for Seq {
            type Ok = Value;
            type Error = ContextError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ContextError> {
                self.push(value)
            }
            fn end(self) -> Result<Value, ContextError> {
                Ok(self.done())
            }
        }
    )+};
}

sequence!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl Obj {
    fn insert<T: Serialize + ?Sized>(
        &mut self,
        key: String,
        value: &T,
    ) -> Result<(), ContextError> {
        let item = value.serialize(self.at.field(&key))?;
        self.map.insert(key, item);
        Ok(())
    }
    fn done(self) -> Value {
        wrap(self.variant, Value::Object(self.map))
    }
}

impl ser::SerializeMap for Obj {
    type Ok = Value;
    type Error = ContextError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ContextError> {
        // Keys go through the same checks; only a string (or a number, written as its text,
        // as serde_json does) is a JSON object key.
        let key = match key.serialize(Checked {
            path: self.at.path.clone(),
        })? {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            other => {
                return Err(self.at.invalid(format!(
                    "a map key must be a string, got {}",
                    super::kind(&other)
                )));
            }
        };
        self.key = Some(key);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ContextError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| self.at.invalid("a map value came without a key"))?;
        self.insert(key, value)
    }
    fn end(self) -> Result<Value, ContextError> {
        Ok(self.done())
    }
}

/// Struct fields and struct-variant fields are both named entries of an object.
macro_rules! fields {
    ($($trait:ident),+) => {$(
        impl ser::$trait for Obj {
            type Ok = Value;
            type Error = ContextError;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), ContextError> {
                self.insert(key.to_string(), value)
            }
            fn end(self) -> Result<Value, ContextError> {
                Ok(self.done())
            }
        }
    )+};
}

fields!(SerializeStruct, SerializeStructVariant);
