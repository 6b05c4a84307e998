//! [`DefSource`]: the [`Source`] that unflattening reads from, a TreeDef
//! walked in pre-order together with an iterator of leaves.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::paths::key_path::KeyEntry;
use crate::sources::source::Source;
use crate::static_data::{Static, StaticValue};
use crate::treedef::node::NodeView;
use crate::treedef::schema::Schema;
use crate::treedef::{
    describe, describe_node, view_of, Decoder, Item, Record, StaticsRange, TreeDef,
};

/// Reads a [`TreeDef`] and leaves in pre-order for
/// [`Unflatten`](crate::Unflatten).
///
/// ```
/// use pytree_std::{DefSource, Std, Unflatten};
/// let def = pytree_std::structure(&(0u8, 0u8));
/// let mut src = DefSource::new(&def, vec![1u8, 2].into_iter());
/// let t = <(u8, u8) as Unflatten<Std>>::unflatten_from(&mut src).unwrap();
/// src.finish().unwrap();
/// assert_eq!(t, (1, 2));
/// ```
pub struct DefSource<'d, I> {
    decoder: Decoder<'d>,
    leaves: I,
    /// The statics of the last node read that static fields have not
    /// taken yet.
    statics: StaticsRange,
    /// Whether the read did something the trusted path
    /// (`sources/trusted.rs`) cannot repeat, so that the TreeDef is not
    /// trusted for the type afterwards: a reader asked for
    /// [`Source::any_node`] (a dynamic tree is not a fixed function of its
    /// type), or a struct record was read where a lone candidate was an
    /// enum variant or several candidates were plain structs (the trusted
    /// path tells the records it passes over from the ones it reads by
    /// that: a plain struct is read alone, a variant among others).
    untrusted: bool,
}

impl<'d, L, I: Iterator<Item = L>> DefSource<'d, I> {
    /// A source over `def` and `leaves`.
    ///
    /// ```
    /// let def = pytree_std::TreeDef::leaf();
    /// let _src = pytree_std::DefSource::new(&def, std::iter::once(1u8));
    /// ```
    pub fn new(def: &'d TreeDef, leaves: I) -> Self {
        DefSource {
            decoder: Decoder::new(def),
            leaves,
            statics: StaticsRange::default(),
            untrusted: false,
        }
    }

    /// Whether the trusted path can repeat this read (see the field
    /// `untrusted`).
    pub(crate) fn trustable(&self) -> bool {
        !self.untrusted
    }

