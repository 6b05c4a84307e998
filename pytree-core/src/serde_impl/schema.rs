//! A [`Schema`] as serde writes it, and the global table that turns a
//! deserialized one into a `&'static Schema`, leaking each distinct schema
//! once.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::schema::{FieldSchema, FieldStyle, Schema};

#[derive(Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum StyleRepr {
    Named,
    Tuple,
    Unit,
}

#[derive(Serialize, Deserialize)]
struct FieldRepr {
    name: String,
    #[serde(rename = "static")]
    is_static: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
}

/// A schema's content.
#[derive(Serialize, Deserialize)]
pub(super) struct SchemaRepr {
    #[serde(rename = "type")]
    type_name: String,
    module: String,
    variant: Option<String>,
    style: StyleRepr,
    fields: Vec<FieldRepr>,
}

fn style_repr(style: FieldStyle) -> StyleRepr {
    match style {
        FieldStyle::Named => StyleRepr::Named,
        FieldStyle::Tuple => StyleRepr::Tuple,
        FieldStyle::Unit => StyleRepr::Unit,
    }
}

impl SchemaRepr {
    pub(super) fn of(schema: &Schema) -> Self {
        SchemaRepr {
            type_name: schema.type_name().to_string(),
            module: schema.module_path().to_string(),
            variant: schema.variant().map(str::to_string),
            style: style_repr(schema.style()),
            fields: schema
                .fields()
                .iter()
                .map(|f| FieldRepr {
                    name: f.name.to_string(),
                    is_static: f.is_static,
                    kind: f.kind.map(str::to_string),
                })
                .collect(),
        }
    }

    /// True when `schema` has exactly this content.
    fn describes(&self, schema: &Schema) -> bool {
        schema.type_name() == self.type_name
            && schema.module_path() == self.module
            && schema.variant() == self.variant.as_deref()
            && style_repr(schema.style()) == self.style
            && schema.fields().len() == self.fields.len()
            && schema.fields().iter().zip(&self.fields).all(|(a, b)| {
                a.name == b.name && a.is_static == b.is_static && a.kind == b.kind.as_deref()
            })
    }
}

/// Every schema deserialization has created, for the life of the program.
static SCHEMAS: Mutex<Vec<&'static Schema>> = Mutex::new(Vec::new());

/// Leaks a string (once per distinct schema or static, see the callers).
pub(super) fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The `&'static Schema` with this content: one made earlier, or a new one
/// leaked and remembered.
pub(super) fn intern(repr: SchemaRepr) -> &'static Schema {
    let mut table = SCHEMAS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = table.iter().find(|s| repr.describes(s)) {
        return known;
    }
    let fields: Vec<FieldSchema> = repr
        .fields
        .into_iter()
        .map(|f| FieldSchema {
            name: leak(f.name),
            is_static: f.is_static,
            kind: f.kind.map(leak),
        })
        .collect();
    let style = match repr.style {
        StyleRepr::Named => FieldStyle::Named,
        StyleRepr::Tuple => FieldStyle::Tuple,
        StyleRepr::Unit => FieldStyle::Unit,
    };
    let schema: &'static Schema = Box::leak(Box::new(Schema::new(
        leak(repr.type_name),
        leak(repr.module),
        repr.variant.map(leak),
        style,
        Box::leak(fields.into_boxed_slice()),
    )));
    table.push(schema);
    schema
}
