//! Filter, partition and combine (equinox's `filter` / `partition` /
//! `combine`; PAX's split of parameters and state): a tree `T` with leaves
//! `L` is split into trees `U` of the same structure whose leaves are
//! `Option<L>` (`Mlp<f32>` to `Mlp<Option<f32>>`), the holes being `None`,
//! and put back together.
//!
//! `Option` is a node, not a leaf, so a `U` is built from a TreeDef that has
//! an extra `Some`/`None` node at every leaf of `T` and is unflattened as
//! `map_into` does: a `U` of another shape is an error naming the path.
//! `combine` goes the other way, driven by `T`: where `T` wants a leaf, a
//! [`CombineSource`] reads one `Some`/`None` from every part and takes the
//! leaf of the one part that holds it; everywhere else the parts must agree
//! node for node.

use alloc::format;
use alloc::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::ops::tracker::follow_path;
use crate::ops::tracker::PathTracker;
use crate::ops::{flatten, unflatten};
use crate::paths::key_path::{KeyPath, KeyRef};
use crate::sources::def_source::DefSource;
use crate::sources::source::Source;
use crate::static_data::{Static, StaticValue};
use crate::traits::flatten::unwind::Unwinding;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::traits::visit::Sink;
use crate::treedef::describe_view;
use crate::treedef::node::NodeRef;
use crate::treedef::node::NodeView;
use crate::treedef::schema::Schema;
use crate::treedef::TreeDefBuilder;

/// One output tree under construction: its TreeDef and its leaves.
struct Side<L> {
    def: TreeDefBuilder,
    leaves: Vec<L>,
}

/// Sends each leaf to side 0 if `pred(path, leaf)` holds, else to side 1
/// (dropped if there is no side 1); the other sides get a `None` hole.
struct SplitSink<L, F, const N: usize> {
    tracker: PathTracker,
    sides: [Side<L>; N],
    pred: F,
}

impl<L, F: FnMut(&KeyPath, &L) -> bool, const N: usize> SplitSink<L, F, N> {
    #[inline]
    fn route(&mut self, leaf: L) {
        let to = if (self.pred)(self.tracker.path(), &leaf) {
            0
        } else {
            1
        };
        for (j, side) in self.sides.iter_mut().enumerate() {
            if j == to {
                side.def.node(NodeRef::Some);
                side.def.leaf();
            } else {
                side.def.node(NodeRef::None);
            }
        }
        if let Some(side) = self.sides.get_mut(to) {
            side.leaves.push(leaf);
        }
    }
}

impl<L, F: FnMut(&KeyPath, &L) -> bool, const N: usize> Sink<L> for SplitSink<L, F, N> {
    #[inline]
    fn leaf(&mut self, leaf: L) {
        self.route(leaf);
    }
    fn leaf_vec(&mut self, leaves: Vec<L>) {
        for (i, leaf) in leaves.into_iter().enumerate() {
            self.tracker.enter(KeyRef::Index(i));
            self.route(leaf);
            self.tracker.exit();
        }
    }
    #[inline]
    fn node(&mut self, node: NodeRef<'_>) {
        self.tracker.node(&node);
        for side in &mut self.sides {
            side.def.node(node);
        }
    }
    fn map_keys<K: FnOnce() -> StaticValue>(&mut self, keys: K) {
        let keys = keys();
        for side in &mut self.sides {
            side.def.map_keys(keys.clone());
        }
    }
    follow_path!(tracker);
}

/// Splits `tree` into `N` sides and rebuilds each as a `U`.
fn split<Ns, T, U, F, const N: usize>(tree: T, pred: F) -> Result<[U; N], Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = T::Leaf>,
    F: FnMut(&KeyPath, &T::Leaf) -> bool,
{
    let mut sink: SplitSink<T::Leaf, F, N> = SplitSink {
        tracker: PathTracker::new(),
        sides: core::array::from_fn(|_| Side {
            def: TreeDefBuilder::new(),
            leaves: Vec::new(),
        }),
        pred,
    };
    tree.flatten_into(&mut sink);
    // The sides built are held until all are: an error at a later one
    // drops them with a walk (`unwind.rs`), however deep they are.
    let mut out = Unwinding::elements::<Ns>(Vec::with_capacity(N));
    for side in sink.sides {
        out.get_mut()
            .push(unflatten::<Ns, U, _>(&side.def.build(), side.leaves)?);
    }
    <[U; N]>::try_from(out.take()).map_err(|_| Error::custom("a side was not rebuilt"))
}