    /// Notes a struct record read as `candidates[index]`: the trusted
    /// path repeats the read only if a lone candidate is a plain struct
    /// and one of several is an enum variant.
    #[inline]
    fn note_struct(&mut self, candidates: &[&'static Schema], index: usize) {
        let alone = candidates.len() == 1;
        let variant = candidates.get(index).is_some_and(|c| c.variant().is_some());
        if alone == variant {
            self.untrusted = true;
        }
    }

    /// Checks that the TreeDef and the leaves were used up exactly.
    ///
    /// ```
    /// let def = pytree_std::TreeDef::leaf();
    /// let mut src = pytree_std::DefSource::new(&def, vec![1u8, 2].into_iter());
    /// assert!(src.finish().is_err()); // nothing read, a leaf left in the TreeDef
    /// ```
    pub fn finish(&mut self) -> Result<(), Error> {
        if !self.decoder.at_end() {
            return Err(Error::new(ErrorKind::NodeMismatch {
                expected: "the end of the value".to_string(),
                found: describe(self.decoder.peek()),
            }));
        }
        let extra = self.leaves.by_ref().count();
        if extra > 0 {
            return Err(Error::new(ErrorKind::TooManyLeaves {
                expected: self.decoder.def().num_leaves(),
                found: self.decoder.def().num_leaves().saturating_add(extra),
            }));
        }
        Ok(())
    }

    #[cold]
    fn mismatch(&self, expected: impl Into<String>) -> Error {
        Error::new(ErrorKind::NodeMismatch {
            expected: expected.into(),
            found: describe(self.decoder.peek()),
        })
    }

    /// Leaves ran out; `missing` of the leaves the TreeDef has handed
    /// out so far were not there.
    #[cold]
    fn too_few(&self, missing: usize) -> Error {
        Error::new(ErrorKind::TooFewLeaves {
            expected: self.decoder.def().num_leaves(),
            found: self.decoder.leaves_consumed().saturating_sub(missing),
        })
    }

    /// Reads the next internal node if `accept` takes it.
    #[inline(always)]
    fn node_if(&mut self, accept: impl FnOnce(Record) -> bool) -> Option<Record> {
        let (node, statics) = self.decoder.next_node_if(accept)?;
        self.statics = statics;
        Some(node)
    }
}

impl<L, I: Iterator<Item = L>> DefSource<'_, I> {
    /// [`Source::struct_node`] for schemas that are equal but not the same
    /// static (e.g. deserialized), and the error when none matches.
    #[cold]
    #[inline(never)]
    fn struct_node_by_value(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error> {
        let mut found = None;
        self.node_if(|node| match node {
            Record::Struct(schema) => {
                found = candidates.iter().position(|c| *c == schema);
                found.is_some()
            }
            _ => false,
        });
        found.ok_or_else(|| {
            let found = match self.decoder.peek() {
                Some(Item::Node(node, _)) => Some(node),
                _ => None,
            };
            let (expected, found_name) = describe_candidates(candidates, found);
            Error::new(ErrorKind::NodeMismatch {
                expected,
                found: found_name.unwrap_or_else(|| describe(self.decoder.peek())),
            })
        })
    }
}

/// How messages name the structs a reader accepts (`A or B`) and, when
/// `found` is a node, that node. A struct that reads like one of the
/// candidates (same name, another module) is named with module paths on
/// both sides, so the message never says "expected Bert, found Bert".
pub(crate) fn describe_candidates(
    candidates: &[&'static Schema],
    found: Option<Record>,
) -> (String, Option<String>) {
    let clash = match found {
        Some(Record::Struct(f)) => candidates.iter().any(|c| c.reads_like(f)),
        _ => false,
    };
    let name = |s: &Schema| {
        if clash {
            format!("{}", s.qualified_name())
        } else {
            format!("{}", s.display_name())
        }
    };
    let names: Vec<String> = candidates.iter().map(|c| name(c)).collect();
    let found = match found {
        Some(Record::Struct(f)) => Some(name(f)),
        Some(node) => Some(describe_node(node)),
        None => None,
    };
    (names.join(" or "), found)
}

/// A static field's value, or the error naming the type it should have.
pub(crate) fn read_static<T: Static>(value: Option<&StaticValue>) -> Result<T, Error> {
    let value = value.ok_or_else(|| Error::custom("static field missing from the TreeDef"))?;
    value.downcast_ref::<T>().cloned().ok_or_else(|| {
        Error::new(ErrorKind::StaticMismatch {
            expected: format!("a value of type {}", core::any::type_name::<T>()),
            found: format!("{value:?}"),
        })
    })
}

/// A map node's `len` keys, or the error naming the key type they should
/// have.
pub(crate) fn read_map_keys<K: Static>(
    keys: Option<&StaticValue>,
    len: usize,
) -> Result<Vec<K>, Error> {
    keys.and_then(|s| s.downcast_ref::<Vec<K>>())
        .filter(|k| k.len() == len)
        .cloned()
        .ok_or_else(|| {
            Error::new(ErrorKind::StaticMismatch {
                expected: format!("map keys of type {}", core::any::type_name::<K>()),
                found: format!("{keys:?}"),
            })
        })
}

impl<L, I: Iterator<Item = L>> Source<L> for DefSource<'_, I> {
    #[inline(always)]
    fn leaf(&mut self) -> Result<L, Error> {
        if !self.decoder.take_leaf() {
            return Err(self.mismatch("a leaf"));
        }
        match self.leaves.next() {
            Some(leaf) => Ok(leaf),
            None => Err(self.too_few(1)),
        }
    }

    fn leaf_vec(&mut self, len: usize) -> Result<Vec<L>, Error> {
        let mut out = Vec::with_capacity(len.min(self.leaves.size_hint().0));
        while out.len() < len {
            let k = self.decoder.take_leaves(len - out.len());
            if k == 0 {
                return Err(self.mismatch("a leaf").at(KeyEntry::Index(out.len())));
            }
            let before = out.len();
            out.extend(self.leaves.by_ref().take(k));
            let got = out.len() - before;
            if got < k {
                return Err(self.too_few(k - got).at(KeyEntry::Index(out.len())));
            }
        }
        Ok(out)
    }

    #[inline(always)]
    fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error> {
        // By address: schemas are statics, so this is the common case.
        let mut found = None;
        self.node_if(|node| match node {
            Record::Struct(schema) => {
                found = candidates.iter().position(|c| core::ptr::eq(*c, schema));
                found.is_some()
            }
            _ => false,
        });
        let index = match found {
            Some(i) => i,
            None => self.struct_node_by_value(candidates)?,
        };
        self.note_struct(candidates, index);
        Ok(index)
    }

    fn static_field<T: Static>(&mut self) -> Result<T, Error> {
        let value = self.decoder.statics(self.statics).first();
        self.statics.start += 1;
        read_static(value)
    }

    #[inline]
    fn seq_node(&mut self) -> Result<usize, Error> {
        match self.node_if(|n| matches!(n, Record::Seq(_))) {
            Some(Record::Seq(n)) => Ok(n),
            _ => Err(self.mismatch("a sequence")),
        }
    }

    #[inline]
    fn tuple_node(&mut self, arity: usize) -> Result<(), Error> {
        match self.node_if(|n| n == Record::Tuple(arity)) {
            Some(_) => Ok(()),
            None => Err(self.mismatch(format!("a tuple of arity {arity}"))),
        }
    }

    fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error> {
        let len = match self.node_if(|n| matches!(n, Record::Map(_))) {
            Some(Record::Map(len)) => len,
            _ => return Err(self.mismatch("a map")),
        };
        read_map_keys(self.decoder.statics(self.statics).first(), len)
    }

    #[inline]
    fn option_node(&mut self) -> Result<bool, Error> {
        match self.node_if(|n| matches!(n, Record::Some | Record::None)) {
            Some(node) => Ok(node == Record::Some),
            None => Err(self.mismatch("Some(_) or None")),
        }
    }

    fn any_node(&mut self) -> Result<NodeView, Error> {
        self.untrusted = true;
        match self.decoder.peek() {
            None => Err(self.mismatch("a node")),
            Some(Item::Leaf) => Ok(NodeView::Leaf),
            Some(Item::Node(..)) => {
                let start = self.decoder.statics_cursor();
                let Some(Item::Node(node, statics)) = self.decoder.next_item() else {
                    return Err(self.mismatch("a node"));
                };
                self.statics = StaticsRange {
                    start,
                    end: self.decoder.statics_cursor(),
                };
                Ok(view_of(node, statics))
            }
        }
    }
}
