//! One node of a tree, as a walk reports it ([`NodeRef`]: its static
//! fields borrowed, no allocation per node) and as a generic reader owns it
//! ([`NodeView`]: for `Source::any_node`, `Tree`, and
//! [`TreeDef::root_node`](crate::TreeDef::root_node)). The TreeDef's own
//! encoding of a node is the private `Record`.

use alloc::vec::Vec;

use crate::paths::key_path::ErasableKey;
use crate::static_data::StaticValue;
use crate::treedef::schema::Schema;

/// A node of the tree as a traversal reports it, before its children.
///
/// ```
/// use pytree_std::NodeRef;
/// assert_eq!(NodeRef::Seq(3).arity(), 3);
/// assert_eq!(NodeRef::None.arity(), 0);
/// ```
#[derive(Clone, Copy, Debug)]
pub enum NodeRef<'s> {
    /// A derived struct or enum variant, with references to its static
    /// fields in declaration order.
    Struct {
        /// The struct or variant.
        schema: &'static Schema,
        /// Its static fields, cloned only by visitors that build a TreeDef.
        statics: &'s [&'s dyn ErasableKey],
    },
    /// A sequence (`Vec`, `VecDeque`, array, ...) of this length.
    Seq(usize),
    /// A tuple of this arity.
    Tuple(usize),
    /// A map with this many entries; its keys follow in
    /// [`Sink::map_keys`](crate::Sink::map_keys) /
    /// [`Visit::map_keys`](crate::Visit::map_keys) after the children.
    Map(usize),
    /// `Option::Some`: one child.
    Some,
    /// `Option::None`: no children.
    None,
}

impl NodeRef<'_> {
    /// Number of children.
    ///
    /// ```
    /// assert_eq!(pytree_std::NodeRef::Some.arity(), 1);
    /// ```
    pub fn arity(&self) -> usize {
        match *self {
            NodeRef::Struct { schema, .. } => schema.num_data(),
            NodeRef::Seq(n) | NodeRef::Tuple(n) | NodeRef::Map(n) => n,
            NodeRef::Some => 1,
            NodeRef::None => 0,
        }
    }
}

/// A node as [`Source::any_node`](crate::Source::any_node) reports it: its kind and the static data
/// it owns, so that a reader can rebuild any structure generically.
///
/// ```
/// use pytree_std::NodeView;
/// assert_eq!(NodeView::Seq(3).arity(), 3);
/// assert_eq!(NodeView::Leaf.arity(), 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum NodeView {
    /// The next item is a leaf (not consumed by `any_node`).
    Leaf,
    /// A derived struct or enum variant with its static fields, in
    /// declaration order (read the data fields' names from the schema).
    Struct {
        /// The struct or variant.
        schema: &'static Schema,
        /// Its static fields' values.
        statics: Vec<StaticValue>,
    },
    /// A sequence of this length.
    Seq(usize),
    /// A tuple of this arity.
    Tuple(usize),
    /// A map of `len` entries; `keys` holds them in flattening order
    /// (see [`StaticValue::item`]).
    Map {
        /// Number of entries.
        len: usize,
        /// The keys, one item each.
        keys: StaticValue,
    },
    /// `Some(_)`: one child.
    Some,
    /// `None`: no children.
    None,
}

impl NodeView {
    /// Number of children.
    ///
    /// ```
    /// assert_eq!(pytree_std::NodeView::Some.arity(), 1);
    /// ```
    pub fn arity(&self) -> usize {
        match self {
            NodeView::Struct { schema, .. } => schema.num_data(),
            NodeView::Seq(n) | NodeView::Tuple(n) => *n,
            NodeView::Map { len, .. } => *len,
            NodeView::Some => 1,
            NodeView::Leaf | NodeView::None => 0,
        }
    }
}
