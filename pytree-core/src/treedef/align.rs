//! Lining up several TreeDefs node by node: the one engine behind every
//! operation whose trees may differ in structure. It yields the merged
//! structure and, for each of its leaves, where each input's value comes
//! from (a leaf index, or missing). Callers pair that plan with the leaves,
//! so typed trees and dynamic trees share it:
//!
//! - the structural diff (strict, no broadcast, every mismatch listed);
//! - prefix trees (input 0 or 1 may stand for a whole subtree with a leaf);
//! - treevalue's modes (maps and options whose keys differ: strict, inner,
//!   outer, left) and inheritance (a leaf of any input broadcast over the
//!   matching subtree of the others).
//!
//! Sequences, tuples and structs must agree in every mode (kind, length,
//! schema; static fields must be equal); a map's keys and an option's
//! `Some` / `None` follow the mode. Map entries are paired by key: keys
//! erased with an order (`StaticValue::ordered_keys`) stay sorted in the
//! merged map; keys without one follow the first tree's order, then the
//! keys new in later trees in their order, and a tree whose keys come in
//! another order is read out of order (through a [`SkipTable`], so the
//! walk stays linear). The walk is iterative (an explicit stack), so deep
//! TreeDefs do not overflow the call stack.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::cell::Cell;
use core::cmp::Ordering;

use super::decode::SkipTable;
use super::{Decoder, Item, Record, TreeDef, TreeDefBuilder};
use crate::error::{Error, ErrorKind};
use crate::paths::key_path::KeyEntry;
use crate::static_data::{KeyOrder, StaticValue};
use crate::treedef::display::{describe, describe_node, describe_node_pair};

/// How trees whose maps differ in their keys are lined up (treevalue's
/// `mode`). Sequences, tuples and structs must match in every mode; the
/// modes decide for map keys and for `Some` / `None`.
///
/// ```
/// use pytree_std::treelize::mode::{Mode, Outer, TreelizeMode};
/// assert_eq!(Outer::MODE, Mode::Outer);
/// assert_eq!(Mode::default(), Mode::Strict);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Keys must match one to one; otherwise an error names the path and
    /// the missing and extra keys.
    #[default]
    Strict,
    /// Only the keys present in every tree.
    Inner,
    /// The keys present in any tree; a tree that lacks one gets the
    /// `missing` value there.
    Outer,
    /// The keys of the leftmost tree (at each map, the first argument that
    /// has a map there); a tree that lacks one gets the `missing` value.
    Left,
}

/// Which inputs may stand for a whole subtree with one leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inherit {
    /// None: a leaf against a subtree is a mismatch.
    Nobody,
    /// Only this input (the prefix tree).
    Only(usize),
    /// Every input (treevalue's `inherit`, optree's broadcast map).
    Everybody,
}

/// What an alignment is asked to do.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policy {
    pub mode: Mode,
    pub inherit: Inherit,
    /// Keep going after a mismatch, to report every one.
    pub all_errors: bool,
    /// A value can fill the slots a tree lacks (outer and left modes).
    pub fill: bool,
    /// Record, for each leaf of input 0, the part of the result it covers.
    pub spans: bool,
    /// Record the plan: one `Arg` per input for each leaf of the result.
    /// Off for the structural diff and the prefix test, which only want the
    /// mismatches: a run of `n` leaves then costs one step, not `n`.
    pub args: bool,
    /// Build the merged structure (`Alignment::def`). Off for the diff and
    /// the prefix test, which then hold a few words per open node, not a
    /// copy of the records.
    pub def: bool,
}

impl Policy {
    /// Strict, no broadcast, every mismatch: the structural diff.
    pub(crate) fn diff() -> Self {
        Policy {
            mode: Mode::Strict,
            inherit: Inherit::Nobody,
            all_errors: true,
            fill: false,
            spans: false,
            args: true,
            def: true,
        }
    }

    /// Strict, input `prefix` may broadcast its leaves: prefix trees.
    pub(crate) fn prefix(prefix: usize) -> Self {
        Policy {
            inherit: Inherit::Only(prefix),
            ..Policy::diff()
        }
    }
}

/// Where one input's value for one leaf of the result comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// That input's leaf of this index (pre-order).
    Leaf(usize),
    /// The input lacks this place (outer and left modes).
    Missing,
}

