//! Reading a TreeDef document in one pass over its records, holding about
//! what the TreeDef will hold. Each record is checked as it comes (when the
//! schemas came first, as they do in what this crate writes) and kept as a
//! 16-byte [`Compact`] record, the size of the record it becomes, which is
//! turned into it in place; what a struct or map record owns (statics,
//! keys) is kept beside. A document that breaks a rule or a limit keeps no
//! record past the one that broke it: the rest is only parsed (a document
//! must still be valid as a whole), and the first error is reported as if
//! the whole document had been read first. Reading a document of `none`
//! records (7 bytes each) so holds about 16 bytes per record plus the
//! buffer's growth, not the 48 bytes per record of a `Vec` of parsed
//! records followed by a second copy.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::schema::{self, SchemaRepr};
use super::statics::{KeysRepr, StaticRepr};
use super::RecordRepr;
use crate::static_data::StaticValue;
use crate::treedef::schema::{FieldStyle, Schema};
use crate::treedef::{Checker, Record, TreeDef, TreeDefLimits};

/// A record as read, its schema still a number: 16 bytes, like [`Record`].
#[derive(Clone, Copy)]
enum Compact {
    Leaves(usize),
    Struct(usize),
    Seq(usize),
    Tuple(usize),
    Map(usize),
    Some,
    None,
}

const _: () = assert!(core::mem::size_of::<Compact>() == core::mem::size_of::<Record>());
const _: () = assert!(core::mem::align_of::<Compact>() == core::mem::align_of::<Record>());

/// What a struct record (its statics) or a map record (its keys) owns.
enum Owned {
    Statics(Vec<StaticRepr>),
    Keys(KeysRepr),
}

/// What the checks need of a record.
#[derive(Clone, Copy)]
enum View {
    Leaves(usize),
    Struct {
        schema: usize,
        statics: usize,
    },
    /// A sequence, tuple, `Some` or `None` of this many children.
    Node(usize),
    Map {
        len: usize,
        keys: usize,
    },
}

impl View {
    fn of(record: &RecordRepr) -> Self {
        match record {
            RecordRepr::Leaves(n) => View::Leaves(*n),
            RecordRepr::Struct { schema, statics } => View::Struct {
                schema: *schema,
                statics: statics.len(),
            },
            RecordRepr::Seq(n) | RecordRepr::Tuple(n) => View::Node(*n),
            RecordRepr::Map { len, keys } => View::Map {
                len: *len,
                keys: keys.len(),
            },
            RecordRepr::Some => View::Node(1),
            RecordRepr::None => View::Node(0),
        }
    }
}

/// The checks of the records, for schemas already read and checked.
struct Check {
    /// Data and static fields of each schema.
    shapes: Vec<(usize, usize)>,
    used: Vec<bool>,
    checker: Checker,
}

impl Check {
    /// Checks the schemas themselves (count, names, limits).
    fn new(schemas: &[SchemaRepr], limits: TreeDefLimits) -> Result<Self, String> {
        if schemas.len() > limits.max_schemas {
            return Err(format!(
                "the TreeDef lists {} schemas, more than {}",
                schemas.len(),
                limits.max_schemas
            ));
        }
        let mut shapes = Vec::with_capacity(schemas.len());
        for (k, schema) in schemas.iter().enumerate() {
            schema
                .check(limits)
                .map_err(|e| format!("TreeDef schema {k}: {e}"))?;
            shapes.push(schema.counts());
        }
        Ok(Check {
            shapes,
            used: alloc::vec![false; schemas.len()],
            checker: Checker::new(limits),
        })
    }

    /// Checks record `i`: before it, the tree is not complete (else the
    /// error is empty: the caller counts what is left over); its schema
    /// exists and it has the schema's statics; a map has a key per entry;
    /// the counts and limits hold.
    fn record(&mut self, schemas: &[SchemaRepr], i: usize, record: View) -> Result<(), String> {
        let at = |e: String| format!("TreeDef record {i}: {e}");
        if self.checker.is_complete() {
            return Err(String::new());
        }
        match record {
            View::Leaves(n) => self.checker.leaves(n),
            View::Struct { schema, statics } => {
                let (data, num_static) = *self
                    .shapes
                    .get(schema)
                    .ok_or_else(|| at(format!("no schema number {schema}")))?;
                if statics != num_static {
                    let name = schemas.get(schema).map(SchemaRepr::display_name);
                    return Err(at(format!(
                        "{} has {num_static} static field(s), found {statics}",
                        name.unwrap_or_default()
                    )));
                }
                self.used[schema] = true;
                self.checker.node(data)
            }
            View::Node(n) => self.checker.node(n),
            View::Map { len, keys } => {
                if keys != len {
                    return Err(at(format!("a map of {len} entries with {keys} key(s)")));
                }
                self.checker.node(len)
            }
        }
        .map_err(at)
    }
}

/// The records of a document, and the first error found in them.
#[derive(Default)]
struct Records {
    nodes: Vec<Compact>,
    owned: Vec<Owned>,
    /// How many records the document lists.
    total: usize,
    /// The first error (the records after it are not kept), with the
    /// index of the record it is about when the tree was complete before
    /// it (the message then counts the records left over).
    error: Option<(String, Option<usize>)>,
}

