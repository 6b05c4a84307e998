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
//! Deserializing a struct record needs a `&'static Schema`: each distinct
//! schema read is leaked once and kept in a global table (as are distinct
//! `&'static str` statics), so reading the same structure again allocates
//! nothing new. A deserialized schema is not the derive's `static`, but
//! TreeDef equality and `unflatten` compare schemas by content, so a
//! deserialized TreeDef equals the original and rebuilds the typed value.

mod schema;
mod statics;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use self::schema::SchemaRepr;
use self::statics::{KeysRepr, StaticRepr};
use crate::schema::Schema;
use crate::treedef::{Node, TreeDef};

/// One TreeDef record.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Record {
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

/// The whole document.
#[derive(Serialize, Deserialize)]
struct Repr {
    schemas: Vec<SchemaRepr>,
    nodes: Vec<Record>,
}

impl Serialize for TreeDef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut schemas: Vec<&'static Schema> = Vec::new();
        let mut records = Vec::with_capacity(self.nodes().len());
        let mut statics = self.statics().iter();
        for node in self.nodes() {
            let mut next_static = || {
                statics
                    .next()
                    .ok_or_else(|| S::Error::custom("the TreeDef's static data is incomplete"))
            };
            records.push(match *node {
                Node::Leaves(n) => Record::Leaves(n),
                Node::Struct(schema) => {
                    let index = match schemas.iter().position(|s| *s == schema) {
                        Some(i) => i,
                        None => {
                            schemas.push(schema);
                            schemas.len() - 1
                        }
                    };
                    let mut values = Vec::with_capacity(schema.num_static());
                    for _ in 0..schema.num_static() {
                        values.push(StaticRepr::of(next_static()?).map_err(S::Error::custom)?);
                    }
                    Record::Struct {
                        schema: index,
                        statics: values,
                    }
                }
                Node::Seq(n) => Record::Seq(n),
                Node::Tuple(n) => Record::Tuple(n),
                Node::Map(len) => Record::Map {
                    len,
                    keys: KeysRepr::of(next_static()?).map_err(S::Error::custom)?,
                },
                Node::Some => Record::Some,
                Node::None => Record::None,
            });
        }
        Repr {
            schemas: schemas.into_iter().map(SchemaRepr::of).collect(),
            nodes: records,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TreeDef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Repr::deserialize(deserializer)?
            .into_treedef()
            .map_err(D::Error::custom)
    }
}

impl Repr {
    /// Checks the records (they must describe exactly one tree) and builds
    /// the TreeDef; runs of leaves are merged as the builder merges them.
    fn into_treedef(self) -> Result<TreeDef, String> {
        let schemas: Vec<&'static Schema> = self.schemas.into_iter().map(schema::intern).collect();
        let mut nodes: Vec<Node> = Vec::with_capacity(self.nodes.len());
        let mut statics = Vec::new();
        let mut num_leaves = 0usize;
        // Subtrees still to read; the records must fill exactly one.
        let mut pending = 1usize;
        let total = self.nodes.len();
        for (i, record) in self.nodes.into_iter().enumerate() {
            if pending == 0 {
                return Err(format!(
                    "TreeDef record {i}: the tree is complete, {} record(s) left over",
                    total - i
                ));
            }
            let arity = match record {
                Record::Leaves(n) => {
                    if n == 0 || n > pending {
                        return Err(format!(
                            "TreeDef record {i}: {n} leaves where 1 to {pending} subtree(s) are left"
                        ));
                    }
                    num_leaves = num_leaves
                        .checked_add(n)
                        .ok_or_else(|| format!("TreeDef record {i}: too many leaves"))?;
                    pending -= n;
                    match nodes.last_mut() {
                        Some(Node::Leaves(run)) => *run += n,
                        _ => nodes.push(Node::Leaves(n)),
                    }
                    continue;
                }
                Record::Struct {
                    schema,
                    statics: values,
                } => {
                    let s = *schemas
                        .get(schema)
                        .ok_or_else(|| format!("TreeDef record {i}: no schema number {schema}"))?;
                    if values.len() != s.num_static() {
                        return Err(format!(
                            "TreeDef record {i}: {} has {} static field(s), found {}",
                            s.display_name(),
                            s.num_static(),
                            values.len()
                        ));
                    }
                    statics.extend(values.into_iter().map(StaticRepr::into_value));
                    nodes.push(Node::Struct(s));
                    s.num_data()
                }
                Record::Seq(n) => {
                    nodes.push(Node::Seq(n));
                    n
                }
                Record::Tuple(n) => {
                    nodes.push(Node::Tuple(n));
                    n
                }
                Record::Map { len, keys } => {
                    if keys.len() != len {
                        return Err(format!(
                            "TreeDef record {i}: a map of {len} entries with {} key(s)",
                            keys.len()
                        ));
                    }
                    statics.push(keys.into_value());
                    nodes.push(Node::Map(len));
                    len
                }
                Record::Some => {
                    nodes.push(Node::Some);
                    1
                }
                Record::None => {
                    nodes.push(Node::None);
                    0
                }
            };
            pending = (pending - 1).checked_add(arity).ok_or_else(|| {
                format!("TreeDef record {i}: more subtrees than a TreeDef can hold")
            })?;
        }
        if total > 0 && pending > 0 {
            return Err(format!(
                "the TreeDef's records end with {pending} subtree(s) still to describe"
            ));
        }
        Ok(TreeDef::from_nodes(nodes, statics, num_leaves))
    }
}
