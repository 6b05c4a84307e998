//! Pre-order decoding of a [`TreeDef`]: one item per node, runs of leaves
//! split into single leaves. Everything that reads a TreeDef uses it, so the
//! run-length encoding is known in one place.

use super::{Record, TreeDef, TreeDefBuilder};
use crate::static_data::StaticValue;

/// One decoded node.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Item<'d> {
    Leaf,
    /// An internal node and the statics it owns.
    Node(Record, &'d [StaticValue]),
}

/// Where a node's statics are in the TreeDef's statics table.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StaticsRange {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A position in a TreeDef's pre-order.
#[derive(Clone)]
pub(crate) struct Decoder<'d> {
    def: &'d TreeDef,
    /// `def`'s records and statics, held directly: one load less per read.
    nodes: &'d [Record],
    statics: &'d [StaticValue],
    pos: usize,
    run_left: usize,
    statics_pos: usize,
}

impl<'d> Decoder<'d> {
    pub(crate) fn new(def: &'d TreeDef) -> Self {
        Decoder {
            def,
            nodes: def.nodes(),
            statics: def.statics(),
            pos: 0,
            run_left: 0,
            statics_pos: 0,
        }
    }

    pub(crate) fn def(&self) -> &'d TreeDef {
        self.def
    }

    /// True when every node has been read.
    pub(crate) fn at_end(&self) -> bool {
        self.run_left == 0 && self.pos >= self.nodes.len()
    }

    /// The next item without consuming it.
    pub(crate) fn peek(&self) -> Option<Item<'d>> {
        self.clone().next_item()
    }

    /// Consumes one item.
    #[inline]
    pub(crate) fn next_item(&mut self) -> Option<Item<'d>> {
        if self.run_left > 0 {
            self.run_left -= 1;
            return Some(Item::Leaf);
        }
        let node = *self.nodes.get(self.pos)?;
        self.pos += 1;
        match node {
            Record::Leaves(n) => {
                self.run_left = n.saturating_sub(1);
                Some(Item::Leaf)
            }
            other => {
                let k = other.num_statics();
                let statics = self
                    .statics
                    .get(self.statics_pos..self.statics_pos + k)
                    .unwrap_or(&[]);
                self.statics_pos += k;
                Some(Item::Node(other, statics))
            }
        }
    }

    /// Consumes the next item if it is an internal node that `accept`
    /// takes; returns it with the range of the statics it owns (see
    /// [`statics`](Decoder::statics)), so that a node without statics costs
    /// no slicing.
    #[inline(always)]
    pub(crate) fn next_node_if(
        &mut self,
        accept: impl FnOnce(Record) -> bool,
    ) -> Option<(Record, StaticsRange)> {
        if self.run_left > 0 {
            return None;
        }
        let node = *self.nodes.get(self.pos)?;
        if matches!(node, Record::Leaves(_)) || !accept(node) {
            return None;
        }
        self.pos += 1;
        let start = self.statics_pos;
        self.statics_pos += node.num_statics();
        Some((
            node,
            StaticsRange {
                start,
                end: self.statics_pos,
            },
        ))
    }

    /// The statics of a range returned by [`next_node_if`](Decoder::next_node_if).
    pub(crate) fn statics(&self, range: StaticsRange) -> &'d [StaticValue] {
        self.statics.get(range.start..range.end).unwrap_or(&[])
    }

    /// Where the next node's statics start in the statics table.
    pub(crate) fn statics_cursor(&self) -> usize {
        self.statics_pos
    }

    /// How many leaves have been consumed (a scan of the records read so
    /// far: for error messages only).
    #[cold]
    pub(crate) fn leaves_consumed(&self) -> usize {
        let read =
            self.nodes[..self.pos.min(self.nodes.len())]
                .iter()
                .fold(0usize, |sum, n| match n {
                    Record::Leaves(k) => sum.saturating_add(*k),
                    _ => sum,
                });
        read.saturating_sub(self.run_left)
    }

    /// Consumes one leaf if the next item is a leaf.
    #[inline(always)]
    pub(crate) fn take_leaf(&mut self) -> bool {
        if self.run_left == 0 {
            match self.nodes.get(self.pos) {
                Some(Record::Leaves(n)) => {
                    self.run_left = *n;
                    self.pos += 1;
                }
                _ => return false,
            }
        }
        self.run_left -= 1;
        true
    }

    /// Consumes up to `max` leaves at once if the next items are leaves;
    /// returns how many.
    #[inline]
    pub(crate) fn take_leaves(&mut self, max: usize) -> usize {
        if self.run_left == 0 {
            match self.nodes.get(self.pos) {
                Some(Record::Leaves(n)) => {
                    self.run_left = *n;
                    self.pos += 1;
                }
                _ => return 0,
            }
        }
        let k = self.run_left.min(max);
        self.run_left -= k;
        k
    }

    /// How many leaves come next in a row (the rest of the current run, or
    /// the next record's run), without consuming them.
    pub(crate) fn leaves_ahead(&self) -> usize {
        if self.run_left > 0 {
            return self.run_left;
        }
        match self.nodes.get(self.pos) {
            Some(Record::Leaves(n)) => *n,
            _ => 0,
        }
    }

    /// Consumes up to `n` leaves that come next in a row.
    pub(crate) fn skip_leaves(&mut self, n: usize) {
        let mut left = n;
        while left > 0 {
            match self.take_leaves(left) {
                0 => return,
                k => left -= k,
            }
        }
    }

    /// Consumes one whole subtree; returns how many leaves it held.
    pub(crate) fn skip_subtree(&mut self) -> usize {
        self.skip_subtrees(1)
    }

    /// Consumes `n` whole subtrees (siblings); returns how many leaves they
    /// held. Runs of leaves are passed in one step each, so the cost is the
    /// records passed, not `n` (a child index read from a document may be
    /// 10^18).
    pub(crate) fn skip_subtrees(&mut self, n: usize) -> usize {
        let mut leaves = 0usize;
        let mut pending = n;
        while pending > 0 {
            let k = self.take_leaves(pending);
            leaves = leaves.saturating_add(k);
            pending -= k;
            if pending == 0 {
                break;
            }
            match self.next_item() {
                Some(Item::Node(node, _)) => {
                    pending = (pending - 1).saturating_add(node.arity());
                }
                Some(Item::Leaf) => {
                    leaves = leaves.saturating_add(1);
                    pending -= 1;
                }
                None => break,
            }
        }
        leaves
    }

    /// Consumes one whole subtree and returns it as a TreeDef of its own.
    pub(crate) fn copy_subtree(&mut self) -> TreeDef {
        let mut b = TreeDefBuilder::new();
        let mut pending = 1usize;
        while pending > 0 {
            let k = self.take_leaves(pending);
            b.leaves(k);
            pending -= k;
            if pending == 0 {
                break;
            }
            match self.next_item() {
                Some(Item::Node(node, statics)) => {
                    b.raw(node, statics);
                    pending = pending - 1 + node.arity();
                }
                Some(Item::Leaf) => {
                    b.leaf();
                    pending -= 1;
                }
                None => break,
            }
        }
        b.build()
    }
}

