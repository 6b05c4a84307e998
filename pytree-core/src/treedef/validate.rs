//! Checking that a sequence of records describes exactly one tree, within
//! [`TreeDefLimits`], with every count checked: shared by
//! [`TreeDefBuilder::finish`](super::TreeDefBuilder::finish) and by
//! deserialization (which runs it on the document's records before it
//! interns anything).
//!
//! The checker keeps one count per open node (the children it still
//! expects), so a run of leaves that closes many nodes at once costs one
//! step per node closed: linear in the records, whatever the counts say.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::limits::TreeDefLimits;
use super::{Record, TreeDef};
use crate::static_data::StaticValue;
use crate::treedef::schema::{FieldStyle, Schema};

/// What a valid sequence of records adds up to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) leaves: usize,
    pub(crate) nodes: usize,
    pub(crate) depth: usize,
}

/// Follows records one by one; each method fails with the reason the
/// record cannot come next.
pub(crate) struct Checker {
    limits: TreeDefLimits,
    /// Children still expected by each open node, innermost last.
    open: Vec<usize>,
    /// The root subtree is complete: nothing may follow.
    complete: bool,
    counts: Counts,
}

impl Checker {
    pub(crate) fn new(limits: TreeDefLimits) -> Self {
        Checker {
            limits,
            open: Vec::new(),
            complete: false,
            counts: Counts::default(),
        }
    }

    /// True when the records so far describe one whole tree.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn is_complete(&self) -> bool {
        self.complete
    }

    /// One more subtree is complete: it is a child of the innermost open
    /// node, which may complete in turn.
    fn complete_one(&mut self) {
        loop {
            match self.open.last_mut() {
                None => {
                    self.complete = true;
                    return;
                }
                Some(left) => {
                    *left -= 1;
                    if *left > 0 {
                        return;
                    }
                    self.open.pop();
                }
            }
        }
    }

    fn after_complete(&self) -> Result<(), String> {
        if self.complete {
            return Err(String::from(
                "the tree is already complete; this record is left over",
            ));
        }
        Ok(())
    }

    /// A run of `n` consecutive leaves (which may close several nodes).
    pub(crate) fn leaves(&mut self, n: usize) -> Result<(), String> {
        if n == 0 {
            return Err(String::from("a run of 0 leaves"));
        }
        self.after_complete()?;
        self.counts.leaves = self
            .counts
            .leaves
            .checked_add(n)
            .filter(|&total| total <= self.limits.max_leaves)
            .ok_or_else(|| format!("more than {} leaves", self.limits.max_leaves))?;
        let mut left = n;
        while left > 0 {
            if self.complete {
                return Err(format!(
                    "{n} leaves where only {} place(s) are left",
                    n - left
                ));
            }
            match self.open.last_mut() {
                // A single leaf is the whole tree.
                None => {
                    left -= 1;
                    self.complete = true;
                }
                Some(expected) => {
                    let take = left.min(*expected);
                    left -= take;
                    *expected -= take;
                    if *expected == 0 {
                        self.open.pop();
                        self.complete_one();
                    }
                }
            }
        }
        Ok(())
    }

    /// An internal node with `arity` children.
    pub(crate) fn node(&mut self, arity: usize) -> Result<(), String> {
        self.after_complete()?;
        self.counts.nodes = self
            .counts
            .nodes
            .checked_add(1)
            .filter(|&total| total <= self.limits.max_nodes)
            .ok_or_else(|| format!("more than {} internal nodes", self.limits.max_nodes))?;
        if arity == 0 {
            self.complete_one();
            return Ok(());
        }
        self.open.push(arity);
        if self.open.len() > self.limits.max_depth {
            return Err(format!(
                "nodes nested more than {} deep",
                self.limits.max_depth
            ));
        }
        self.counts.depth = self.counts.depth.max(self.open.len());
        Ok(())
    }

    /// The counts, if the records described exactly one tree (or none at
    /// all: the empty TreeDef of a builder given nothing).
    pub(crate) fn finish(self) -> Result<Counts, String> {
        if !self.complete && (self.counts.leaves > 0 || self.counts.nodes > 0) {
            let missing = self
                .open
                .iter()
                .fold(0usize, |sum, &left| sum.saturating_add(left));
            return Err(format!(
                "the records end with {missing} subtree(s) still to describe"
            ));
        }
        if self.counts.leaves.checked_add(self.counts.nodes).is_none() {
            return Err(String::from("more nodes than a usize can count"));
        }
        Ok(self.counts)
    }
}

/// The reason a schema (given by its parts) cannot describe a struct
/// node, if any: a unit struct with fields, or a name longer than
/// `limits.max_name_len`.
pub(crate) fn check_schema_parts<'a>(
    type_name: &str,
    unit: bool,
    num_fields: usize,
    names: impl IntoIterator<Item = &'a str>,
    limits: TreeDefLimits,
) -> Result<(), String> {
    if unit && num_fields > 0 {
        return Err(format!(
            "{type_name} is a unit struct but its schema lists {num_fields} field(s)"
        ));
    }
    for name in names {
        if name.len() > limits.max_name_len {
            return Err(format!(
                "a name of {} bytes, more than {}",
                name.len(),
                limits.max_name_len
            ));
        }
    }
    Ok(())
}

