//! serde for [`TreeDef`] (feature `serde`), so a structure can be saved
//! beside its leaves and a typed value rebuilt from both later.
//!
//! The format is flat, one record per TreeDef record in pre-order, so a
//! TreeDef of any depth (de)serializes without recursion:
//!
//! ```json
//! {"schemas": [{"type": "Linear", "module": "my_crate", "variant": null,
//!               "style": "named", "fields": [{"name": "w", "static": false}, ...]}],
//!  "nodes": [{"seq": 2}, {"struct": {"schema": 0, "statics": []}}, {"leaves": 2}, ...]}
//! ```
//!
//! Other records: `{"tuple": n}`, `{"map": {"len": n, "keys": {"String": [..]}}}`,
//! `"some"`, `"none"`. Static values and map keys are tagged with their
//! type (`{"usize": 3}`, `{"String": "relu"}`); only `()`, `bool`, `char`,
//! the integer types, `String` and `&'static str` can be written. Other
//! static types (a user's enum, say) make serialization fail with an error
//! naming the type.
//!
//! Reading checks every record as it comes and keeps nothing of a document
//! that breaks a rule (see `read.rs`): the records must describe exactly
//! one tree, every count is checked (a document cannot overflow one), and
//! the [`TreeDefLimits`](crate::TreeDefLimits) in force bound the leaves,
//! internal nodes, depth and schemas (see there for the defaults and how to
//! raise them). An error names the record and what is wrong. Reading holds
//! about 16 bytes per record, what the TreeDef keeps.
//!
//! Deserializing a struct record needs a `&'static Schema`: each distinct
//! schema read is leaked once and kept in a global table keyed by a hash of
//! its content (as are distinct `&'static str` statics), so reading the
//! same structure again allocates nothing new, and reading costs time
//! linear in the document. Only a document that was read successfully
//! adds to the tables (and only the schemas its records use): a rejected
//! one leaks nothing. A deserialized schema is not the derive's `static`,
//! but TreeDef equality and `unflatten` compare schemas by content, so a
//! deserialized TreeDef equals the original and rebuilds the typed value.

mod read;
mod schema;
mod statics;

use alloc::vec::Vec;

use serde::ser::{Error as _, SerializeSeq, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use self::schema::SchemaRepr;
use self::statics::{KeysRepr, StaticRepr};
use crate::treedef::schema::Schema;
use crate::treedef::{Record, TreeDef};

/// One TreeDef record.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RecordRepr {
    Leaves(usize),
    Struct {
        schema: usize,
        statics: Vec<StaticRepr>,
    },
    Seq(usize),
    Tuple(usize),
    Map {
        len: usize,
        keys: KeysRepr,
    },
    Some,
    None,
}

/// Schema number by address (the derive's statics are shared), so that
/// writing is linear in the records.
type SchemaIndex = std::collections::HashMap<*const Schema, usize>;

/// The whole document, as written (`read.rs` reads it): the schemas the
/// records use, then the records. The records are written one by one as
/// they are converted (see `Records`), so writing holds the output and
/// one record's conversion, not a copy of every record.
impl Serialize for TreeDef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut schemas: Vec<&'static Schema> = Vec::new();
        let mut index_of = SchemaIndex::new();
        for node in self.nodes() {
            if let Record::Struct(schema) = *node {
                index_of.entry(schema as *const Schema).or_insert_with(|| {
                    schemas.push(schema);
                    schemas.len() - 1
                });
            }
        }
        let schemas: Vec<SchemaRepr> = schemas.into_iter().map(SchemaRepr::of).collect();
        let mut doc = serializer.serialize_struct("Repr", 2)?;
        doc.serialize_field("schemas", &schemas)?;
        doc.serialize_field(
            "nodes",
            &Records {
                def: self,
                index_of: &index_of,
            },
        )?;
        doc.end()
    }
}

/// A TreeDef's records, each converted to its [`RecordRepr`] as it is
/// written.
struct Records<'a> {
    def: &'a TreeDef,
    index_of: &'a SchemaIndex,
}

impl Serialize for Records<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.def.nodes().len()))?;
        let mut statics = self.def.statics().iter();
        for node in self.def.nodes() {
            let mut next_static = || {
                statics
                    .next()
                    .ok_or_else(|| S::Error::custom("the TreeDef's static data is incomplete"))
            };
            let record = match *node {
                Record::Leaves(n) => RecordRepr::Leaves(n),
                Record::Struct(schema) => {
                    let mut values = Vec::with_capacity(schema.num_static());
                    for _ in 0..schema.num_static() {
                        values.push(StaticRepr::of(next_static()?).map_err(S::Error::custom)?);
                    }
                    RecordRepr::Struct {
                        schema: *self
                            .index_of
                            .get(&(schema as *const Schema))
                            .ok_or_else(|| S::Error::custom("a schema was not listed"))?,
                        statics: values,
                    }
                }
                Record::Seq(n) => RecordRepr::Seq(n),
                Record::Tuple(n) => RecordRepr::Tuple(n),
                Record::Map(len) => RecordRepr::Map {
                    len,
                    keys: KeysRepr::of(next_static()?).map_err(S::Error::custom)?,
                },
                Record::Some => RecordRepr::Some,
                Record::None => RecordRepr::None,
            };
            seq.serialize_element(&record)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for TreeDef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read::read(deserializer)
    }
}
