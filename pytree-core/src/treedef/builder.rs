//! Building a [`TreeDef`] record by record during a walk.

use alloc::vec::Vec;

use super::{Node, TreeDef};
use crate::key_path::ErasableKey;
use crate::static_data::StaticValue;
use crate::visit::NodeRef;

/// Appends records to a TreeDef under construction; the visitors that build
/// TreeDefs own one.
///
/// ```
/// use pytree_std::{NodeRef, TreeDefBuilder};
/// let mut b = TreeDefBuilder::new();
/// b.node(NodeRef::Tuple(2));
/// b.leaf();
/// b.leaf();
/// assert_eq!(b.finish().to_string(), "(*, *)");
/// ```
#[derive(Default)]
pub struct TreeDefBuilder {
    nodes: Vec<Node>,
    statics: Vec<Option<StaticValue>>,
    pending_keys: Vec<usize>,
    num_leaves: usize,
    /// Leaves seen since the last record, written as one `Leaves(n)`
    /// record before the next internal node (so a leaf costs an increment,
    /// not a look at the last record).
    pending_leaves: usize,
}

impl TreeDefBuilder {
    /// An empty builder.
    ///
    /// ```
    /// let b = pytree_std::TreeDefBuilder::new();
    /// assert_eq!(b.finish().num_nodes(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder with room for `records` records.
    pub(crate) fn with_capacity(records: usize) -> Self {
        TreeDefBuilder {
            nodes: Vec::with_capacity(records),
            ..Self::default()
        }
    }

    /// Records one leaf (merged into the previous run of leaves).
    ///
    /// ```
    /// let mut b = pytree_std::TreeDefBuilder::new();
    /// b.leaf();
    /// assert!(b.finish().is_leaf());
    /// ```
    #[inline]
    pub fn leaf(&mut self) {
        self.leaves(1);
    }

    /// Records `n` consecutive leaves.
    ///
    /// ```
    /// let mut b = pytree_std::TreeDefBuilder::new();
    /// b.node(pytree_std::NodeRef::Seq(3));
    /// b.leaves(3);
    /// assert_eq!(b.finish().to_string(), "[*, *, *]");
    /// ```
    #[inline]
    pub fn leaves(&mut self, n: usize) {
        self.pending_leaves += n;
    }

    /// Writes the pending run of leaves as one record.
    #[inline(always)]
    fn flush_leaves(&mut self) {
        if self.pending_leaves > 0 {
            self.num_leaves += self.pending_leaves;
            self.nodes.push(Node::Leaves(self.pending_leaves));
            self.pending_leaves = 0;
        }
    }

    /// Records an internal node (cloning its static fields, if any).
    ///
    /// ```
    /// let mut b = pytree_std::TreeDefBuilder::new();
    /// b.node(pytree_std::NodeRef::None);
    /// assert_eq!(b.finish().to_string(), "None");
    /// ```
    // Always inlined: at each call site the node kind is a constant, so
    // this folds to "flush the leaf run, push one record". The rare work
    // (static fields, map key slots) is out of line.
    #[inline(always)]
    pub fn node(&mut self, node: NodeRef<'_>) {
        self.flush_leaves();
        let record = match node {
            NodeRef::Struct { schema, statics } => {
                if !statics.is_empty() {
                    self.push_statics(statics);
                }
                Node::Struct(schema)
            }
            NodeRef::Seq(n) => Node::Seq(n),
            NodeRef::Tuple(n) => Node::Tuple(n),
            NodeRef::Map(n) => {
                self.open_map();
                Node::Map(n)
            }
            NodeRef::Some => Node::Some,
            NodeRef::None => Node::None,
        };
        self.nodes.push(record);
    }

    /// Clones a struct's static fields into the statics table.
    #[inline(never)]
    fn push_statics(&mut self, statics: &[&dyn ErasableKey]) {
        self.statics.extend(statics.iter().map(|s| Some(s.erase())));
    }

    /// Reserves the statics slot that [`map_keys`](Self::map_keys) fills.
    #[inline(never)]
    fn open_map(&mut self) {
        self.pending_keys.push(self.statics.len());
        self.statics.push(None);
    }

    /// Gives the keys of the innermost map whose keys are still missing.
    ///
    /// ```
    /// use pytree_std::{NodeRef, StaticValue, TreeDefBuilder};
    /// let mut b = TreeDefBuilder::new();
    /// b.node(NodeRef::Map(1));
    /// b.leaf();
    /// b.map_keys(StaticValue::keys(vec!["a"]));
    /// assert_eq!(b.finish().to_string(), "{\"a\": *}");
    /// ```
    pub fn map_keys(&mut self, keys: StaticValue) {
        if let Some(slot) = self.pending_keys.pop() {
            self.statics[slot] = Some(keys);
        }
    }

    /// Appends a raw record with its statics (used when copying subtrees).
    pub(crate) fn raw(&mut self, node: Node, statics: &[StaticValue]) {
        match node {
            Node::Leaves(n) => self.leaves(n),
            other => {
                self.flush_leaves();
                self.statics.extend(statics.iter().cloned().map(Some));
                self.nodes.push(other);
            }
        }
    }

    /// The finished TreeDef.
    ///
    /// ```
    /// let mut b = pytree_std::TreeDefBuilder::new();
    /// b.leaf();
    /// assert_eq!(b.finish().num_leaves(), 1);
    /// ```
    pub fn finish(mut self) -> TreeDef {
        self.flush_leaves();
        // A TreeDef may be kept for long (as a cache key, say): it holds
        // exactly its records, 16 bytes each, not the slack of a grown Vec.
        // A few records are copied out, so that the whole reserved buffer
        // goes back to the allocator's cache for the next flatten (shrinking
        // it would leave a split-off remainder, slower to reuse).
        if self.nodes.len() <= 32 {
            if self.nodes.len() < self.nodes.capacity() {
                self.nodes = self.nodes.as_slice().to_vec();
            }
        } else {
            self.nodes.shrink_to_fit();
        }
        let mut statics: Vec<StaticValue> = self
            .statics
            .into_iter()
            .map(|s| s.unwrap_or_else(|| StaticValue::new(())))
            .collect();
        statics.shrink_to_fit();
        TreeDef::from_parts(self.nodes, statics, self.num_leaves)
    }
}
