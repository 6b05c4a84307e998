//! A [`Schema`] as serde writes it, and the global table that turns a
//! deserialized one into a `&'static Schema`, leaking each distinct schema
//! once (only for documents that were read successfully; see `intern_all`).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::hash::{BuildHasher, Hash, Hasher};
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::treedef::schema::{FieldSchema, FieldStyle, Schema};
use crate::treedef::{check_schema_parts, TreeDefLimits};

#[derive(Serialize, Deserialize, PartialEq, Clone, Copy)]
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

impl SchemaRepr {
    /// The reason this schema cannot describe a struct node, if any.
    pub(super) fn check(&self, limits: TreeDefLimits) -> Result<(), String> {
        let fields = self
            .fields
            .iter()
            .flat_map(|f| core::iter::once(f.name.as_str()).chain(f.kind.as_deref()));
        let names = [self.type_name.as_str(), self.module.as_str()]
            .into_iter()
            .chain(self.variant.as_deref())
            .chain(fields);
        check_schema_parts(
            &self.type_name,
            self.style == StyleRepr::Unit,
            self.fields.len(),
            names,
            limits,
        )
    }

    /// Data fields (children of a struct node) and static fields.
    pub(super) fn counts(&self) -> (usize, usize) {
        let statics = self.fields.iter().filter(|f| f.is_static).count();
        (self.fields.len() - statics, statics)
    }

    /// The name as messages print it.
    pub(super) fn display_name(&self) -> String {
        match &self.variant {
            Some(v) => alloc::format!("{}::{v}", self.type_name),
            None => self.type_name.clone(),
        }
    }

    fn content_hash(&self, state: &RandomState) -> u64 {
        let mut h = state.build_hasher();
        hash_content(
            &mut h,
            &self.type_name,
            &self.module,
            self.variant.as_deref(),
            &self.style,
            self.fields
                .iter()
                .map(|f| (f.name.as_str(), f.is_static, f.kind.as_deref())),
        );
        h.finish()
    }
}

/// Hashes a schema's content the same way whether it comes from a document
/// or from the table.
fn hash_content<'a>(
    h: &mut impl Hasher,
    type_name: &str,
    module: &str,
    variant: Option<&str>,
    style: &StyleRepr,
    fields: impl ExactSizeIterator<Item = (&'a str, bool, Option<&'a str>)>,
) {
    type_name.hash(h);
    module.hash(h);
    variant.hash(h);
    (*style as u8).hash(h);
    fields.len().hash(h);
    for field in fields {
        field.hash(h);
    }
}

fn schema_hash(schema: &Schema, state: &RandomState) -> u64 {
    let mut h = state.build_hasher();
    hash_content(
        &mut h,
        schema.type_name(),
        schema.module_path(),
        schema.variant(),
        &style_repr(schema.style()),
        schema
            .fields()
            .iter()
            .map(|f| (f.name, f.is_static, f.kind)),
    );
    h.finish()
}

/// Every schema deserialization has created, for the life of the program,
/// by the hash of its content: a lookup costs the schema's size, not the
/// table's.
struct Table {
    state: RandomState,
    by_hash: HashMap<u64, Vec<&'static Schema>>,
}

static SCHEMAS: Mutex<Option<Table>> = Mutex::new(None);

/// Leaks a string (once per distinct schema or static, see the callers).
pub(super) fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The `&'static Schema` for each repr whose `keep` flag is set (`None` for
/// the others): one made earlier with that content, or a new one leaked and
/// remembered. Called only once a document has been read and checked
/// whole, so a rejected document leaks nothing; one lock for the document.
pub(super) fn intern_all(reprs: Vec<SchemaRepr>, keep: &[bool]) -> Vec<Option<&'static Schema>> {
    let mut guard = SCHEMAS.lock().unwrap_or_else(PoisonError::into_inner);
    let table = guard.get_or_insert_with(|| Table {
        state: RandomState::new(),
        by_hash: HashMap::new(),
    });
    reprs
        .into_iter()
        .zip(keep)
        .map(|(repr, &keep)| keep.then(|| table.intern(repr)))
        .collect()
}

impl Table {
    fn intern(&mut self, repr: SchemaRepr) -> &'static Schema {
        let hash = repr.content_hash(&self.state);
        let bucket = self.by_hash.entry(hash).or_default();
        if let Some(known) = bucket.iter().find(|s| repr.describes(s)) {
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
        debug_assert_eq!(schema_hash(schema, &self.state), hash);
        bucket.push(schema);
        schema
    }
}