impl Records {
    /// Keeps `record` (after checking it with `check`, if given).
    fn push(&mut self, record: RecordRepr, check: Option<(&mut Check, &[SchemaRepr])>) {
        let i = self.total;
        self.total += 1;
        if self.error.is_some() {
            return;
        }
        if let Some((check, schemas)) = check {
            if let Err(e) = check.record(schemas, i, View::of(&record)) {
                let complete_at = e.is_empty().then_some(i);
                self.error = Some((e, complete_at));
                // Nothing more is kept: the document is refused.
                self.nodes = Vec::new();
                self.owned = Vec::new();
                return;
            }
        }
        let node = match record {
            RecordRepr::Leaves(n) => Compact::Leaves(n),
            RecordRepr::Struct { schema, statics } => {
                self.owned.push(Owned::Statics(statics));
                Compact::Struct(schema)
            }
            RecordRepr::Seq(n) => Compact::Seq(n),
            RecordRepr::Tuple(n) => Compact::Tuple(n),
            RecordRepr::Map { len, keys } => {
                self.owned.push(Owned::Keys(keys));
                Compact::Map(len)
            }
            RecordRepr::Some => Compact::Some,
            RecordRepr::None => Compact::None,
        };
        self.nodes.push(node);
    }

    /// The error message, if any, as a check of the whole document gives it.
    fn error_message(&self) -> Option<String> {
        let (e, complete_at) = self.error.as_ref()?;
        Some(match complete_at {
            Some(i) => format!(
                "TreeDef record {i}: the tree is complete, {} record(s) left over",
                self.total - i
            ),
            None => e.clone(),
        })
    }
}

/// The records of the document's `nodes`, read one at a time.
struct NodesSeed<'c> {
    /// The checks, and the schemas they check against.
    check: Option<(&'c mut Check, &'c [SchemaRepr])>,
    /// Set when the schemas were refused: records are then only parsed.
    skip: bool,
}

impl<'de> DeserializeSeed<'de> for NodesSeed<'_> {
    type Value = Records;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Records, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for NodesSeed<'_> {
    type Value = Records;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of TreeDef records")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Records, A::Error> {
        let mut records = Records::default();
        if self.skip {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(records);
        }
        // Grown as records come: a length hint is the document's word.
        records.nodes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(record) = seq.next_element::<RecordRepr>()? {
            let check = self.check.as_mut().map(|(c, s)| (&mut **c, *s));
            records.push(record, check);
        }
        Ok(records)
    }
}

/// The document's fields.
enum Field {
    Schemas,
    Nodes,
    Other,
}