/// What one leaf of input 0 covers in input 1 (with `Policy::spans`).
#[derive(Debug)]
pub(crate) struct Span {
    /// The subtree of input 1 it stands for; `None` for a single leaf.
    pub def: Option<TreeDef>,
    /// The index of that subtree's first leaf among input 1's leaves (its
    /// leaves are contiguous there; spans come in input 0's order, which
    /// is input 1's order unless input 1's map keys come in another order).
    pub start: usize,
}

/// The merged structure and, per leaf of it, one [`Arg`] per input.
#[derive(Debug)]
pub(crate) struct Alignment {
    pub def: TreeDef,
    pub args: Vec<Arg>,
    pub width: usize,
    pub spans: Vec<Span>,
}

impl Alignment {
    /// One row of `width` args per leaf of the result.
    pub(crate) fn rows(&self) -> impl Iterator<Item = &[Arg]> + '_ {
        let rows = self.args.len().checked_div(self.width).unwrap_or(0);
        (0..rows).map(move |r| &self.args[r * self.width..(r + 1) * self.width])
    }
}

/// Lines up `defs` under `policy`. The errors are every mismatch found
/// (only the first unless `policy.all_errors`), each with its path and the
/// index of the tree it is about (the lower index is "expected").
pub(crate) fn align(defs: &[&TreeDef], policy: Policy) -> Result<Alignment, Vec<Error>> {
    let width = defs.len();
    let mut st = Aligner {
        inputs: defs
            .iter()
            .map(|d| Input {
                decoder: Decoder::new(d),
                next_leaf: 0,
                skips: None,
            })
            .collect(),
        policy,
        // Room for the larger input's records (the merged structure of two
        // equal ones), so that it does not grow by doubling.
        builder: policy.def.then(|| {
            TreeDefBuilder::with_capacity(defs.iter().map(|d| d.num_records()).max().unwrap_or(0))
        }),
        args: Vec::new(),
        spans: Vec::new(),
        path: Vec::new(),
        errors: Vec::new(),
    };
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut pos = vec![Pos::Walk; width];
    'walk: loop {
        if let Some(frame) = st.subtree(pos) {
            stack.push(frame);
        }
        if !st.errors.is_empty() && !policy.all_errors {
            break 'walk;
        }
        // Move to the next child to line up, closing finished nodes.
        loop {
            let Some(frame) = stack.last_mut() else {
                break 'walk;
            };
            st.path.truncate(frame.path_len);
            if frame.next < frame.len {
                // Children that are leaves in every walking input (a `Vec`
                // of leaves) are lined up as one run.
                if matches!(frame.children, Children::InOrder) {
                    let run = st.leaf_run(&frame.pos, frame.len - frame.next);
                    if run > 1 {
                        st.leaf_rows(&frame.pos, run);
                        frame.next += run;
                        continue;
                    }
                }
                pos = st.enter_child(frame);
                frame.next += 1;
                break;
            }
            st.close(frame);
            stack.pop();
        }
    }
    if !st.errors.is_empty() {
        return Err(st.errors);
    }
    Ok(Alignment {
        def: st
            .builder
            .map_or_else(|| TreeDefBuilder::new().build(), TreeDefBuilder::build),
        args: st.args,
        width,
        spans: st.spans,
    })
}

/// One input's state at the subtree being lined up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pos {
    /// Its decoder stands at this subtree.
    Walk,
    /// One of its leaves stands for this whole subtree.
    Broadcast(usize),
    /// It has nothing here (a key it lacks).
    Absent,
}

struct Input<'d> {
    decoder: Decoder<'d>,
    next_leaf: usize,
    /// Built the first time this input is read out of order.
    skips: Option<SkipTable>,
}

/// A place in one input: its decoder and the index of its next leaf.
type Mark<'d> = (Decoder<'d>, usize);

/// How the children of an open node are reached.
enum Children<'d> {
    /// Child `j` of every walking input is child `j` of the result.
    InOrder,
    /// `plan[j * width + i]` is the own child of input `i` that becomes
    /// child `j` of the result (`None`: the input lacks it); `taken[i]` of
    /// its `own[i]` children are consumed. An input whose children are
    /// wanted out of order is listed in `jumps` with the start of each of
    /// its children and, last, the end of its node.
    Keyed {
        plan: Vec<Option<usize>>,
        taken: Vec<usize>,
        own: Vec<usize>,
        jumps: Vec<(usize, Vec<Mark<'d>>)>,
    },
}

