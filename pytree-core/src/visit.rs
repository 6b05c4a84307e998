//! The callbacks a traversal drives. Every [`Flatten`](crate::Flatten) impl
//! walks its value in pre-order and reports to one of these:
//! a [`Sink`] takes leaves by value (flatten), a [`Visit`] by reference
//! (leaves, structure, paths), a [`VisitMut`] by mutable reference (in-place
//! updates). Operations are visitors; the derive writes the walks once.
//!
//! Every method but the leaf callback has an empty default, so a visitor that
//! ignores structure or paths compiles to a plain loop over the leaves.

use alloc::vec::Vec;

use crate::key_path::{ErasableKey, KeyRef};
use crate::schema::Schema;
use crate::static_data::StaticValue;

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
    /// [`Sink::map_keys`] / [`Visit::map_keys`] after the children.
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

/// Receives a tree's leaves by value, in pre-order (the consuming walk).
///
/// ```
/// use pytree_std::{Flatten, Sink, Std};
/// struct Sum(f32);
/// impl Sink<f32> for Sum { fn leaf(&mut self, leaf: f32) { self.0 += leaf } }
/// let mut s = Sum(0.0);
/// Flatten::<Std>::flatten_into(vec![1.0f32, 2.0], &mut s);
/// assert_eq!(s.0, 3.0);
/// ```
pub trait Sink<L> {
    /// One leaf.
    fn leaf(&mut self, leaf: L);
    /// The elements of a sequence whose elements are leaves, at once.
    fn leaf_vec(&mut self, leaves: Vec<L>) {
        for (i, leaf) in leaves.into_iter().enumerate() {
            self.enter(KeyRef::Index(i));
            self.leaf(leaf);
            self.exit();
        }
    }
    /// A node, before its children.
    fn node(&mut self, _node: NodeRef<'_>) {}
    /// The keys of the most recent map whose keys are not yet given, after
    /// its children. Only visitors that build a TreeDef call `keys`.
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, _keys: F) {}
    /// The walk goes down to a child.
    fn enter(&mut self, _key: KeyRef<'_>) {}
    /// The walk comes back from the child last entered.
    fn exit(&mut self) {}
}

/// Receives a tree's leaves by shared reference, in pre-order.
///
/// ```
/// use pytree_std::{Flatten, Std, Visit};
/// struct Count(usize);
/// impl<'a> Visit<'a, f32> for Count { fn leaf(&mut self, _: &'a f32) { self.0 += 1 } }
/// let mut c = Count(0);
/// Flatten::<Std>::visit(&(1.0f32, vec![2.0f32, 3.0]), &mut c);
/// assert_eq!(c.0, 3);
/// ```
pub trait Visit<'a, L> {
    /// One leaf.
    fn leaf(&mut self, leaf: &'a L);
    /// The elements of a sequence whose elements are leaves, at once.
    fn leaf_slice(&mut self, leaves: &'a [L]) {
        for (i, leaf) in leaves.iter().enumerate() {
            self.enter(KeyRef::Index(i));
            self.leaf(leaf);
            self.exit();
        }
    }
    /// A node, before its children.
    fn node(&mut self, _node: NodeRef<'_>) {}
    /// The keys of the most recent map whose keys are not yet given.
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, _keys: F) {}
    /// The walk goes down to a child.
    fn enter(&mut self, _key: KeyRef<'_>) {}
    /// The walk comes back from the child last entered.
    fn exit(&mut self) {}
}

/// Receives a tree's leaves by mutable reference, in pre-order.
///
/// ```
/// use pytree_std::{Flatten, Std, VisitMut};
/// struct Double;
/// impl VisitMut<f32> for Double { fn leaf(&mut self, x: &mut f32) { *x *= 2.0 } }
/// let mut t = (1.0f32, Some(2.0f32));
/// Flatten::<Std>::visit_mut(&mut t, &mut Double);
/// assert_eq!(t, (2.0, Some(4.0)));
/// ```
pub trait VisitMut<L> {
    /// One leaf.
    fn leaf(&mut self, leaf: &mut L);
    /// The elements of a sequence whose elements are leaves, at once.
    fn leaf_slice(&mut self, leaves: &mut [L]) {
        for (i, leaf) in leaves.iter_mut().enumerate() {
            self.enter(KeyRef::Index(i));
            self.leaf(leaf);
            self.exit();
        }
    }
    /// A node, before its children.
    fn node(&mut self, _node: NodeRef<'_>) {}
    /// The walk goes down to a child.
    fn enter(&mut self, _key: KeyRef<'_>) {}
    /// The walk comes back from the child last entered.
    fn exit(&mut self) {}
}