/// [`check_schema_parts`] for a schema.
pub(crate) fn check_schema(schema: &'static Schema, limits: TreeDefLimits) -> Result<(), String> {
    let fields = schema
        .fields()
        .iter()
        .flat_map(|f| core::iter::once(f.name).chain(f.kind));
    let names = [schema.type_name(), schema.module_path()]
        .into_iter()
        .chain(schema.variant())
        .chain(fields);
    check_schema_parts(
        schema.type_name(),
        schema.style() == FieldStyle::Unit,
        schema.fields().len(),
        names,
        limits,
    )
}

/// The reason a map node of `len` entries cannot own `keys`, if any.
pub(crate) fn check_keys(keys: &StaticValue, len: usize) -> Result<(), String> {
    if !keys.is_keys() {
        return Err(format!(
            "a map of {len} entries whose keys are not map keys ({keys:?}: a {})",
            keys.type_name()
        ));
    }
    if keys.item_count() != len {
        return Err(format!(
            "a map of {len} entries with {} key(s)",
            keys.item_count()
        ));
    }
    Ok(())
}

/// Checks a whole encoding: one tree (or nothing), within `limits`, each
/// node owning the statics it should (a struct its static fields, a map
/// keys of its length), and `num_leaves` right. The error names the
/// record.
pub(crate) fn check(def: &TreeDef, limits: TreeDefLimits) -> Result<Counts, String> {
    let mut checker = Checker::new(limits);
    let statics = def.statics();
    let mut next_static = 0usize;
    for (i, node) in def.nodes().iter().enumerate() {
        let at = |e: String| format!("record {i}: {e}");
        match *node {
            Record::Leaves(n) => checker.leaves(n).map_err(at)?,
            Record::Struct(schema) => {
                check_schema(schema, limits).map_err(at)?;
                next_static = next_static.saturating_add(schema.num_static());
                checker.node(schema.num_data()).map_err(at)?;
            }
            Record::Map(n) => {
                let keys = statics
                    .get(next_static)
                    .ok_or_else(|| at(String::from("a map node without keys")))?;
                check_keys(keys, n).map_err(at)?;
                next_static += 1;
                checker.node(n).map_err(at)?;
            }
            Record::Seq(n) | Record::Tuple(n) => checker.node(n).map_err(at)?,
            Record::Some => checker.node(1).map_err(at)?,
            Record::None => checker.node(0).map_err(at)?,
        }
    }
    if next_static != statics.len() {
        return Err(format!(
            "the nodes own {next_static} static value(s), the TreeDef holds {}",
            statics.len()
        ));
    }
    let counts = checker.finish()?;
    if counts.leaves != def.num_leaves() {
        return Err(format!(
            "the records hold {} leaves, the TreeDef says {}",
            counts.leaves,
            def.num_leaves()
        ));
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(steps: &[Result<usize, usize>]) -> Result<Counts, String> {
        // Ok(n): a run of n leaves; Err(a): a node of arity a.
        let mut c = Checker::new(TreeDefLimits::DEFAULT);
        for step in steps {
            match *step {
                Ok(n) => c.leaves(n)?,
                Err(a) => c.node(a)?,
            }
        }
        c.finish()
    }

    #[test]
    fn runs_of_leaves_may_close_several_nodes_and_must_fit() {
        // (([*], *), *): records Tuple(2) Tuple(2) Seq(1) Leaves(3).
        let c = run(&[Err(2), Err(2), Err(1), Ok(3)]).unwrap();
        assert_eq!((c.leaves, c.nodes, c.depth), (3, 3, 3));
        assert!(run(&[Err(2), Err(2), Err(1), Ok(4)]).is_err());
        assert!(run(&[Err(2), Err(2), Err(1), Ok(2)]).is_err());
        assert!(run(&[Ok(1)]).is_ok());
        assert!(run(&[Ok(2)]).is_err());
        assert!(run(&[Ok(1), Err(0)]).is_err());
        assert!(run(&[Err(0), Ok(1)]).is_err());
        assert!(run(&[Ok(0)]).is_err());
        assert_eq!(run(&[]).unwrap(), Counts::default());
    }

    #[test]
    fn counts_near_usize_max_are_errors_not_overflows() {
        let mut c = Checker::new(TreeDefLimits::UNLIMITED);
        c.node(usize::MAX - 1).unwrap();
        c.leaves(usize::MAX - 1).unwrap();
        assert_eq!(c.finish().unwrap().leaves, usize::MAX - 1);
        let mut c = Checker::new(TreeDefLimits::UNLIMITED);
        c.node(usize::MAX).unwrap();
        c.leaves(usize::MAX).unwrap();
        assert!(c.finish().is_err(), "usize::MAX leaves and a node");
        let mut c = Checker::new(TreeDefLimits::UNLIMITED);
        c.node(2).unwrap();
        c.leaves(usize::MAX).unwrap_err();
        let mut c = Checker::new(TreeDefLimits::UNLIMITED);
        c.node(usize::MAX).unwrap();
        c.leaves(usize::MAX - 1).unwrap();
        c.node(0).unwrap();
        assert!(c.finish().is_err(), "leaves + nodes overflow a usize");
    }

    #[test]
    fn limits_are_enforced() {
        let mut limits = TreeDefLimits::DEFAULT;
        limits.max_depth = 2;
        let mut c = Checker::new(limits);
        c.node(1).unwrap();
        c.node(1).unwrap();
        assert!(c.node(1).unwrap_err().contains("more than 2 deep"));
    }
}
