//! serde for [`Tree`] (feature `serde`): a tree is written as the document
//! it looks like, and any self-describing document (JSON, ...) reads back
//! as a tree:
//!
//! | document | tree |
//! | --- | --- |
//! | object | map, keys in document order |
//! | array | sequence |
//! | `null` | `None` |
//! | number, string, bool | leaf: `L` deserialized from that scalar |
//!
//! So `Tree<serde_json::Value>` reads any JSON document (each scalar a
//! `Value` leaf), `Tree<f64>` a document of numbers. Arrays are always
//! sequences (a pytree's lists are nodes), so a leaf type that is itself a
//! collection cannot be read this way.
//!
//! Floats read back exactly when the format's parser rounds correctly
//! (serde_json needs its `float_roundtrip` feature for that: its default
//! parser may read a long decimal one ulp off).
//!
//! Writing a NaN or infinite float leaf to a human-readable format is an
//! error naming its path (JSON would write `null`, which reads back as
//! `None`); binary formats keep it (the rule and why: `finite.rs`).
//!
//! A malformed document is an error naming the path (`at ["x"][1]: invalid
//! type: string "a", expected f64`) after the format's own position; a
//! repeated key is an error (no entry is dropped). serde's API is
//! recursive, so trees deeper than [`MAX_SERDE_DEPTH`] levels are refused
//! with an error rather than risking the stack (serde_json refuses such
//! documents too).

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::node::{Node, Tree};
use pytree_core::{KeyEntry, KeyPath};

/// The deepest tree serde reads or writes: the deepest nesting serde_json
/// reads back by default (it refuses 128 nested containers).
///
/// ```
/// let mut t = pytree_std::Tree::leaf(0u8);
/// for _ in 0..pytree_std::tree::MAX_SERDE_DEPTH { t = pytree_std::Tree::seq([t]); }
/// assert!(serde_json::to_string(&t).is_ok());
/// assert!(serde_json::to_string(&pytree_std::Tree::seq([t])).is_err());
/// ```
pub const MAX_SERDE_DEPTH: usize = 127;

/// One node at a path, written recursively (depth checked at the root).
struct Written<'a, 'p, L> {
    tree: &'a Tree<L>,
    path: Option<&'p Link<'p>>,
}

impl<L: Serialize> Serialize for Written<'_, '_, L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.tree.node() {
            Node::Leaf(x) => {
                // A NaN or infinity would be lost in a human-readable
                // format (see `finite.rs` for the rule and why).
                if serializer.is_human_readable() {
                    if let Some(v) = crate::finite::non_finite(x) {
                        return Err(ser::Error::custom(format_args!(
                            "at {}: {}",
                            key_path(self.path),
                            crate::finite::message(v)
                        )));
                    }
                }
                x.serialize(serializer)
            }
            Node::None => serializer.serialize_none(),
            Node::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for (i, item) in items.iter().enumerate() {
                    let link = Link {
                        parent: self.path,
                        entry: Entry::Index(i),
                    };
                    seq.serialize_element(&Written {
                        tree: item,
                        path: Some(&link),
                    })?;
                }
                seq.end()
            }
            Node::Map(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (k, v) in map.iter() {
                    let link = Link {
                        parent: self.path,
                        entry: Entry::Key(k),
                    };
                    out.serialize_entry(
                        k,
                        &Written {
                            tree: v,
                            path: Some(&link),
                        },
                    )?;
                }
                out.end()
            }
        }
    }
}

impl<L: Serialize> Serialize for Tree<L> {
    /// Writes the tree as the document it looks like (see the module
    /// docs); a tree deeper than [`MAX_SERDE_DEPTH`] is an error, and so is
    /// a NaN or infinite float leaf in a human-readable format (JSON would
    /// write `null`, which reads back as `None`); the error names its path.
    ///
    /// ```
    /// let t: pytree_std::Tree<f64> = pytree_std::tree! { "a" => 1.0, "x" => [2.5, None] };
    /// assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"a":1.0,"x":[2.5,null]}"#);
    /// let nan: pytree_std::Tree<f64> = pytree_std::tree! { "a" => 1.0, "x" => [f64::NAN] };
    /// let err = serde_json::to_string(&nan).unwrap_err();
    /// assert!(err.to_string().starts_with(r#"at ["x"][0]: the leaf NaN cannot be written"#), "{err}");
    /// ```
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let depth = self.depth();
        if depth > MAX_SERDE_DEPTH {
            return Err(ser::Error::custom(format!(
                "the tree is {depth} levels deep; serde reads and writes at most {MAX_SERDE_DEPTH}"
            )));
        }
        Written {
            tree: self,
            path: None,
        }
        .serialize(serializer)
    }
}

/// Shared by all the seeds of one deserialization: whether the error on
/// its way up already names its path.
#[derive(Default)]
struct Context {
    placed: Cell<bool>,
}

/// A step from the root, linked to its parent (no allocation per node).
struct Link<'p> {
    parent: Option<&'p Link<'p>>,
    entry: Entry<'p>,
}