/// Where a decoder stands after one record's subtree, and how many leaves
/// that subtree holds.
#[derive(Clone, Copy, Debug)]
struct SubtreeEnd {
    pos: usize,
    run_left: usize,
    statics_pos: usize,
    leaves: usize,
}

/// For every record of a TreeDef, where its subtree ends: lets a decoder
/// jump over a subtree in O(1) instead of reading it (built in one
/// iterative pass, O(records)). The aligner builds one for an input whose
/// map keys come in another order than the merged keys, so that visiting
/// its children out of order stays linear.
pub(crate) struct SkipTable {
    ends: alloc::vec::Vec<SubtreeEnd>,
}

impl SkipTable {
    pub(crate) fn new(def: &TreeDef) -> Self {
        let nodes = def.nodes();
        let end_of_def = SubtreeEnd {
            pos: nodes.len(),
            run_left: 0,
            statics_pos: def.statics().len(),
            leaves: 0,
        };
        let mut ends = alloc::vec![end_of_def; nodes.len()];
        let mut w = Decoder::new(def);
        let mut leaves = 0usize;
        // Open internal nodes: (record, children still to read, leaves
        // counted before it).
        let mut open: alloc::vec::Vec<(usize, usize, usize)> = alloc::vec::Vec::new();
        loop {
            while let Some(&(rec, 0, before)) = open.last() {
                ends[rec] = SubtreeEnd {
                    pos: w.pos,
                    run_left: w.run_left,
                    statics_pos: w.statics_pos,
                    leaves: leaves - before,
                };
                open.pop();
                if let Some(parent) = open.last_mut() {
                    parent.1 -= 1;
                }
            }
            let want = open.last().map_or(usize::MAX, |top| top.1);
            let k = w.take_leaves(want);
            if k > 0 {
                leaves += k;
                if let Some(top) = open.last_mut() {
                    top.1 -= k;
                }
                continue;
            }
            let rec = w.pos;
            match w.next_item() {
                Some(Item::Node(node, _)) => open.push((rec, node.arity(), leaves)),
                // `take_leaves` found no leaf here, so this is the end (a
                // malformed TreeDef leaves its open nodes at the end).
                Some(Item::Leaf) | None => break,
            }
        }
        SkipTable { ends }
    }

    /// Consumes one whole subtree of `w` (a decoder over the same TreeDef);
    /// returns how many leaves it held, as [`Decoder::skip_subtree`] does.
    pub(crate) fn skip(&self, w: &mut Decoder<'_>) -> usize {
        if w.take_leaves(1) == 1 {
            return 1;
        }
        match self.ends.get(w.pos) {
            Some(end) => {
                w.pos = end.pos;
                w.run_left = end.run_left;
                w.statics_pos = end.statics_pos;
                end.leaves
            }
            None => 0,
        }
    }
}