/// `pytree_std::split::partition` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Counter<T> {
///     #[pytree(kind = "state")]
///     count: T,
///     bias: T,
/// }
/// let (params, state): (Counter<Option<f64>>, Counter<Option<f64>>) =
///     pytree_core::ops::partition::partition::<pytree_std::Std, _, _, _>(Counter { count: 1.0, bias: 0.5 }, |path, _| path.kind() == "param")?;
/// assert_eq!(params, Counter { count: None, bias: Some(0.5) });
/// assert_eq!(state, Counter { count: Some(1.0), bias: None });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn partition<Ns, T, U, F>(tree: T, pred: F) -> Result<(U, U), Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = T::Leaf>,
    F: FnMut(&KeyPath, &T::Leaf) -> bool,
{
    let [kept, rest] = split::<Ns, T, U, F, 2>(tree, pred)?;
    Ok((kept, rest))
}

/// The leaves kept by `pred`, the others `None` (`partition`'s first half), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let big: Vec<Option<i32>> = pytree_core::ops::partition::filter::<pytree_std::Std, _, _, _>(vec![1, 20, 3], |_, x| *x > 10)?;
/// assert_eq!(big, [None, Some(20), None]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn filter<Ns, T, U, F>(tree: T, pred: F) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = T::Leaf>,
    F: FnMut(&KeyPath, &T::Leaf) -> bool,
{
    let [kept] = split::<Ns, T, U, F, 1>(tree, pred)?;
    Ok(kept)
}

/// The [`Source`] that `combine` rebuilds `T` from: `N` sources read in
/// lockstep. A leaf of `T` is an `Option` node in every part, exactly one
/// of them `Some`; every other node must be the same in all parts (else an
/// error naming the part).
///
/// ```
/// use pytree_std::{DefSource, Std, Unflatten};
/// use pytree_core::CombineSource;
/// let (a, da) = pytree_std::flatten(vec![Some(1), None]);
/// let (b, db) = pytree_std::flatten(vec![None, Some(2)]);
/// let mut src = CombineSource::new([DefSource::new(&da, a.into_iter()), DefSource::new(&db, b.into_iter())]);
/// let v = <Vec<i32> as Unflatten<Std>>::unflatten_from(&mut src)?;
/// assert_eq!(v, [1, 2]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct CombineSource<S, const N: usize> {
    parts: [S; N],
    /// The part whose leaf [`Source::any_node`] reported and
    /// [`Source::leaf`] takes next (its holes are already read).
    pending_leaf: Option<usize>,
}

impl<S, const N: usize> CombineSource<S, N> {
    /// Reads `parts` in lockstep.
    ///
    /// ```
    /// let def = pytree_std::structure(&Some(1));
    /// let _src = pytree_core::CombineSource::new([pytree_std::DefSource::new(&def, vec![1].into_iter())]);
    /// ```
    pub fn new(parts: [S; N]) -> Self {
        CombineSource {
            parts,
            pending_leaf: None,
        }
    }

    /// The parts, to finish them.
    ///
    /// ```
    /// let def = pytree_std::structure(&Some(1));
    /// let src = pytree_core::CombineSource::new([pytree_std::DefSource::new(&def, vec![1].into_iter())]);
    /// assert_eq!(src.into_parts().len(), 1);
    /// ```
    pub fn into_parts(self) -> [S; N] {
        self.parts
    }