enum Entry<'p> {
    Key(&'p str),
    Index(usize),
}

fn key_path(mut link: Option<&Link<'_>>) -> KeyPath {
    let mut entries = Vec::new();
    while let Some(l) = link {
        entries.push(match l.entry {
            Entry::Key(k) => KeyEntry::key(k.to_string()),
            Entry::Index(i) => KeyEntry::Index(i),
        });
        link = l.parent;
    }
    entries.reverse();
    KeyPath::from_entries(entries)
}

/// Reads one node at a path.
struct Seed<'c, 'p, L> {
    context: &'c Context,
    path: Option<&'p Link<'p>>,
    depth: usize,
    leaf: PhantomData<L>,
}

impl<'de, L: Deserialize<'de>> DeserializeSeed<'de> for Seed<'_, '_, L> {
    type Value = Tree<L>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Tree<L>, D::Error> {
        let (context, path) = (self.context, self.path);
        deserializer.deserialize_any(self).map_err(|e| {
            if context.placed.replace(true) {
                e
            } else {
                de::Error::custom(format_args!("at {}: {e}", key_path(path)))
            }
        })
    }
}

impl<'de, L: Deserialize<'de>> Seed<'_, '_, L> {
    fn leaf<E: de::Error, V: IntoDeserializer<'de, E>>(v: V) -> Result<Tree<L>, E> {
        L::deserialize(v.into_deserializer()).map(Tree::leaf)
    }

    fn check_depth<E: de::Error>(&self) -> Result<(), E> {
        if self.depth >= MAX_SERDE_DEPTH {
            return Err(E::custom(format_args!(
                "the document is deeper than {MAX_SERDE_DEPTH} levels"
            )));
        }
        Ok(())
    }
}

/// Visitor methods that read a scalar as a leaf.
macro_rules! leaf_visits {
    ($($method:ident($t:ty)),* $(,)?) => {
        $(fn $method<E: de::Error>(self, v: $t) -> Result<Tree<L>, E> {
            Self::leaf(v)
        })*
    };
}

impl<'de, L: Deserialize<'de>> Visitor<'de> for Seed<'_, '_, L> {
    type Value = Tree<L>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tree: a map, a sequence, null or a leaf")
    }

    leaf_visits!(
        visit_bool(bool),
        visit_i64(i64),
        visit_i128(i128),
        visit_u64(u64),
        visit_u128(u128),
        visit_f64(f64),
        visit_char(char),
        visit_str(&str),
        visit_string(String),
        visit_bytes(&[u8]),
    );
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Tree<L>, E> {
        L::deserialize(de::value::BorrowedStrDeserializer::new(v)).map(Tree::leaf)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Tree<L>, E> {
        Ok(Tree::none())
    }
    fn visit_none<E: de::Error>(self) -> Result<Tree<L>, E> {
        Ok(Tree::none())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree<L>, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Tree<L>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree<L>, A::Error> {
        self.check_depth()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            let link = Link {
                parent: self.path,
                entry: Entry::Index(items.len()),
            };
            let child = Seed {
                context: self.context,
                path: Some(&link),
                depth: self.depth + 1,
                leaf: PhantomData,
            };
            match seq.next_element_seed(child)? {
                Some(item) => items.push(item),
                None => return Ok(Tree::seq(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree<L>, A::Error> {
        self.check_depth()?;
        let mut entries: Vec<(String, Tree<L>)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let link = Link {
                parent: self.path,
                entry: Entry::Key(&key),
            };
            if seen.contains(&key) {
                self.context.placed.set(true);
                return Err(de::Error::custom(format_args!(
                    "at {}: the key {key:?} appears twice",
                    key_path(Some(&link))
                )));
            }
            let child = Seed {
                context: self.context,
                path: Some(&link),
                depth: self.depth + 1,
                leaf: PhantomData,
            };
            let value = map.next_value_seed(child)?;
            seen.insert(key.clone());
            entries.push((key, value));
        }
        Tree::try_dict(entries).map_err(de::Error::custom)
    }
}

impl<'de, L: Deserialize<'de>> Deserialize<'de> for Tree<L> {
    /// Reads a self-describing document (see the module docs for the
    /// mapping); errors name the path.
    ///
    /// ```
    /// use pytree_std::{tree, Tree};
    /// let t: Tree<f64> = serde_json::from_str(r#"{"a": 1, "x": [2.5, null]}"#).unwrap();
    /// assert_eq!(t, tree! { "a" => 1.0, "x" => [2.5, None] });
    /// let err = serde_json::from_str::<Tree<f64>>(r#"{"a": 1, "x": [2.5, "z"]}"#).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["x"][1]: invalid type: string "z", expected f64 at line 1 column 23"#);
    /// ```
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let context = Context::default();
        Seed {
            context: &context,
            path: None,
            depth: 0,
            leaf: PhantomData,
        }
        .deserialize(deserializer)
    }
}
