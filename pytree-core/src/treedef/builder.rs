//! Building a [`TreeDef`] record by record during a walk.
//!
//! The library's own walks build well-formed TreeDefs by construction and
//! finish them with `build` (no check). A user's builder is finished with
//! [`TreeDefBuilder::finish`], which checks what it was given
//! (`validate.rs`): a TreeDef that exists is always well-formed, so every
//! reader can rely on it, and it serializes to a document that reads back.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::limits::TreeDefLimits;
use super::{validate, Record, RecordWords, TreeDef};
use crate::error::Error;
use crate::paths::key_path::ErasableKey;
use crate::static_data::StaticValue;
use crate::treedef::node::NodeRef;

/// Appends records to a TreeDef under construction; the visitors that build
/// TreeDefs own one. [`finish`](TreeDefBuilder::finish) checks that the
/// records describe exactly one tree (each node given all its children, a
/// struct its static fields, a map its keys) within the
/// [`TreeDefLimits`](crate::TreeDefLimits) in force, and says what is
/// wrong otherwise.
///
/// ```
/// use pytree_std::{NodeRef, TreeDefBuilder};
/// let mut b = TreeDefBuilder::new();
/// b.node(NodeRef::Tuple(2));
/// b.leaf();
/// b.leaf();
/// assert_eq!(b.finish()?.to_string(), "(*, *)");
///
/// let mut b = TreeDefBuilder::new();
/// b.node(NodeRef::Tuple(2));
/// b.leaf();
/// assert_eq!(
///     b.finish().unwrap_err().to_string(),
///     "at <root>: invalid TreeDef: the records end with 1 subtree(s) still to describe"
/// );
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Default)]
pub struct TreeDefBuilder {
    nodes: Vec<RecordWords>,
    statics: Vec<Option<StaticValue>>,
    pending_keys: Vec<usize>,
    num_leaves: usize,
    /// Leaves seen since the last record, written as one `Leaves(n)`
    /// record before the next internal node (so a leaf costs an increment,
    /// not a look at the last record).
    pending_leaves: usize,
    /// A leaf count went past `usize::MAX` (the counts saturate).
    overflowed: bool,
    /// The first misuse seen (reported by `finish`).
    problem: Option<String>,
}

impl TreeDefBuilder {
    /// An empty builder.
    ///
    /// ```
    /// let b = pytree_std::TreeDefBuilder::new();
    /// assert_eq!(b.finish()?.num_nodes(), 0);
    /// # Ok::<(), pytree_std::Error>(())
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
    /// assert!(b.finish()?.is_leaf());
    /// # Ok::<(), pytree_std::Error>(())
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
    /// assert_eq!(b.finish()?.to_string(), "[*, *, *]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[inline]
    pub fn leaves(&mut self, n: usize) {
        self.pending_leaves = self.add_leaves(self.pending_leaves, n);
    }

    /// `a + b`, saturated and remembered if it overflows.
    #[inline(always)]
    fn add_leaves(&mut self, a: usize, b: usize) -> usize {
        let (sum, overflowed) = a.overflowing_add(b);
        self.overflowed |= overflowed;
        if overflowed {
            usize::MAX
        } else {
            sum
        }
    }

    /// Writes the pending run of leaves as one record.
    #[inline]
    fn flush_leaves(&mut self) {
        if self.pending_leaves > 0 {
            self.num_leaves = self.add_leaves(self.num_leaves, self.pending_leaves);
            self.nodes.push(Record::Leaves(self.pending_leaves).into());
            self.pending_leaves = 0;
        }
    }

    /// Records an internal node (cloning its static fields, if any). A
    /// struct must be given as many static values as its schema has static
    /// fields (else `finish` fails).
    ///
    /// ```
    /// let mut b = pytree_std::TreeDefBuilder::new();
    /// b.node(pytree_std::NodeRef::None);
    /// assert_eq!(b.finish()?.to_string(), "None");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[inline(always)]
    pub fn node(&mut self, node: NodeRef<'_>) {
        let run = core::mem::take(&mut self.pending_leaves);
        self.num_leaves = self.add_leaves(self.num_leaves, run);
        if let NodeRef::Struct { schema, statics } = node {
            if statics.len() != schema.num_static() {
                self.misuse(format!(
                    "record {}: {} has {} static field(s), given {}",
                    self.nodes.len() + usize::from(run > 0),
                    schema.display_name(),
                    schema.num_static(),
                    statics.len()
                ));
            }
        }
        self.node_after_leaves(run, node);
    }

    /// Remembers the first misuse, for `finish` to report.
    #[cold]
    #[inline(never)]
    fn misuse(&mut self, problem: String) {
        self.problem.get_or_insert(problem);
    }