impl<'de> de::Deserialize<'de> for Field {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field identifier")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Field, E> {
                Ok(match v {
                    0 => Field::Schemas,
                    1 => Field::Nodes,
                    _ => Field::Other,
                })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "schemas" => Field::Schemas,
                    "nodes" => Field::Nodes,
                    _ => Field::Other,
                })
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Field, E> {
                Ok(match v {
                    b"schemas" => Field::Schemas,
                    b"nodes" => Field::Nodes,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// A whole document: `{"schemas": [...], "nodes": [...]}` in either order
/// (or a sequence of the two, in formats without field names).
struct Document;

/// What was read: the schemas, the records, and the checks: `None` if
/// the records came before the schemas (nothing is checked yet), else the
/// checks made as the records came, or the schemas' error.
struct Read {
    schemas: Vec<SchemaRepr>,
    records: Records,
    check: Option<Result<Check, String>>,
}

/// Reads `nodes` after `schemas`: checked as the records come, or only
/// parsed if the schemas are refused.
fn nodes_after_schemas<E>(
    schemas: &[SchemaRepr],
    next: impl FnOnce(NodesSeed<'_>) -> Result<Records, E>,
) -> Result<(Records, Result<Check, String>), E> {
    match Check::new(schemas, TreeDefLimits::current()) {
        Ok(mut check) => {
            let records = next(NodesSeed {
                check: Some((&mut check, schemas)),
                skip: false,
            })?;
            Ok((records, Ok(check)))
        }
        Err(e) => {
            let records = next(NodesSeed {
                check: None,
                skip: true,
            })?;
            Ok((records, Err(e)))
        }
    }
}

impl<'de> Visitor<'de> for Document {
    type Value = Read;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct Repr")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        let expected = "struct Repr with 2 elements";
        let schemas: Vec<SchemaRepr> = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &expected))?;
        let (records, check) = nodes_after_schemas(&schemas, |seed| {
            seq.next_element_seed(seed)?
                .ok_or_else(|| de::Error::invalid_length(1, &expected))
        })?;
        Ok(Read {
            schemas,
            records,
            check: Some(check),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
        let mut schemas: Option<Vec<SchemaRepr>> = None;
        let mut read: Option<(Records, Option<Result<Check, String>>)> = None;
        while let Some(key) = map.next_key::<Field>()? {
            match key {
                Field::Schemas => {
                    if schemas.is_some() {
                        return Err(de::Error::duplicate_field("schemas"));
                    }
                    schemas = Some(map.next_value()?);
                }
                Field::Nodes => {
                    if read.is_some() {
                        return Err(de::Error::duplicate_field("nodes"));
                    }
                    read = Some(match &schemas {
                        Some(list) => {
                            let (records, check) =
                                nodes_after_schemas(list, |seed| map.next_value_seed(seed))?;
                            (records, Some(check))
                        }
                        None => {
                            let seed = NodesSeed {
                                check: None,
                                skip: false,
                            };
                            (map.next_value_seed(seed)?, None)
                        }
                    });
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let schemas = schemas.ok_or_else(|| de::Error::missing_field("schemas"))?;
        let (records, check) = read.ok_or_else(|| de::Error::missing_field("nodes"))?;
        Ok(Read {
            schemas,
            records,
            check,
        })
    }
}

/// Reads a TreeDef document from `deserializer`.
pub(super) fn read<'de, D: de::Deserializer<'de>>(deserializer: D) -> Result<TreeDef, D::Error> {
    let read = deserializer.deserialize_struct("Repr", &["schemas", "nodes"], Document)?;
    read.into_treedef().map_err(de::Error::custom)
}

/// Stands in for a schema that was checked but not interned; never reached
/// (every schema a record uses is interned, see `into_treedef`).
static LOST: Schema = Schema::new("<lost>", "", None, FieldStyle::Unit, &[]);

impl Read {
    /// Finishes the checks (all of them, if the records came before the
    /// schemas), interns the schemas the records use, and turns the
    /// records into the TreeDef's in place; runs of leaves are merged as
    /// the builder merges them.
    fn into_treedef(self) -> Result<TreeDef, String> {
        let Read {
            schemas,
            mut records,
            check,
        } = self;
        let check = match check {
            Some(check) => check?,
            None => {
                // The records came first: check them now, in order.
                let mut check = Check::new(&schemas, TreeDefLimits::current())?;
                let mut owned = records.owned.iter();
                for (i, node) in records.nodes.iter().enumerate() {
                    let view = match *node {
                        Compact::Leaves(n) => View::Leaves(n),
                        Compact::Struct(schema) => View::Struct {
                            schema,
                            statics: match owned.next() {
                                Some(Owned::Statics(s)) => s.len(),
                                _ => usize::MAX,
                            },
                        },
                        Compact::Seq(n) | Compact::Tuple(n) => View::Node(n),
                        Compact::Map(len) => View::Map {
                            len,
                            keys: match owned.next() {
                                Some(Owned::Keys(k)) => k.len(),
                                _ => usize::MAX,
                            },
                        },
                        Compact::Some => View::Node(1),
                        Compact::None => View::Node(0),
                    };
                    if let Err(e) = check.record(&schemas, i, view) {
                        let complete_at = e.is_empty().then_some(i);
                        records.error = Some((e, complete_at));
                        break;
                    }
                }
                check
            }
        };
        if let Some(e) = records.error_message() {
            return Err(e);
        }
        let counts = check
            .checker
            .finish()
            .map_err(|e| format!("the TreeDef is incomplete: {e}"))?;
        build(schemas, records, &check.used, counts.leaves)
    }
}

/// The TreeDef of checked records.
fn build(
    schemas: Vec<SchemaRepr>,
    records: Records,
    used: &[bool],
    num_leaves: usize,
) -> Result<TreeDef, String> {
    let interned = schema::intern_all(schemas, used);
    for (k, u) in used.iter().enumerate() {
        if *u && interned.get(k).copied().flatten().is_none() {
            return Err(String::from("a schema was lost while reading"));
        }
    }
    let Records {
        mut nodes, owned, ..
    } = records;
    // Merge runs of leaves in place (no overflow: the checker counted
    // every leaf).
    let mut w: usize = 0;
    for r in 0..nodes.len() {
        match (nodes[r], w.checked_sub(1).map(|p| nodes[p])) {
            (Compact::Leaves(n), Some(Compact::Leaves(run))) => {
                nodes[w - 1] = Compact::Leaves(run + n);
            }
            (node, _) => {
                nodes[w] = node;
                w += 1;
            }
        }
    }
    nodes.truncate(w);
    // Same size and alignment: collected in place.
    let nodes: Vec<Record> = nodes
        .into_iter()
        .map(|c| match c {
            Compact::Leaves(n) => Record::Leaves(n),
            Compact::Struct(k) => {
                Record::Struct(interned.get(k).copied().flatten().unwrap_or(&LOST))
            }
            Compact::Seq(n) => Record::Seq(n),
            Compact::Tuple(n) => Record::Tuple(n),
            Compact::Map(n) => Record::Map(n),
            Compact::Some => Record::Some,
            Compact::None => Record::None,
        })
        .collect();
    let mut statics: Vec<StaticValue> = Vec::new();
    for o in owned {
        match o {
            Owned::Statics(values) => {
                statics.extend(values.into_iter().map(StaticRepr::into_value))
            }
            Owned::Keys(keys) => statics.push(keys.into_value()),
        }
    }
    Ok(TreeDef::from_nodes(nodes, statics, num_leaves))
}