/// A node of the result whose children are being lined up.
struct Frame<'d> {
    pos: Vec<Pos>,
    children: Children<'d>,
    /// How the path names each child.
    keys: ChildKeys,
    next: usize,
    len: usize,
    path_len: usize,
}

/// The key-path entries of a node's children.
pub(crate) enum ChildKeys {
    Index,
    /// A struct's data fields. With static fields among them, child `j`
    /// is not field `j`: the cursor remembers where the last child asked
    /// for was found (`(next data index, its position in the fields)`), so
    /// that children asked for in order cost one step each, not a scan
    /// from the first field (a struct read from a document may have
    /// 100 000 fields).
    Fields(
        &'static crate::treedef::schema::Schema,
        Cell<(usize, usize)>,
    ),
    Map(StaticValue),
    None,
}

impl ChildKeys {
    /// The children of a struct of this schema.
    pub(crate) fn fields(schema: &'static crate::treedef::schema::Schema) -> Self {
        ChildKeys::Fields(schema, Cell::new((0, 0)))
    }

    /// How the children of this record are named.
    pub(crate) fn of(node: Record, statics: &[StaticValue]) -> Self {
        match node {
            Record::Struct(schema) => ChildKeys::fields(schema),
            Record::Seq(_) | Record::Tuple(_) => ChildKeys::Index,
            Record::Map(_) => statics
                .first()
                .map_or(ChildKeys::None, |k| ChildKeys::Map(k.clone())),
            Record::Some | Record::None | Record::Leaves(_) => ChildKeys::None,
        }
    }

    /// Appends the entries that lead to child `j`.
    pub(crate) fn push(&self, j: usize, path: &mut Vec<KeyEntry>) {
        match self {
            ChildKeys::Index => path.push(KeyEntry::Index(j)),
            ChildKeys::Fields(schema, cursor) => {
                if let Some(variant) = schema.variant() {
                    path.push(KeyEntry::Variant(variant));
                }
                let fields = schema.fields();
                let field = if schema.num_static() == 0 {
                    fields.get(j)
                } else {
                    let (mut next, mut at) = cursor.get();
                    if j < next {
                        (next, at) = (0, 0);
                    }
                    let mut found = None;
                    while let Some(f) = fields.get(at) {
                        at += 1;
                        if f.is_static {
                            continue;
                        }
                        next += 1;
                        if next == j + 1 {
                            found = Some(f);
                            break;
                        }
                    }
                    cursor.set((next, at));
                    found
                };
                if let Some(field) = field {
                    path.push(KeyEntry::Field(field.name));
                }
            }
            ChildKeys::Map(keys) => {
                if let Some(key) = keys.item(j) {
                    path.push(KeyEntry::Key(key));
                }
            }
            ChildKeys::None => {}
        }
    }
}

struct Aligner<'d> {
    inputs: Vec<Input<'d>>,
    policy: Policy,
    /// The merged structure (`None` unless `Policy::def`).
    builder: Option<TreeDefBuilder>,
    args: Vec<Arg>,
    spans: Vec<Span>,
    path: Vec<KeyEntry>,
    errors: Vec<Error>,
}

impl<'d> Aligner<'d> {
    /// Whether leaves still go into the plan: not once a mismatch makes
    /// the alignment an error (the walk goes on only to list the other
    /// mismatches, so a run of 10^18 leaves that only one input has costs
    /// one step).
    #[inline]
    fn recording(&self) -> bool {
        self.policy.args && self.errors.is_empty()
    }

    fn may_broadcast(&self, i: usize) -> bool {
        match self.policy.inherit {
            Inherit::Nobody => false,
            Inherit::Only(j) => i == j,
            Inherit::Everybody => true,
        }
    }

    /// Records a mismatch at the current path, about tree `tree`.
    fn error(&mut self, kind: ErrorKind, tree: usize) {
        self.error_at(kind, tree, &[]);
    }

    /// Records a mismatch at the current path followed by `tail`.
    fn error_at(&mut self, kind: ErrorKind, tree: usize, tail: &[KeyEntry]) {
        let mut e = Error::new(kind);
        for k in self.path.iter().chain(tail).rev() {
            e = e.at(k.clone());
        }
        self.errors.push(e.in_tree(tree));
    }

