//! Composing TreeDefs (JAX's `PyTreeDef.compose`: every leaf of the outer
//! structure replaced by the inner one) and the inverse for an inner
//! structure of one node of leaves (`[*, *, *]`, `(*, *)`): the transposes
//! are built on both.

use alloc::string::ToString;
use alloc::vec::Vec;

use super::align::ChildKeys;
use super::{Decoder, Item, Record, TreeDef, TreeDefBuilder};
use crate::error::{Error, ErrorKind};
use crate::treedef::display::describe_node;

/// Appends a copy of `def`'s records.
pub(super) fn copy_into(b: &mut TreeDefBuilder, def: &TreeDef) {
    let mut w = Decoder::new(def);
    loop {
        b.leaves(w.take_leaves(usize::MAX));
        match w.next_item() {
            Some(Item::Node(node, statics)) => b.raw(node, statics),
            Some(Item::Leaf) => b.leaf(),
            None => break,
        }
    }
}

impl TreeDef {
    /// The structure of a tree of `self`'s shape whose every leaf is a tree
    /// of `inner`'s shape (JAX's `compose`). It takes time and memory in
    /// proportion to the result; a result with more nodes than a `usize`
    /// counts, or an empty `inner` in place of leaves, is an error, and so
    /// is a result larger than `self`'s [output
    /// budget](crate::TreeDefLimits::output_budget) (checked before it is
    /// built: an 84-byte document of 2^32 leaves composed with a pair
    /// would need 128 GiB).
    ///
    /// ```
    /// let pair = pytree_std::structure(&(0, 0));
    /// let triple = pytree_std::structure(&vec![0, 0, 0]);
    /// assert_eq!(pair.compose(&triple)?.to_string(), "([*, *, *], [*, *, *])");
    /// assert_eq!(pair.compose(&triple)?.num_leaves(), 6);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn compose(&self, inner: &TreeDef) -> Result<TreeDef, Error> {
        if let Some(composed) = self.compose_trivially(inner)? {
            return Ok(composed);
        }
        // The result's records: `self`'s, and `inner`'s once per leaf (at
        // most; runs of leaves may merge), with `inner`'s statics too.
        let bytes = super::budget::mul_add(
            self.num_leaves(),
            inner.encoded_bytes(),
            self.encoded_bytes(),
        );
        super::budget::check_output(self, "the composed TreeDef", bytes)?;
        self.compose_within_a_tree(inner)
    }

    /// The checks both composes begin with (counts that fit a `usize`, no
    /// empty `inner` for leaves to become), and the result where `inner`
    /// is one leaf: `self`.
    fn compose_trivially(&self, inner: &TreeDef) -> Result<Option<TreeDef>, Error> {
        self.composed_counts(inner).ok_or_else(|| {
            Error::custom(alloc::format!(
                "cannot compose: {} leaves each replaced by {} nodes make more nodes than a usize counts",
                self.num_leaves(),
                inner.num_nodes()
            ))
        })?;
        if inner.is_leaf() {
            return Ok(Some(self.clone()));
        }
        if self.num_leaves() > 0 && inner.nodes().is_empty() {
            return Err(Error::custom(
                "cannot compose with the empty TreeDef: its leaves would be replaced by nothing",
            ));
        }
        Ok(None)
    }

    /// `compose` without the output budget, for callers whose result is
    /// the structure of a tree they hold (the transposes: the leaves are
    /// in memory, and the result has no more nodes than about twice the
    /// tree's).
    pub(crate) fn compose_within_a_tree(&self, inner: &TreeDef) -> Result<TreeDef, Error> {
        if let Some(composed) = self.compose_trivially(inner)? {
            return Ok(composed);
        }
        // Room for the result's records (at most `self`'s and `inner`'s
        // once per leaf; fewer where runs of leaves merge), so that it
        // does not grow by doubling.
        let records = self
            .num_leaves()
            .saturating_mul(inner.num_records())
            .saturating_add(self.num_records());
        let mut b = TreeDefBuilder::with_capacity(records);
        let mut w = Decoder::new(self);
        loop {
            for _ in 0..w.take_leaves(usize::MAX) {
                copy_into(&mut b, inner);
            }
            match w.next_item() {
                Some(Item::Node(node, statics)) => b.raw(node, statics),
                Some(Item::Leaf) => copy_into(&mut b, inner),
                None => break,
            }
        }
        Ok(b.build())
    }

    /// The number of nodes (leaves included) and of leaves of
    /// `self.compose(inner)`, if a `usize` counts them.
    pub(crate) fn composed_counts(&self, inner: &TreeDef) -> Option<(usize, usize)> {
        let internal = self.num_nodes().checked_sub(self.num_leaves())?;
        let nodes = self
            .num_leaves()
            .checked_mul(inner.num_nodes())?
            .checked_add(internal)?;
        let leaves = self.num_leaves().checked_mul(inner.num_leaves())?;
        Some((nodes, leaves))
    }

    /// Undoes `outer.compose(level)` for a `level` that is one node of
    /// leaves only (`[*, *, *]`, `(*, *)`): reads every node whose children
    /// are all leaves as one leaf of `outer`. Returns `outer` and the level
    /// node (`None` when there are no leaves). `accept` says which nodes may
    /// be the level; a leaf outside such a node, or two different level
    /// nodes, is an error naming the path.
    pub(crate) fn split_leaf_level(
        &self,
        accept: impl Fn(Record) -> bool,
        what: &str,
    ) -> Result<(TreeDef, Option<Record>), Error> {
        let mut b = TreeDefBuilder::new();
        let mut w = Decoder::new(self);
        let mut level: Option<Record> = None;
        // Open nodes: how their children are named, the child being read,
        // and their arity.
        let mut stack: Vec<(ChildKeys, usize, usize)> = Vec::new();
        let fail = |stack: &[(ChildKeys, usize, usize)], level: Option<Record>, found: &str| {
            let mut path = Vec::new();
            for (keys, next, _) in stack {
                keys.push(*next, &mut path);
            }
            let expected = match level {
                Some(node) => describe_node(node),
                None => what.to_string(),
            };
            let mut e = Error::new(ErrorKind::NodeMismatch {
                expected,
                found: found.to_string(),
            });
            for k in path.into_iter().rev() {
                e = e.at(k);
            }
            e
        };
        while let Some(item) = w.peek() {
            match item {
                Item::Leaf => return Err(fail(&stack, level, "a leaf")),
                Item::Node(node, statics) => {
                    let arity = node.arity();
                    let mut probe = w.clone();
                    probe.next_item();
                    let mut leaves = 0;
                    while leaves < arity {
                        match probe.take_leaves(arity - leaves) {
                            0 => break,
                            k => leaves += k,
                        }
                    }
                    if arity > 0 && leaves == arity {
                        if !accept(node) || level.is_some_and(|l| l != node) {
                            return Err(fail(&stack, level, &describe_node(node)));
                        }
                        level = Some(node);
                        w = probe;
                        b.leaf();
                    } else {
                        w.next_item();
                        b.raw(node, statics);
                        if arity > 0 {
                            let keys = ChildKeys::of(node, statics);
                            stack.push((keys, 0, arity));
                            continue;
                        }
                    }
                }
            }
            // One child of the innermost open node is done.
            while let Some(top) = stack.last_mut() {
                top.1 += 1;
                if top.1 < top.2 {
                    break;
                }
                stack.pop();
            }
        }
        Ok((b.build(), level))
    }
}

/// The TreeDef of `n` leaves in a sequence (`[*; n]`).
pub(crate) fn seq_of_leaves(n: usize) -> TreeDef {
    let mut b = TreeDefBuilder::new();
    b.raw(Record::Seq(n), &[]);
    b.leaves(n);
    b.build()
}

/// The TreeDef of a pair of leaves (`(*, *)`).
pub(crate) fn pair_of_leaves() -> TreeDef {
    let mut b = TreeDefBuilder::new();
    b.raw(Record::Tuple(2), &[]);
    b.leaves(2);
    b.build()
}
