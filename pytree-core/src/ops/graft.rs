//! Building a tree from a TreeDef whose leaves are replaced by whole
//! subtrees: the values a function returns may themselves be pytrees (an
//! `Option`, a tuple), and they take the place of the leaves they were
//! computed for, as in JAX's `tree_map` with a function that returns
//! pytrees. The multi-tree maps, the prefix maps and `rise` build their
//! results this way, in one pass and without a TreeDef per value.

use alloc::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::static_data::StaticValue;
use crate::traits::flatten::Flatten;
use crate::traits::visit::Sink;
use crate::treedef::node::NodeRef;
use crate::treedef::{Decoder, Item, TreeDef, TreeDefBuilder};

/// Appends a value's nodes and leaves to the result under construction.
struct GraftSink<'a, L> {
    leaves: &'a mut Vec<L>,
    def: &'a mut TreeDefBuilder,
}

impl<L> Sink<L> for GraftSink<'_, L> {
    #[inline]
    fn leaf(&mut self, leaf: L) {
        self.leaves.push(leaf);
        self.def.leaf();
    }
    #[inline]
    fn leaf_vec(&mut self, mut leaves: Vec<L>) {
        self.def.leaves(leaves.len());
        self.leaves.append(&mut leaves);
    }
    #[inline]
    fn node(&mut self, node: NodeRef<'_>) {
        self.def.node(node);
    }
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.def.map_keys(keys());
    }
}

/// The leaves and TreeDef of the tree that has `def`'s nodes, with leaf
/// `i` replaced by `values[i]` (a leaf or a whole subtree). Errors when
/// there are fewer or more values than `def` has leaves.
pub(crate) fn graft<Ns, V: Flatten<Ns>>(
    def: &TreeDef,
    values: impl IntoIterator<Item = V>,
) -> Result<(Vec<V::Leaf>, TreeDef), Error> {
    let mut leaves = Vec::new();
    let mut builder = TreeDefBuilder::new();
    let mut values = values.into_iter();
    let mut used = 0;
    let mut decoder = Decoder::new(def);
    while let Some(item) = decoder.next_item() {
        match item {
            Item::Node(node, statics) => builder.raw(node, statics),
            Item::Leaf => {
                let value = values.next().ok_or_else(|| {
                    Error::new(ErrorKind::TooFewLeaves {
                        expected: def.num_leaves(),
                        found: used,
                    })
                })?;
                used += 1;
                value.flatten_into(&mut GraftSink {
                    leaves: &mut leaves,
                    def: &mut builder,
                });
            }
        }
    }
    let extra = values.count();
    if extra > 0 {
        return Err(Error::new(ErrorKind::TooManyLeaves {
            expected: def.num_leaves(),
            found: used + extra,
        }));
    }
    Ok((leaves, builder.build()))
}