    /// A node mismatch between inputs `a` and `b` (the lower index is the
    /// expected side).
    fn node_mismatch(&mut self, a: (usize, String), b: (usize, String)) {
        let (lo, hi) = if a.0 < b.0 { (a, b) } else { (b, a) };
        self.error(
            ErrorKind::NodeMismatch {
                expected: lo.1,
                found: hi.1,
            },
            hi.0,
        );
    }

    /// Consumes the next leaf of input `i`; returns its index.
    fn take_leaf(&mut self, i: usize) -> usize {
        let input = &mut self.inputs[i];
        input.decoder.next_item();
        input.next_leaf += 1;
        input.next_leaf - 1
    }

    /// Skips input `i`'s whole subtree here.
    fn skip(&mut self, i: usize) {
        let input = &mut self.inputs[i];
        input.next_leaf += match &input.skips {
            Some(table) => table.skip(&mut input.decoder),
            None => input.decoder.skip_subtree(),
        };
    }

    /// For the inputs of a keyed node whose plan visits their children out
    /// of order (map keys without an order, met in another order than the
    /// merged keys): the start of each of their `own` children and the end
    /// of the node. Call with the walkers just past the node's record.
    fn jumps(
        &mut self,
        plan: &[Option<usize>],
        own: &[usize],
        pos: &[Pos],
    ) -> Vec<(usize, Vec<Mark<'d>>)> {
        let width = pos.len();
        let mut jumps = Vec::new();
        for i in 0..width {
            if pos[i] != Pos::Walk {
                continue;
            }
            let mut wanted = plan.iter().skip(i).step_by(width).flatten();
            let in_order = match wanted.next() {
                None => true,
                Some(&first) => wanted
                    .try_fold(first, |prev, &t| (t > prev).then_some(t))
                    .is_some(),
            };
            if in_order {
                continue;
            }
            let input = &mut self.inputs[i];
            let table = input
                .skips
                .get_or_insert_with(|| SkipTable::new(input.decoder.def()));
            let mut decoder = input.decoder.clone();
            let mut next_leaf = input.next_leaf;
            let mut marks = Vec::with_capacity(own[i] + 1);
            for _ in 0..own[i] {
                marks.push((decoder.clone(), next_leaf));
                next_leaf += table.skip(&mut decoder);
            }
            marks.push((decoder, next_leaf));
            jumps.push((i, marks));
        }
        jumps
    }

    /// Once a mismatch makes the alignment an error, a subtree that at
    /// most one tree walks can hold no other mismatch: passes over it (a
    /// step per record, not per node) and returns true. A prefix of 2^26
    /// children that differs from its tree at the root used to be walked
    /// child by child, 13 s for nothing.
    fn alone_after_a_mismatch(&mut self, pos: &[Pos]) -> bool {
        if self.errors.is_empty() || pos.iter().filter(|p| **p == Pos::Walk).count() > 1 {
            return false;
        }
        for (i, p) in pos.iter().enumerate() {
            if *p == Pos::Walk {
                self.skip(i);
            }
        }
        true
    }

    /// Lines up the subtree every input stands at: emits a leaf of the
    /// result, or a node whose children are then lined up (the frame).
    fn subtree(&mut self, mut pos: Vec<Pos>) -> Option<Frame<'d>> {
        let width = pos.len();
        let items: Vec<Option<Item<'d>>> = (0..width)
            .map(|i| match pos[i] {
                Pos::Walk => self.inputs[i].decoder.peek(),
                _ => None,
            })
            .collect();
        for i in 0..width {
            if pos[i] == Pos::Walk && items[i].is_none() {
                self.error(ErrorKind::Custom("the TreeDef ended early".into()), i);
                pos[i] = Pos::Absent;
            }
        }
        if self.alone_after_a_mismatch(&pos) {
            return None;
        }
        let first_node =
            (0..width).find(|&i| pos[i] == Pos::Walk && matches!(items[i], Some(Item::Node(..))));
        let Some(r) = first_node else {
            self.leaf_row(&pos);
            return None;
        };
        let Some(Item::Node(rnode, rstatics)) = items[r] else {
            return None;
        };