    /// Reads one node from every part; all must agree (`differ` builds the
    /// error for a part that reads `found` where part 0 read `expected`).
    fn agree<R: PartialEq>(
        &mut self,
        mut read: impl FnMut(&mut S) -> Result<R, Error>,
        differ: impl Fn(&R, &R) -> ErrorKind,
    ) -> Result<R, Error> {
        let mut first: Option<R> = None;
        for (i, part) in self.parts.iter_mut().enumerate() {
            let value = read(part).map_err(|e| e.in_tree(i))?;
            match &first {
                None => first = Some(value),
                Some(expected) if *expected != value => {
                    return Err(Error::new(differ(expected, &value)).in_tree(i));
                }
                Some(_) => {}
            }
        }
        first.ok_or_else(|| Error::custom("combine needs at least one tree"))
    }
}

/// Whether two parts have the same internal node here.
fn same_node(a: &NodeView, b: &NodeView) -> bool {
    match (a, b) {
        (
            NodeView::Struct {
                schema: sa,
                statics: va,
            },
            NodeView::Struct {
                schema: sb,
                statics: vb,
            },
        ) => sa == sb && va == vb,
        (NodeView::Seq(x), NodeView::Seq(y)) | (NodeView::Tuple(x), NodeView::Tuple(y)) => x == y,
        (NodeView::Map { len: x, keys: kx }, NodeView::Map { len: y, keys: ky }) => {
            x == y && kx == ky
        }
        (NodeView::Some, NodeView::Some)
        | (NodeView::None, NodeView::None)
        | (NodeView::Leaf, NodeView::Leaf) => true,
        _ => false,
    }
}