    /// Records `run` leaves, then an internal node: the records that
    /// `leaves(run)` then `node(node)` write, for a visitor that counts its
    /// leaves itself (flatten's sink reads the count off its leaves `Vec`,
    /// so a leaf costs the builder nothing). No leaves may be pending, and
    /// the leaves are not counted: the visitor gives their total to
    /// [`finish_after_leaves`](Self::finish_after_leaves).
    // Always inlined: at each call site the node kind is a constant, so
    // this folds to "write the leaf run and the record". The rare work
    // (static fields, map key slots, growing) is out of line.
    #[inline(always)]
    pub(crate) fn node_after_leaves(&mut self, run: usize, node: NodeRef<'_>) {
        debug_assert_eq!(self.pending_leaves, 0);
        let record = match node {
            NodeRef::Struct { schema, statics } => {
                if !statics.is_empty() {
                    self.push_statics(statics);
                }
                Record::Struct(schema)
            }
            NodeRef::Seq(n) => Record::Seq(n),
            NodeRef::Tuple(n) => Record::Tuple(n),
            NodeRef::Map(n) => {
                self.open_map();
                Record::Map(n)
            }
            NodeRef::Some => Record::Some,
            NodeRef::None => Record::None,
        };
        self.push_after_run(run, record.into());
    }

    /// Appends `Leaves(run)` (if `run > 0`) and `record` with one capacity
    /// check and no branch on `run`: both are written, and the record
    /// overwrites the run's slot when the run is empty.
    #[inline(always)]
    fn push_after_run(&mut self, run: usize, record: RecordWords) {
        if self.nodes.capacity() - self.nodes.len() < 2 {
            self.grow_records();
        }
        let len = self.nodes.len();
        let has_run = usize::from(run > 0);
        // SAFETY: there is room for two more records (checked above), so
        // both writes are in the allocation; the length then covers only
        // initialized records (the run's when `run > 0`, and `record`).
        unsafe {
            let end = self.nodes.as_mut_ptr().add(len);
            end.write(Record::Leaves(run).into());
            end.add(has_run).write(record);
            self.nodes.set_len(len + has_run + 1);
        }
    }

    /// Makes room for two more records.
    #[cold]
    #[inline(never)]
    fn grow_records(&mut self) {
        self.nodes.reserve(2);
    }

    /// Makes room for `records` more records (a hint: the walk extrapolates
    /// the rest of a sequence from its first element).
    #[inline]
    pub(crate) fn reserve(&mut self, records: usize) {
        self.nodes.reserve_exact(records);
    }

    /// Appends `times` copies of the subtree whose records were written
    /// since record `start` and whose last `run` leaves are still pending
    /// (counted by the visitor, see
    /// [`node_after_leaves`](Self::node_after_leaves)): the subtree of a
    /// value of a uniform type, which begins with an internal node and owns
    /// no static data. The first subtree's run is written, and each copy's
    /// but the last, whose run stays pending for the visitor to count (so
    /// that the leaves after it join its run, as they would have without
    /// the copies).
    #[inline]
    pub(crate) fn repeat_records_since(&mut self, start: usize, run: usize, times: usize) {
        debug_assert_eq!(self.pending_leaves, 0);
        let end = self.nodes.len();
        debug_assert!(
            start < end
                && !matches!(
                    RecordWords::as_records(&self.nodes[start..end])[0],
                    Record::Leaves(_)
                )
        );
        let per = end - start + usize::from(run > 0);
        self.nodes.reserve_exact(per.saturating_mul(times));
        if times == 0 {
            return;
        }
        if run > 0 {
            self.nodes.push(Record::Leaves(run).into());
        }
        self.nodes.extend_from_within(start..end);
        // The other copies by doubling the ones written: a few long copies
        // (6 for 47 copies), not one short copy per element.
        let mut done = 1;
        while done < times {
            let n = done.min(times - done);
            self.nodes.extend_from_within(end..end + n * per);
            done += n;
        }
    }

    /// Records written so far (a pending run of leaves aside).
    #[inline(always)]
    pub(crate) fn records_written(&self) -> usize {
        self.nodes.len()
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

    /// Gives the keys of the innermost map whose keys are still missing
    /// (made with [`StaticValue::keys`], as many as the map has entries).
    ///
    /// ```
    /// use pytree_std::{NodeRef, StaticValue, TreeDefBuilder};
    /// let mut b = TreeDefBuilder::new();
    /// b.node(NodeRef::Map(1));
    /// b.leaf();
    /// b.map_keys(StaticValue::keys(vec!["a"]));
    /// assert_eq!(b.finish()?.to_string(), "{\"a\": *}");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn map_keys(&mut self, keys: StaticValue) {
        match self.pending_keys.pop() {
            Some(slot) => self.statics[slot] = Some(keys),
            None => self.misuse(String::from("map keys given with no map waiting for them")),
        }
    }

    /// Appends a raw record with its statics (used when copying subtrees).
    pub(crate) fn raw(&mut self, node: Record, statics: &[StaticValue]) {
        match node {
            Record::Leaves(n) => self.leaves(n),
            other => {
                self.flush_leaves();
                self.statics.extend(statics.iter().cloned().map(Some));
                self.nodes.push(other.into());
            }
        }
    }