        // Leaves against this subtree: broadcast them, or report them.
        for i in 0..width {
            if !(pos[i] == Pos::Walk && matches!(items[i], Some(Item::Leaf))) {
                continue;
            }
            if self.may_broadcast(i) {
                if i == 0 && self.policy.spans {
                    let def = self.inputs[r].decoder.clone().copy_subtree();
                    let start = self.inputs[r].next_leaf;
                    self.spans.push(Span {
                        def: Some(def),
                        start,
                    });
                }
                pos[i] = Pos::Broadcast(self.take_leaf(i));
            } else {
                self.node_mismatch((i, describe(items[i])), (r, describe_node(rnode)));
                self.skip(i);
                pos[i] = Pos::Absent;
            }
        }

        // Nodes of another kind (or length, or type) than the first: report.
        let mut nodes = vec![r];
        for i in r + 1..width {
            let Some(Item::Node(node, statics)) = items[i] else {
                continue;
            };
            if pos[i] != Pos::Walk {
                continue;
            }
            if self.same_kind(r, rnode, rstatics, i, node, statics) {
                nodes.push(i);
            } else {
                self.skip(i);
                pos[i] = Pos::Absent;
            }
        }

        if self.alone_after_a_mismatch(&pos) {
            return None;
        }

        let path_len = self.path.len();
        let frame = |pos: Vec<Pos>, children: Children<'d>, keys: ChildKeys, len: usize| Frame {
            pos,
            children,
            keys,
            next: 0,
            len,
            path_len,
        };
        match rnode {
            Record::Map(_) => {
                let (keys, plan, own) = self.map_plan(&nodes, &items, &mut pos);
                // Inputs whose keys could not be compared were skipped.
                nodes.retain(|&i| pos[i] == Pos::Walk);
                let len = keys.item_count();
                if let Some(b) = &mut self.builder {
                    b.raw(Record::Map(len), core::slice::from_ref(&keys));
                }
                self.consume_records(&nodes);
                let taken = vec![0; width];
                let jumps = self.jumps(&plan, &own, &pos);
                Some(frame(
                    pos,
                    Children::Keyed {
                        plan,
                        taken,
                        own,
                        jumps,
                    },
                    ChildKeys::Map(keys),
                    len,
                ))
            }
            Record::Some | Record::None => {
                let (is_some, plan, own) = self.option_plan(&nodes, &items, &mut pos);
                if let Some(b) = &mut self.builder {
                    b.raw(if is_some { Record::Some } else { Record::None }, &[]);
                }
                self.consume_records(&nodes);
                let taken = vec![0; width];
                Some(frame(
                    pos,
                    Children::Keyed {
                        plan,
                        taken,
                        own,
                        jumps: Vec::new(),
                    },
                    ChildKeys::None,
                    usize::from(is_some),
                ))
            }
            Record::Struct(_) | Record::Seq(_) | Record::Tuple(_) => {
                if let Some(b) = &mut self.builder {
                    b.raw(rnode, rstatics);
                }
                self.consume_records(&nodes);
                let keys = match rnode {
                    Record::Struct(schema) => ChildKeys::fields(schema),
                    _ => ChildKeys::Index,
                };
                Some(frame(pos, Children::InOrder, keys, rnode.arity()))
            }
            Record::Leaves(_) => None,
        }
    }

    /// Emits one leaf of the result: every walking input is at a leaf.
    fn leaf_row(&mut self, pos: &[Pos]) {
        for (i, p) in pos.iter().enumerate() {
            let arg = match *p {
                Pos::Walk => {
                    if i == 0 && self.policy.spans {
                        let start = self.inputs.get(1).map_or(0, |other| other.next_leaf);
                        self.spans.push(Span { def: None, start });
                    }
                    Arg::Leaf(self.take_leaf(i))
                }
                Pos::Broadcast(k) => Arg::Leaf(k),
                Pos::Absent => Arg::Missing,
            };
            if self.recording() {
                self.args.push(arg);
            }
        }
        if let Some(b) = &mut self.builder {
            b.leaf();
        }
    }

    /// How many of the next (at most `max`) items are leaves in every
    /// walking input; 0 if no input walks.
    fn leaf_run(&self, pos: &[Pos], max: usize) -> usize {
        let mut run: Option<usize> = None;
        for (i, p) in pos.iter().enumerate() {
            if *p == Pos::Walk {
                let mut probe = self.inputs[i].decoder.clone();
                let n = probe.take_leaves(run.unwrap_or(max));
                run = Some(n);
            }
        }
        run.unwrap_or(0)
    }

    /// Emits `n` leaves of the result at once (see [`Aligner::leaf_run`]).
    fn leaf_rows(&mut self, pos: &[Pos], n: usize) {
        let first: Vec<usize> = self.inputs.iter().map(|input| input.next_leaf).collect();
        let rows = if self.recording() { n } else { 0 };
        for r in 0..rows {
            for (i, p) in pos.iter().enumerate() {
                self.args.push(match *p {
                    Pos::Walk => Arg::Leaf(first[i] + r),
                    Pos::Broadcast(k) => Arg::Leaf(k),
                    Pos::Absent => Arg::Missing,
                });
            }
        }
        for (i, p) in pos.iter().enumerate() {
            if *p == Pos::Walk {
                let input = &mut self.inputs[i];
                let mut taken = 0;
                while taken < n {
                    match input.decoder.take_leaves(n - taken) {
                        0 => break,
                        k => taken += k,
                    }
                }
                input.next_leaf += taken;
                if i == 0 && self.policy.spans && self.errors.is_empty() {
                    let other = first.get(1).copied().unwrap_or(0);
                    self.spans.extend((0..n).map(|r| Span {
                        def: None,
                        start: other + r,
                    }));
                }
            }
        }
        if let Some(b) = &mut self.builder {
            b.leaves(n);
        }
    }

    /// Consumes the node record of every input in `nodes`.
    fn consume_records(&mut self, nodes: &[usize]) {
        for &i in nodes {
            self.inputs[i].decoder.next_item();
        }
    }

    /// Whether input `i`'s node can be lined up with input `r`'s; reports
    /// why not. Equal schemas with other static fields are reported but
    /// still lined up (their children agree).
    fn same_kind(
        &mut self,
        r: usize,
        rnode: Record,
        rstatics: &[StaticValue],
        i: usize,
        node: Record,
        statics: &[StaticValue],
    ) -> bool {
        match (rnode, node) {
            (Record::Struct(a), Record::Struct(b)) if a == b => {
                let names = a.fields().iter().filter(|f| f.is_static).map(|f| f.name);
                for ((x, y), name) in rstatics.iter().zip(statics).zip(names) {
                    if x != y {
                        let mut tail: Vec<KeyEntry> =
                            a.variant().map(KeyEntry::Variant).into_iter().collect();
                        tail.push(KeyEntry::Field(name));
                        self.error_at(
                            ErrorKind::StaticMismatch {
                                expected: format!("{x:?}"),
                                found: format!("{y:?}"),
                            },
                            i,
                            &tail,
                        );
                    }
                }
                true
            }
            (Record::Struct(a), Record::Struct(b))
                if a.type_name() == b.type_name()
                    && a.module_path() == b.module_path()
                    && a.variant().is_some() =>
            {
                self.error(
                    ErrorKind::NodeMismatch {
                        expected: format!("variant {}", a.display_name()),
                        found: format!("variant {}", b.display_name()),
                    },
                    i,
                );
                false
            }
            (Record::Seq(a), Record::Seq(b)) if a != b => {
                self.error(
                    ErrorKind::LengthMismatch {
                        expected: a,
                        found: b,
                    },
                    i,
                );
                false
            }
            (Record::Seq(_), Record::Seq(_))
            | (Record::Map(_), Record::Map(_))
            | (Record::Some | Record::None, Record::Some | Record::None) => true,
            (a, b) if a == b => true,
            (a, b) => {
                let (da, db) = describe_node_pair(a, b);
                self.node_mismatch((r, da), (i, db));
                false
            }
        }
    }

    /// The keys of the result at a map, per the mode, and for each key which
    /// child of each input holds it. Reports keys that cannot be lined up.
    fn map_plan(
        &mut self,
        nodes: &[usize],
        items: &[Option<Item<'d>>],
        pos: &mut [Pos],
    ) -> (StaticValue, Vec<Option<usize>>, Vec<usize>) {
        let width = pos.len();
        let keys_of = |i: usize| match items[i] {
            Some(Item::Node(_, statics)) => statics.first(),
            _ => None,
        };
        let r = nodes[0];
        let empty = StaticValue::keys::<()>(Vec::new());
        let rkeys = keys_of(r).unwrap_or(&empty).clone();
        // Inputs whose keys are of another type are reported and dropped.
        let mut members: Vec<usize> = vec![r];
        for &i in &nodes[1..] {
            let keys = keys_of(i).unwrap_or(&empty);
            let comparable = keys.item_count() == 0
                || rkeys.item_count() == 0
                || rkeys.key_cmp(0, keys, 0).is_some();
            if comparable {
                members.push(i);
            } else {
                self.error(
                    ErrorKind::StaticMismatch {
                        expected: format!("map keys {rkeys:?}"),
                        found: format!("map keys {keys:?}"),
                    },
                    i,
                );
                self.skip(i);
                pos[i] = Pos::Absent;
            }
        }
        let sources: Vec<&StaticValue> = members
            .iter()
            .map(|&i| keys_of(i).unwrap_or(&empty))
            .collect();
        // The keys of the result, as (member, key index) picks.
        let picks: Vec<(usize, usize)> = match self.policy.mode {
            Mode::Strict | Mode::Left => (0..rkeys.item_count()).map(|k| (0, k)).collect(),
            Mode::Inner => (0..rkeys.item_count())
                .filter(|&k| (1..members.len()).all(|m| find_key(&sources, 0, k, m, k).is_some()))
                .map(|k| (0, k))
                .collect(),
            Mode::Outer => union(&sources),
        };
        let merged = rkeys.select_keys(&picks, &sources).unwrap_or(rkeys);
        let mut plan = vec![None; picks.len() * width];
        let mut own = vec![0; width];
        for (m, &i) in members.iter().enumerate() {
            own[i] = sources[m].item_count();
            let mut found = 0;
            let mut hint = 0;
            for (j, &(s, k)) in picks.iter().enumerate() {
                let at = if s == m {
                    Some(k)
                } else {
                    find_key(&sources, s, k, m, hint)
                };
                if let Some(t) = at {
                    hint = t + 1;
                }
                found += usize::from(at.is_some());
                plan[j * width + i] = at;
            }
            let complete = found == picks.len();
            if !self.lines_up(complete, complete && found == own[i]) {
                let list = |v: &StaticValue| (0..v.item_count()).map(|k| v.item_debug(k)).collect();
                self.error(
                    ErrorKind::KeyMismatch {
                        expected: list(&merged),
                        found: list(sources[m]),
                    },
                    i,
                );
            }
        }
        (merged, plan, own)
    }

    /// Whether the result has `Some` at an option, per the mode, and which
    /// inputs hold its value. Reports holes that cannot be lined up.
    fn option_plan(
        &mut self,
        nodes: &[usize],
        items: &[Option<Item<'d>>],
        pos: &mut [Pos],
    ) -> (bool, Vec<Option<usize>>, Vec<usize>) {
        let width = pos.len();
        let is_some = |i: usize| matches!(items[i], Some(Item::Node(Record::Some, _)));
        let r = nodes[0];
        let out = match self.policy.mode {
            Mode::Strict | Mode::Left => is_some(r),
            Mode::Inner => nodes.iter().all(|&i| is_some(i)),
            Mode::Outer => nodes.iter().any(|&i| is_some(i)),
        };
        let mut plan = vec![None; usize::from(out) * width];
        let mut own = vec![0; width];
        for &i in nodes {
            own[i] = usize::from(is_some(i));
            if out && is_some(i) {
                plan[i] = Some(0);
            }
            if !self.lines_up(is_some(i) || !out, is_some(i) == out) {
                let name = |s: bool| if s { "Some(_)" } else { "None" }.to_string();
                self.node_mismatch((r, name(is_some(r))), (i, name(is_some(i))));
            }
        }
        (out, plan, own)
    }

    /// Whether an input lines up at a map or an option, per the mode:
    /// `complete` when it holds every child of the result, `exact` when
    /// it holds those and no other.
    fn lines_up(&self, complete: bool, exact: bool) -> bool {
        match self.policy.mode {
            Mode::Strict => exact,
            Mode::Inner => true,
            Mode::Outer | Mode::Left => complete || self.policy.fill,
        }
    }

    /// The positions of the inputs at the frame's next child.
    fn enter_child(&mut self, frame: &mut Frame<'d>) -> Vec<Pos> {
        let j = frame.next;
        let width = frame.pos.len();
        let mut pos = frame.pos.clone();
        if let Children::Keyed {
            plan,
            taken,
            own,
            jumps,
        } = &mut frame.children
        {
            for i in 0..width {
                if frame.pos[i] != Pos::Walk {
                    continue;
                }
                let wanted = plan.get(j * width + i).copied().flatten();
                if let Some((_, marks)) = jumps.iter().find(|(k, _)| *k == i) {
                    // Read out of order: jump to the wanted child.
                    match wanted.and_then(|t| marks.get(t)) {
                        Some((decoder, next_leaf)) => {
                            let input = &mut self.inputs[i];
                            input.decoder = decoder.clone();
                            input.next_leaf = *next_leaf;
                        }
                        None => pos[i] = Pos::Absent,
                    }
                    continue;
                }
                match wanted {
                    Some(t) if t >= taken[i] && t < own[i] => {
                        while taken[i] < t {
                            self.skip(i);
                            taken[i] += 1;
                        }
                        taken[i] += 1;
                    }
                    _ => pos[i] = Pos::Absent,
                }
            }
        }
        frame.keys.push(j, &mut self.path);
        pos
    }

    /// Skips the children of a keyed node that no child of the result took.
    fn close(&mut self, frame: &mut Frame<'d>) {
        if let Children::Keyed {
            taken, own, jumps, ..
        } = &mut frame.children
        {
            for i in 0..frame.pos.len() {
                if frame.pos[i] != Pos::Walk {
                    continue;
                }
                if let Some((decoder, next_leaf)) = jumps
                    .iter()
                    .find(|(k, _)| *k == i)
                    .and_then(|(_, marks)| marks.last())
                {
                    let input = &mut self.inputs[i];
                    input.decoder = decoder.clone();
                    input.next_leaf = *next_leaf;
                    continue;
                }
                while taken[i] < own[i] {
                    self.skip(i);
                    taken[i] += 1;
                }
            }
        }
    }
}

/// Which key of `sources[m]` equals key `k` of `sources[s]`. Keys without
/// an order are looked for at `hint` first (where they sit when both maps
/// have the same order), then everywhere.
fn find_key(sources: &[&StaticValue], s: usize, k: usize, m: usize, hint: usize) -> Option<usize> {
    let (a, b) = (sources[s], sources[m]);
    let n = b.item_count();
    match a.key_cmp(k, b, 0) {
        Some(KeyOrder::Ordered(_)) => {
            // Sorted keys: binary search.
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = (lo + hi) / 2;
                match a.key_cmp(k, b, mid) {
                    Some(KeyOrder::Ordered(Ordering::Greater)) => lo = mid + 1,
                    Some(KeyOrder::Ordered(Ordering::Less)) => hi = mid,
                    Some(KeyOrder::Ordered(Ordering::Equal)) => return Some(mid),
                    _ => return None,
                }
            }
            None
        }
        Some(KeyOrder::Unordered { .. }) => {
            let equal = |j: usize| a.key_cmp(k, b, j) == Some(KeyOrder::Unordered { equal: true });
            if hint < n && equal(hint) {
                return Some(hint);
            }
            (0..n).find(|&j| equal(j))
        }
        None => None,
    }
}

/// The union of the key sets: sorted if the keys carry an order, else in
/// order of first appearance (input by input).
fn union(sources: &[&StaticValue]) -> Vec<(usize, usize)> {
    let mut picks: Vec<(usize, usize)> = Vec::new();
    for (m, keys) in sources.iter().enumerate() {
        for k in 0..keys.item_count() {
            let seen = (0..m).any(|earlier| find_key(sources, m, k, earlier, k).is_some());
            if !seen {
                picks.push((m, k));
            }
        }
    }
    let cmp =
        |a: &(usize, usize), b: &(usize, usize)| match sources[a.0].key_cmp(a.1, sources[b.0], b.1)
        {
            Some(KeyOrder::Ordered(o)) => o,
            _ => Ordering::Equal,
        };
    // A stable sort: unordered keys keep their order of appearance.
    picks.sort_by(cmp);
    picks
}
