//! [`TrustedSource`]: the [`Source`] for a TreeDef that has already been
//! read as the same type with every record checked (`treedef/checked.rs`).
//! Leaves come straight from the iterator, without following the TreeDef's
//! runs of leaves or counting them. A struct (a reader with one
//! candidate schema) is built without looking at its record: the checked
//! read proved it is there and is a plain struct (a type that reads a
//! lone enum variant, a one-variant enum, or several plain structs as
//! candidates is never trusted: `DefSource::note_struct`). Records are read only where they hold something the type cannot
//! know (a length, an enum variant, `Some` or `None`, a map); such a read
//! skips the leaf runs and struct records before it and still checks the
//! kind it finds (one compare). So each record is passed over at most
//! once, and T1 (structs and one `Vec`) reads three. `unflatten` takes this path
//! only when the iterator's exact length equals the TreeDef's leaf count
//! (otherwise the checked path reports where the leaves run out), so the
//! state a leaf read touches is the iterator alone.
//!
//! What it relies on: an `Unflatten` impl reads a given TreeDef the same way
//! whatever the leaves' values (see the trait's docs). An impl that breaks
//! that gets errors or a wrongly shaped value, never undefined behaviour.

use alloc::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::paths::key_path::KeyEntry;
use crate::sources::def_source::{describe_candidates, read_map_keys, read_static};
use crate::sources::source::Source;
use crate::static_data::{Static, StaticValue};
use crate::treedef::describe_node;
use crate::treedef::node::NodeView;
use crate::treedef::schema::Schema;
use crate::treedef::{Record, TreeDef};

pub(crate) struct TrustedSource<'d, I> {
    def: &'d TreeDef,
    nodes: &'d [Record],
    pos: usize,
    statics: &'d [StaticValue],
    statics_pos: usize,
    leaves: I,
}

impl<'d, L, I: Iterator<Item = L>> TrustedSource<'d, I> {
    pub(crate) fn new(def: &'d TreeDef, leaves: I) -> Self {
        TrustedSource {
            def,
            nodes: def.nodes(),
            pos: 0,
            statics: def.statics(),
            statics_pos: 0,
            leaves,
        }
    }

    /// The next record that a reader asks for: past runs of leaves and
    /// past struct records, which [`struct_node`](Source::struct_node)
    /// does not read (see the module's docs).
    #[inline(always)]
    fn next_node(&mut self) -> Option<Record> {
        while let Some(node) = self.nodes.get(self.pos) {
            self.pos += 1;
            match node {
                Record::Leaves(_) => {}
                Record::Struct(schema) if schema.variant().is_none() => {}
                _ => return Some(*node),
            }
        }
        None
    }

    /// The next static value, in the order nodes own them.
    #[inline]
    fn next_static(&mut self) -> Option<&'d StaticValue> {
        let value = self.statics.get(self.statics_pos);
        self.statics_pos += 1;
        value
    }

    #[cold]
    fn mismatch(expected: &str, found: Option<Record>) -> Error {
        Error::new(ErrorKind::NodeMismatch {
            expected: expected.into(),
            found: found.map_or_else(|| "the end of the TreeDef".into(), describe_node),
        })
    }

    /// [`Source::struct_node`] for schemas that are equal but not the same
    /// static (a deserialized TreeDef), out of line.
    #[cold]
    #[inline(never)]
    fn struct_by_value(
        candidates: &[&'static Schema],
        schema: &'static Schema,
    ) -> Result<usize, Error> {
        candidates.iter().position(|c| *c == schema).ok_or_else(|| {
            let (expected, found) = describe_candidates(candidates, Some(Record::Struct(schema)));
            Error::new(ErrorKind::NodeMismatch {
                expected,
                found: found.unwrap_or_default(),
            })
        })
    }

    /// The iterator yielded fewer leaves than its length said.
    #[cold]
    fn iterator_too_short() -> Error {
        Error::custom("the leaf iterator ended before the length it reported")
    }

    /// Checks that the leaves were used up exactly (the checked read
    /// proved that the type reads the whole TreeDef).
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        let extra = self.leaves.by_ref().count();
        if extra > 0 {
            return Err(Error::new(ErrorKind::TooManyLeaves {
                expected: self.def.num_leaves(),
                found: self.def.num_leaves().saturating_add(extra),
            }));
        }
        Ok(())
    }
}

impl<L, I: Iterator<Item = L>> Source<L> for TrustedSource<'_, I> {
    #[inline(always)]
    fn leaf(&mut self) -> Result<L, Error> {
        match self.leaves.next() {
            Some(leaf) => Ok(leaf),
            None => Err(Self::iterator_too_short()),
        }
    }

    fn leaf_vec(&mut self, len: usize) -> Result<Vec<L>, Error> {
        let mut out = Vec::with_capacity(len.min(self.leaves.size_hint().0));
        out.extend(self.leaves.by_ref().take(len));
        if out.len() < len {
            return Err(Self::iterator_too_short().at(KeyEntry::Index(out.len())));
        }
        Ok(out)
    }

    #[inline(always)]
    fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error> {
        // One candidate: a plain struct (the checked read proved it: a
        // lone enum variant makes the TreeDef untrusted, see
        // `DefSource::note_struct`); its record is there, and `next_node`
        // passes over it. The slice's length is known at compile time
        // once inlined, so this costs nothing (the schema is a static of
        // another crate whose contents the optimizer cannot see).
        if candidates.len() == 1 {
            return Ok(0);
        }
        match self.next_node() {
            Some(Record::Struct(schema)) => {
                match candidates.iter().position(|c| core::ptr::eq(*c, schema)) {
                    Some(i) => Ok(i),
                    None => Self::struct_by_value(candidates, schema),
                }
            }
            other => Err(Self::mismatch("a struct", other)),
        }
    }

    fn static_field<T: Static>(&mut self) -> Result<T, Error> {
        read_static(self.next_static())
    }

    #[inline]
    fn seq_node(&mut self) -> Result<usize, Error> {
        match self.next_node() {
            Some(Record::Seq(n)) => Ok(n),
            other => Err(Self::mismatch("a sequence", other)),
        }
    }

    #[inline]
    fn tuple_node(&mut self, arity: usize) -> Result<(), Error> {
        match self.next_node() {
            Some(Record::Tuple(n)) if n == arity => Ok(()),
            other => Err(Self::mismatch("a tuple", other)),
        }
    }

    fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error> {
        let len = match self.next_node() {
            Some(Record::Map(len)) => len,
            other => return Err(Self::mismatch("a map", other)),
        };
        read_map_keys(self.next_static(), len)
    }

    #[inline]
    fn option_node(&mut self) -> Result<bool, Error> {
        match self.next_node() {
            Some(Record::Some) => Ok(true),
            Some(Record::None) => Ok(false),
            other => Err(Self::mismatch("Some(_) or None", other)),
        }
    }

    fn any_node(&mut self) -> Result<NodeView, Error> {
        // `unflatten` never trusts a TreeDef for a type that read it this
        // way (the checked read reports it), so this is not reached.
        Err(Error::custom(
            "a TreeDef trusted for its type cannot be read node by node",
        ))
    }
}
