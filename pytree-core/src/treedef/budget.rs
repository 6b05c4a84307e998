//! The output budget of the readers of a TreeDef (see
//! [`TreeDefLimits::output_budget`]): a reader works out the bytes its
//! result needs from the records alone, and says no, naming the budget,
//! before it allocates them.

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

use super::{Record, TreeDef, TreeDefLimits};
use crate::error::Error;
use crate::static_data::StaticValue;

impl TreeDef {
    /// Bytes of this TreeDef's encoding: 16 per record plus its statics
    /// table (what a document of it holds, give or take the text around
    /// it). The readers' memory budget is a multiple of it (see
    /// [`TreeDefLimits::output_budget`]).
    ///
    /// ```
    /// assert_eq!(pytree_std::structure(&vec![0u8; 1000]).encoded_bytes(), 32);
    /// ```
    pub fn encoded_bytes(&self) -> usize {
        self.num_records()
            .saturating_mul(core::mem::size_of::<Record>())
            .saturating_add(
                self.statics()
                    .len()
                    .saturating_mul(core::mem::size_of::<StaticValue>()),
            )
    }

    /// The most internal nodes on one path from the root to a leaf, from
    /// the records (a run of leaves is one step), with `O(depth)` memory.
    pub(crate) fn node_depth(&self) -> usize {
        // Children still to come of each open node, innermost last.
        let mut open: Vec<usize> = Vec::new();
        let mut deepest = 0;
        for node in self.nodes() {
            let mut slots = match *node {
                Record::Leaves(n) => n,
                _ => 1,
            };
            // The node (or run) fills slots of the open nodes, innermost
            // first; a node whose slots are all filled is closed when the
            // next record comes (its last child may be the record just
            // read, which is still inside it).
            while slots > 0 {
                while open.last() == Some(&0) {
                    open.pop();
                }
                let Some(top) = open.last_mut() else { break };
                let take = slots.min(*top);
                *top -= take;
                slots -= take;
            }
            if !matches!(node, Record::Leaves(_)) && node.arity() > 0 {
                open.push(node.arity());
                deepest = deepest.max(open.len());
            }
        }
        deepest
    }
}

/// `Ok` if `bytes` (`None`: more than a `usize` counts) fit the output
/// budget of `def` under the limits in force; otherwise an error naming
/// `what` and the budget.
pub(crate) fn check_output(def: &TreeDef, what: &str, bytes: Option<usize>) -> Result<(), Error> {
    match bytes {
        Some(b) if b <= TreeDefLimits::current().output_budget(def) => Ok(()),
        _ => Err(over_budget(def, what, bytes)),
    }
}

/// The error for `what`, which would take `bytes` (`None`: more than a
/// `usize` counts), more than the output budget of `def`.
#[cold]
pub(crate) fn over_budget(def: &TreeDef, what: &str, bytes: Option<usize>) -> Error {
    let limits = TreeDefLimits::current();
    let budget = limits.output_budget(def);
    Error::custom(format!(
            "{what} would take {}, more than the output budget of {budget} bytes \
             (TreeDefLimits: output_factor {} times the TreeDef's {} bytes, plus output_allowance {})",
            match bytes {
                Some(b) => format!("{b} bytes"),
                None => "more bytes than a usize counts".into(),
            },
            limits.output_factor,
            def.encoded_bytes(),
            limits.output_allowance
        ))
}

/// `Ok` if `steps` (`None`: more than a `usize` counts) fit the work
/// budget of `def` under the limits in force; otherwise an error naming
/// `what` and the budget.
pub(crate) fn check_work(def: &TreeDef, what: &str, steps: Option<usize>) -> Result<(), Error> {
    let limits = TreeDefLimits::current();
    let budget = limits.work_budget(def);
    match steps {
        Some(n) if n <= budget => Ok(()),
        _ => Err(Error::custom(format!(
            "{what} would take {} steps, more than the work budget of {budget} \
             (TreeDefLimits: one step per {} bytes of the output budget, output_factor {} times \
             the TreeDef's {} bytes plus output_allowance {})",
            match steps {
                Some(n) => n.to_string(),
                None => "more".into(),
            },
            core::mem::size_of::<Record>(),
            limits.output_factor,
            def.encoded_bytes(),
            limits.output_allowance
        ))),
    }
}

/// `a * b + c`, or `None` past a `usize`.
pub(crate) fn mul_add(a: usize, b: usize, c: usize) -> Option<usize> {
    a.checked_mul(b)?.checked_add(c)
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use crate::treedef::node::NodeRef;
    use crate::treedef::TreeDefBuilder;

    fn def(steps: impl FnOnce(&mut TreeDefBuilder)) -> crate::treedef::TreeDef {
        let mut b = TreeDefBuilder::new();
        steps(&mut b);
        b.finish().unwrap()
    }

    #[test]
    fn node_depth_counts_nested_nodes_with_children() {
        assert_eq!(crate::treedef::TreeDef::leaf().node_depth(), 0);
        assert_eq!(crate::treedef::TreeDef::none().node_depth(), 0);
        // [*, *, *]
        let flat = def(|b| {
            b.node(NodeRef::Seq(3));
            b.leaves(3);
        });
        assert_eq!(flat.node_depth(), 1);
        // ([*, *], [[*]]): the run of the first list ends before the second.
        let two = def(|b| {
            b.node(NodeRef::Tuple(2));
            b.node(NodeRef::Seq(2));
            b.leaves(2);
            b.node(NodeRef::Seq(1));
            b.node(NodeRef::Seq(1));
            b.leaf();
        });
        assert_eq!(two.node_depth(), 3);
        // ([[*], *], *): one run of leaves closes two nodes.
        let closing = def(|b| {
            b.node(NodeRef::Tuple(2));
            b.node(NodeRef::Seq(2));
            b.node(NodeRef::Seq(1));
            b.leaves(3);
        });
        assert_eq!(closing.node_depth(), 3);
        assert_eq!(closing.to_string(), "([[*], *], *)");
    }
}