    /// The finished TreeDef, checked: the records must describe exactly one
    /// tree (or nothing: an empty builder gives the empty TreeDef), every
    /// struct given its static fields and every map its keys, within the
    /// [`TreeDefLimits`](crate::TreeDefLimits) in force. The error says
    /// what is wrong and at which record.
    ///
    /// ```
    /// let mut b = pytree_std::TreeDefBuilder::new();
    /// b.leaf();
    /// assert_eq!(b.finish()?.num_leaves(), 1);
    /// let mut b = pytree_std::TreeDefBuilder::new();
    /// b.leaves(usize::MAX);
    /// b.leaf();
    /// assert!(b.finish().is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn finish(mut self) -> Result<TreeDef, Error> {
        let invalid = |why: String| Error::custom(format!("invalid TreeDef: {why}"));
        self.flush_leaves();
        if self.overflowed {
            return Err(invalid(String::from("more leaves than a usize can count")));
        }
        if let Some(problem) = self.problem.take() {
            return Err(invalid(problem));
        }
        if let Some(&slot) = self.pending_keys.first() {
            return Err(invalid(format!(
                "a map node was given no keys (its keys would be static value {slot}; \
                 call map_keys after its entries)"
            )));
        }
        let num_leaves = self.num_leaves;
        let def = self.finish_after_leaves(0, num_leaves);
        validate::check(&def, TreeDefLimits::current()).map_err(invalid)?;
        Ok(def)
    }

    /// The finished TreeDef, unchecked: for the library's walks, which
    /// build well-formed TreeDefs by construction (checked in debug
    /// builds).
    pub(crate) fn build(mut self) -> TreeDef {
        self.flush_leaves();
        let num_leaves = self.num_leaves;
        let def = self.finish_after_leaves(0, num_leaves);
        debug_assert!(
            validate::check(&def, TreeDefLimits::UNLIMITED).is_ok(),
            "a walk built an invalid TreeDef: {:?}",
            validate::check(&def, TreeDefLimits::UNLIMITED)
        );
        def
    }

    /// Records `run` final leaves, then finishes a TreeDef of `num_leaves`
    /// leaves in all (for a visitor that reports its leaves with
    /// [`node_after_leaves`](Self::node_after_leaves)).
    pub(crate) fn finish_after_leaves(mut self, run: usize, num_leaves: usize) -> TreeDef {
        if run > 0 {
            self.nodes.push(Record::Leaves(run).into());
        }
        self.num_leaves = num_leaves;
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
        // Most trees have no static data: no pass over an empty table.
        let statics = if self.statics.is_empty() {
            Vec::new()
        } else {
            Self::finish_statics(self.statics)
        };
        TreeDef::from_parts(self.nodes, statics, self.num_leaves)
    }

    /// The statics table, every map's keys filled in, trimmed to size.
    #[inline(never)]
    fn finish_statics(statics: Vec<Option<StaticValue>>) -> Vec<StaticValue> {
        let mut statics: Vec<StaticValue> = statics
            .into_iter()
            .map(|s| s.unwrap_or_else(|| StaticValue::new(())))
            .collect();
        statics.shrink_to_fit();
        statics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::treedef::schema::{FieldStyle, Schema};
    use alloc::string::ToString;

    static S: Schema = Schema::new("S", "m", None, FieldStyle::Unit, &[]);

    /// A walk as (leaves before the node, node) steps, then final leaves.
    type Steps<'a> = (&'a [(usize, NodeRef<'static>)], usize);

    fn counted_by_the_builder((steps, last): Steps<'_>) -> TreeDef {
        let mut b = TreeDefBuilder::new();
        for (run, node) in steps {
            b.leaves(*run);
            b.node(*node);
        }
        b.leaves(last);
        b.finish().unwrap()
    }

    fn counted_by_the_visitor((steps, last): Steps<'_>) -> TreeDef {
        let mut b = TreeDefBuilder::with_capacity(1);
        let mut total = 0;
        for (run, node) in steps {
            b.node_after_leaves(*run, *node);
            total += run;
        }
        b.finish_after_leaves(last, total + last)
    }

    #[test]
    fn leaves_counted_by_the_visitor_give_the_treedef_the_builder_counts() {
        let schema = NodeRef::Struct {
            schema: &S,
            statics: &[],
        };
        let walks: [Steps<'_>; 4] = [
            (&[], 1),
            (&[(0, NodeRef::Tuple(2))], 2),
            (
                &[
                    (0, NodeRef::Seq(3)),
                    (0, NodeRef::Some),
                    (1, NodeRef::None),
                    (0, NodeRef::Tuple(2)),
                ],
                2,
            ),
            (
                &[
                    (0, NodeRef::Tuple(3)),
                    (0, schema),
                    (0, NodeRef::Tuple(0)),
                    (0, NodeRef::Tuple(2)),
                ],
                2,
            ),
        ];
        for walk in walks {
            let (want, got) = (counted_by_the_builder(walk), counted_by_the_visitor(walk));
            assert!(got == want, "{got} != {want}");
            assert_eq!(got.to_string(), want.to_string());
            assert_eq!(got.num_leaves(), want.num_leaves());
            assert_eq!(got.num_records(), want.num_records());
        }
    }
}