impl<L, S: Source<L>, const N: usize> Source<L> for CombineSource<S, N> {
    fn leaf(&mut self) -> Result<L, Error> {
        if let Some(i) = self.pending_leaf.take() {
            return match self.parts.get_mut(i) {
                Some(part) => part.leaf().map_err(|e| e.in_tree(i)),
                None => Err(Error::custom("combine lost a part")),
            };
        }
        let mut holds = [false; N];
        for (i, part) in self.parts.iter_mut().enumerate() {
            holds[i] = part.option_node().map_err(|e| e.in_tree(i))?;
        }
        let mut holders = holds
            .iter()
            .enumerate()
            .filter(|(_, h)| **h)
            .map(|(i, _)| i);
        match (holders.next(), holders.next()) {
            (Some(i), None) => match self.parts.get_mut(i) {
                Some(part) => part.leaf().map_err(|e| e.in_tree(i)),
                None => Err(Error::custom("combine lost a part")),
            },
            _ => Err(Error::new(ErrorKind::CombineConflict {
                holders: holds
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| **h)
                    .map(|(i, _)| i)
                    .collect(),
                trees: N,
            })),
        }
    }

    fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error> {
        self.agree(
            |part| part.struct_node(candidates),
            |a, b| {
                let name = |i: &usize| match candidates.get(*i) {
                    Some(schema) => format!("{}", schema.display_name()),
                    None => format!("variant {i}"),
                };
                ErrorKind::NodeMismatch {
                    expected: name(a),
                    found: name(b),
                }
            },
        )
    }

    fn static_field<T: Static>(&mut self) -> Result<T, Error> {
        self.agree(
            |part| part.static_field::<T>(),
            |a, b| ErrorKind::StaticMismatch {
                expected: format!("{a:?}"),
                found: format!("{b:?}"),
            },
        )
    }

    fn seq_node(&mut self) -> Result<usize, Error> {
        self.agree(
            |part| part.seq_node(),
            |a, b| ErrorKind::LengthMismatch {
                expected: *a,
                found: *b,
            },
        )
    }

    fn tuple_node(&mut self, arity: usize) -> Result<(), Error> {
        // `()` never differs, so `differ` is never called.
        self.agree(
            |part| part.tuple_node(arity),
            |_, _| ErrorKind::Custom("tuples of one arity never differ".into()),
        )
    }

    fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error> {
        self.agree(
            |part| part.map_node::<K>(),
            |a, b| ErrorKind::KeyMismatch {
                expected: a.iter().map(|k| format!("{k:?}")).collect(),
                found: b.iter().map(|k| format!("{k:?}")).collect(),
            },
        )
    }

    /// For readers of any structure (a `Tree`): a node that every part
    /// has is that node; where the parts have a leaf in one and `None` in
    /// all others (a hole), it is that leaf (a part may wrap it in
    /// `Some`, as a typed part of `Option` leaves does); `None` in every
    /// part is `None`. Anything else is an error naming the part.
    fn any_node(&mut self) -> Result<NodeView, Error> {
        if self.pending_leaf.is_some() {
            return Ok(NodeView::Leaf);
        }
        let mut views: Vec<NodeView> = Vec::with_capacity(N);
        for (i, part) in self.parts.iter_mut().enumerate() {
            views.push(part.any_node().map_err(|e| e.in_tree(i))?);
        }
        let Some(first) = views.first() else {
            return Err(Error::custom("combine needs at least one tree"));
        };
        if views.iter().all(|v| same_node(first, v)) && !matches!(first, NodeView::Leaf) {
            return Ok(first.clone());
        }
        let leafy = |v: &NodeView| matches!(v, NodeView::Leaf | NodeView::Some | NodeView::None);
        if views.iter().all(leafy) {
            let holders: Vec<usize> = (0..N)
                .filter(|&i| !matches!(views[i], NodeView::None))
                .collect();
            let [i] = holders[..] else {
                return Err(Error::new(ErrorKind::CombineConflict { holders, trees: N }));
            };
            let part = self
                .parts
                .get_mut(i)
                .ok_or_else(|| Error::custom("combine lost a part"))?;
            let mut view = views.swap_remove(i);
            // `Some` around the leaf: read down to it.
            while matches!(view, NodeView::Some) {
                view = part.any_node().map_err(|e| e.in_tree(i))?;
            }
            if !matches!(view, NodeView::Leaf) {
                return Err(Error::new(ErrorKind::NodeMismatch {
                    expected: "a leaf (the other trees have a hole here)".into(),
                    found: describe_view(&view),
                })
                .in_tree(i));
            }
            self.pending_leaf = Some(i);
            return Ok(NodeView::Leaf);
        }
        let i = views.iter().position(|v| !same_node(first, v)).unwrap_or(0);
        Err(Error::new(ErrorKind::NodeMismatch {
            expected: describe_view(first),
            found: describe_view(&views[i]),
        })
        .in_tree(i))
    }

    fn option_node(&mut self) -> Result<bool, Error> {
        self.agree(
            |part| part.option_node(),
            |a, _| {
                let (expected, found) = if *a {
                    ("Some(_)", "None")
                } else {
                    ("None", "Some(_)")
                };
                ErrorKind::NodeMismatch {
                    expected: expected.into(),
                    found: found.into(),
                }
            },
        )
    }
}

/// `pytree_std::split::combine` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let t: (i32, i32) = pytree_core::ops::partition::combine::<pytree_std::Std, _, _, 2>([(Some(1), None), (None, Some(2))])?;
/// assert_eq!(t, (1, 2));
/// let err = pytree_core::ops::partition::combine::<pytree_std::Std, _, (i32, i32), 2>([(Some(1), None::<i32>), (None, None)]).unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: none of the 2 trees holds a leaf here; combine needs exactly one");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn combine<Ns, U, T, const N: usize>(parts: [U; N]) -> Result<T, Error>
where
    U: Flatten<Ns>,
    T: Unflatten<Ns, Leaf = U::Leaf>,
{
    let mut flat = parts.map(flatten::<Ns, U>);
    let mut leaves = flat
        .each_mut()
        .map(|(leaves, _)| core::mem::take(leaves))
        .into_iter();
    let sources = flat
        .each_ref()
        .map(|(_, def)| DefSource::new(def, leaves.next().unwrap_or_default().into_iter()));
    let mut source = CombineSource::new(sources);
    let value = T::unflatten_from(&mut source)?;
    for (i, mut part) in source.into_parts().into_iter().enumerate() {
        part.finish().map_err(|e| e.in_tree(i))?;
    }
    Ok(value)
}
