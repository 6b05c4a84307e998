//! The callbacks a traversal drives. Every [`Flatten`](crate::Flatten) impl
//! walks its value in pre-order and reports to one of these:
//! a [`Sink`] takes leaves by value (flatten), a [`Visit`] by reference
//! (leaves, structure, paths), a [`VisitMut`] by mutable reference (in-place
//! updates). The two by-reference walks lend leaves as the leaf type says
//! ([`Leaf::Ref`](crate::Leaf::Ref), [`Leaf::Mut`](crate::Leaf::Mut)). Operations are visitors; the derive writes the walks once.
//!
//! Every method but the leaf callback has an empty default, so a visitor that
//! ignores structure or paths compiles to a plain loop over the leaves.

use alloc::vec::Vec;

use crate::paths::key_path::KeyRef;
use crate::static_data::StaticValue;
use crate::treedef::node::NodeRef;

/// The defaults of [`Sink::leaf_vec`], [`Visit::leaf_run`] and
/// [`VisitMut::leaf_run`]: each leaf entered at its index, one by one.
macro_rules! each_at_its_index {
    ($walker:ident, $leaves:expr) => {
        for (i, leaf) in $leaves.enumerate() {
            $walker.enter(KeyRef::Index(i));
            $walker.leaf(leaf);
            $walker.exit();
        }
    };
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
    /// True for the sink that takes a value apart to drop it (pytree-core's
    /// `unwind.rs`): a shared pointer with other handles then gives up its
    /// handle instead of cloning what it points to. Every other sink keeps
    /// the default.
    #[doc(hidden)]
    const DISCARDS: bool = false;

    /// One leaf.
    ///
    /// ```
    /// use pytree_std::{Flatten, Sink, Std};
    /// struct Last(Option<u8>);
    /// impl Sink<u8> for Last { fn leaf(&mut self, x: u8) { self.0 = Some(x) } }
    /// let mut s = Last(None);
    /// Flatten::<Std>::flatten_into((1u8, 2u8), &mut s);
    /// assert_eq!(s.0, Some(2));
    /// ```
    fn leaf(&mut self, leaf: L);
    /// The elements of a sequence whose elements are leaves, at once.
    ///
    /// ```
    /// use pytree_std::{Flatten, Sink, Std};
    /// struct Chunks(Vec<usize>);
    /// impl Sink<u8> for Chunks {
    ///     fn leaf(&mut self, _: u8) { self.0.push(1) }
    ///     fn leaf_vec(&mut self, v: Vec<u8>) { self.0.push(v.len()) }
    /// }
    /// let mut s = Chunks(vec![]);
    /// Flatten::<Std>::flatten_into(vec![1u8, 2, 3], &mut s);
    /// assert_eq!(s.0, [3]);
    /// ```
    fn leaf_vec(&mut self, leaves: Vec<L>) {
        each_at_its_index!(self, leaves.into_iter());
    }
    /// A node, before its children.
    ///
    /// ```
    /// use pytree_std::{Flatten, NodeRef, Sink, Std};
    /// struct Nodes(usize);
    /// impl Sink<u8> for Nodes {
    ///     fn leaf(&mut self, _: u8) {}
    ///     fn node(&mut self, _: NodeRef<'_>) { self.0 += 1 }
    /// }
    /// let mut s = Nodes(0);
    /// Flatten::<Std>::flatten_into(vec![Some(1u8), None], &mut s);
    /// assert_eq!(s.0, 3);
    /// ```
    fn node(&mut self, _node: NodeRef<'_>) {}
    /// The keys of the most recent map whose keys are not yet given, after
    /// its children. Only visitors that build a TreeDef call `keys`.
    ///
    /// ```
    /// use pytree_std::{Flatten, Sink, StaticValue, Std};
    /// use std::collections::BTreeMap;
    /// struct Keys(Vec<StaticValue>);
    /// impl Sink<u8> for Keys {
    ///     fn leaf(&mut self, _: u8) {}
    ///     fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) { self.0.push(keys()) }
    /// }
    /// let mut s = Keys(vec![]);
    /// Flatten::<Std>::flatten_into(BTreeMap::from([("a", 1u8)]), &mut s);
    /// assert_eq!(s.0[0].item_debug(0), "\"a\"");
    /// ```
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, _keys: F) {}
    /// The walk goes down to a child.
    ///
    /// ```
    /// use pytree_std::{Flatten, KeyRef, Sink, Std};
    /// struct Paths(Vec<String>, Vec<String>);
    /// impl Sink<u8> for Paths {
    ///     fn leaf(&mut self, _: u8) { self.1.push(self.0.concat()) }
    ///     fn enter(&mut self, k: KeyRef<'_>) { self.0.push(k.to_owned_entry().to_string()) }
    ///     fn exit(&mut self) { self.0.pop(); }
    /// }
    /// let mut s = Paths(vec![], vec![]);
    /// Flatten::<Std>::flatten_into((1u8, [2u8]), &mut s);
    /// assert_eq!(s.1, ["[0]", "[1][0]"]);
    /// ```
    fn enter(&mut self, _key: KeyRef<'_>) {}
    /// The walk comes back from the child last entered.
    ///
    /// ```
    /// use pytree_std::{Flatten, KeyRef, Sink, Std};
    /// struct MaxDepth(usize, usize);
    /// impl Sink<u8> for MaxDepth {
    ///     fn leaf(&mut self, _: u8) { self.1 = self.1.max(self.0) }
    ///     fn enter(&mut self, _: KeyRef<'_>) { self.0 += 1 }
    ///     fn exit(&mut self) { self.0 -= 1 }
    /// }
    /// let mut s = MaxDepth(0, 0);
    /// Flatten::<Std>::flatten_into(vec![vec![1u8]], &mut s);
    /// assert_eq!((s.0, s.1), (0, 2));
    /// ```
    fn exit(&mut self) {}
    /// How much the sink has stored so far: taken before the first element
    /// of a sequence, for [`reserve_like`](Sink::reserve_like) and
    /// [`repeat_like`](Sink::repeat_like). Sinks that store nothing keep
    /// the default.
    #[doc(hidden)]
    #[inline(always)]
    fn stored(&self) -> Stored {
        Stored::default()
    }
    /// A hint after the first element of a sequence: `times` more elements
    /// follow, and what the first one stored since `since` (see
    /// [`stored`](Sink::stored)) tells how much room they may need.
    #[doc(hidden)]
    #[inline(always)]
    fn reserve_like(&mut self, _since: Stored, _times: usize) {}
    /// After the first element of a sequence whose elements all have the
    /// same structure and `each` leaves ([`Flatten::UNIFORM_LEAVES`](crate::Flatten::UNIFORM_LEAVES)):
    /// a sink that builds a TreeDef may write the records of the `times`
    /// elements that follow now, as copies of what the first one wrote
    /// since `since`, and return the `Vec` its leaves go to; the walk then
    /// pushes only those elements' leaves there (no nodes, keys, or
    /// enter/exit). The default declines.
    #[doc(hidden)]
    #[inline(always)]
    fn repeat_like(&mut self, _since: Stored, _times: usize, _each: usize) -> Option<&mut Vec<L>> {
        None
    }
}

/// How much a [`Sink`] has stored: its leaves, and the TreeDef records it
/// has written (a pending run of leaves counted as the record it will be).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stored {
    /// Leaves stored.
    pub leaves: usize,
    /// Records written, a pending run of leaves included.
    pub records: usize,
}

/// The sink the elements after the first of a repeated sequence go through
/// ([`Sink::repeat_like`]): it writes leaves into the spare capacity of
/// the flattening sink's `Vec` (reserved for all of them by `repeat_like`)
/// and drops everything else, whose records are already written. Its type
/// does not depend on the sink it stands in for, so a recursive type
/// flattened through it instantiates it once, not once per level.
///
/// A leaf costs a compare of two counters and a store: the counters stay
/// in registers, and the one call on the way (when the room is used up) never
/// returns, so the leaves of an element being moved need not be saved
/// around it. More leaves than the room (a type whose `UNIFORM_LEAVES`
/// is wrong) is the panic `flatten_vec`'s count check gives too. The
/// leaves written are the `Vec`'s when the sink is dropped, also when
/// unwinding.
pub(crate) struct LeavesOnly<'s, L> {
    out: &'s mut Vec<L>,
    /// `out`'s first unused slot (read once: the `Vec`'s own fields would
    /// be read again after every store of a leaf).
    spare: *mut L,
    /// Leaves written from `spare` on.
    written: usize,
    /// `out`'s spare capacity when the sink was made.
    room: usize,
}

impl<'s, L> LeavesOnly<'s, L> {
    /// A sink writing after `out`'s leaves, into its spare capacity.
    #[inline(always)]
    pub(crate) fn new(out: &'s mut Vec<L>) -> Self {
        let room = out.capacity() - out.len();
        let spare = out.spare_capacity_mut().as_mut_ptr().cast::<L>();
        LeavesOnly {
            out,
            spare,
            written: 0,
            room,
        }
    }
}

/// A leaf with no room left: the count `repeat_like` reserved for was
/// wrong. Never returns, so the caller keeps its registers.
#[cold]
#[inline(never)]
fn more_leaves_than_reserved<L>(leaf: L) -> ! {
    drop(leaf);
    panic!("a Flatten impl's UNIFORM_LEAVES is wrong: its elements gave more leaves than it says")
}

impl<L> Drop for LeavesOnly<'_, L> {
    #[inline(always)]
    fn drop(&mut self) {
        let len = self.out.len() + self.written;
        // SAFETY: `leaf` wrote the `written` slots after the length
        // (from `spare` on), each once, all within the capacity
        // (`written <= room`), so `len` leaves are initialized; `out` is
        // borrowed by this sink alone.
        unsafe { self.out.set_len(len) }
    }
}

impl<L> Sink<L> for LeavesOnly<'_, L> {
    #[inline(always)]
    fn leaf(&mut self, leaf: L) {
        if self.written == self.room {
            more_leaves_than_reserved(leaf);
        }
        // SAFETY: `written < room`, so the slot `spare + written` is
        // inside `out`'s spare capacity (which does not move: `out` is
        // borrowed by this sink alone) and not yet written (the length
        // moves only in `drop`).
        unsafe { self.spare.add(self.written).write(leaf) }
        self.written += 1;
    }
    #[inline]
    fn leaf_vec(&mut self, leaves: Vec<L>) {
        for leaf in leaves {
            self.leaf(leaf);
        }
    }
}

/// Receives a tree's leaves by shared reference, in pre-order.
///
/// `R` is how a leaf is lent: [`LeafRef<'a, Ns, L>`](crate::LeafRef), which
/// is `&'a L` for scalar leaves and a view for arrays (see [`Leaf`](crate::Leaf)).
///
/// ```
/// use pytree_std::{Flatten, Std, Visit};
/// struct Count(usize);
/// impl<R> Visit<R> for Count { fn leaf(&mut self, _: R) { self.0 += 1 } }
/// let mut c = Count(0);
/// Flatten::<Std>::visit(&(1.0f32, vec![2.0f32, 3.0]), &mut c);
/// assert_eq!(c.0, 3);
/// ```
pub trait Visit<R> {
    /// One leaf.
    ///
    /// ```
    /// use pytree_std::{Flatten, Std, Visit};
    /// struct Max(i32);
    /// impl Visit<&i32> for Max { fn leaf(&mut self, x: &i32) { self.0 = self.0.max(*x) } }
    /// let mut m = Max(i32::MIN);
    /// Flatten::<Std>::visit(&(3, vec![7, 5]), &mut m);
    /// assert_eq!(m.0, 7);
    /// ```
    fn leaf(&mut self, leaf: R);
    /// The elements of a sequence whose elements are leaves, at once (the
    /// default enters each index and calls [`leaf`](Visit::leaf)).
    ///
    /// ```
    /// use pytree_std::{Flatten, Std, Visit};
    /// struct Runs<'a>(Vec<Vec<&'a u8>>);
    /// impl<'a> Visit<&'a u8> for Runs<'a> {
    ///     fn leaf(&mut self, x: &'a u8) { self.0.push(vec![x]) }
    ///     fn leaf_run<I: ExactSizeIterator<Item = &'a u8>>(&mut self, xs: I) { self.0.push(xs.collect()) }
    /// }
    /// let t = (1u8, vec![2u8, 3]);
    /// let mut v = Runs(vec![]);
    /// Flatten::<Std>::visit(&t, &mut v);
    /// assert_eq!(v.0, [vec![&1u8], vec![&2, &3]]);
    /// ```
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        each_at_its_index!(self, leaves);
    }
    /// The values of a map whose values are leaves, at once, each with its
    /// key, in leaf order (the default enters each key and calls
    /// [`leaf`](Visit::leaf)). A visitor that ignores keys can take them
    /// as a run, as [`leaf_run`](Visit::leaf_run) takes a sequence's.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::{Flatten, KeyRef, Std, Visit};
    /// struct Values<'a>(Vec<Vec<&'a u8>>);
    /// impl<'a> Visit<&'a u8> for Values<'a> {
    ///     fn leaf(&mut self, x: &'a u8) { self.0.push(vec![x]) }
    ///     fn leaf_entries<'k, I: ExactSizeIterator<Item = (KeyRef<'k>, &'a u8)>>(&mut self, es: I) {
    ///         self.0.push(es.map(|(_, x)| x).collect())
    ///     }
    /// }
    /// let t = (1u8, BTreeMap::from([("a", 2u8), ("b", 3)]));
    /// let mut v = Values(vec![]);
    /// Flatten::<Std>::visit(&t, &mut v);
    /// assert_eq!(v.0, [vec![&1u8], vec![&2, &3]]);
    /// ```
    #[inline]
    fn leaf_entries<'k, I: ExactSizeIterator<Item = (KeyRef<'k>, R)>>(&mut self, entries: I) {
        for (key, leaf) in entries {
            self.enter(key);
            self.leaf(leaf);
            self.exit();
        }
    }
    /// A hint from a container before its children: at least `n` leaves
    /// follow (a map whose values are of a fixed shape, see
    /// `Flatten::UNIFORM_LEAVES`), so a visitor that stores leaves can make
    /// room once. Visitors that store nothing keep the default.
    #[doc(hidden)]
    #[inline(always)]
    fn reserve_leaves(&mut self, _n: usize) {}
    /// A node, before its children.
    ///
    /// ```
    /// use pytree_std::{Flatten, NodeRef, Std, Visit};
    /// struct Arities(Vec<usize>);
    /// impl<R> Visit<R> for Arities {
    ///     fn leaf(&mut self, _: R) {}
    ///     fn node(&mut self, n: NodeRef<'_>) { self.0.push(n.arity()) }
    /// }
    /// let mut v = Arities(vec![]);
    /// Flatten::<Std>::visit(&(1u8, Some(2u8)), &mut v);
    /// assert_eq!(v.0, [2, 1]);
    /// ```
    fn node(&mut self, _node: NodeRef<'_>) {}
    /// The keys of the most recent map whose keys are not yet given.
    ///
    /// ```
    /// use pytree_std::{Flatten, StaticValue, Std, Visit};
    /// use std::collections::BTreeMap;
    /// struct CountKeys(usize);
    /// impl<R> Visit<R> for CountKeys {
    ///     fn leaf(&mut self, _: R) {}
    ///     fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) { self.0 += keys().item_count() }
    /// }
    /// let mut v = CountKeys(0);
    /// Flatten::<Std>::visit(&BTreeMap::from([(1, 1u8), (2, 2u8)]), &mut v);
    /// assert_eq!(v.0, 2);
    /// ```
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, _keys: F) {}
    /// The walk goes down to a child.
    ///
    /// ```
    /// use pytree_std::{Flatten, KeyRef, Std, Visit};
    /// struct Fields(Vec<&'static str>);
    /// impl<R> Visit<R> for Fields {
    ///     fn leaf(&mut self, _: R) {}
    ///     fn enter(&mut self, k: KeyRef<'_>) { if let KeyRef::Field(f) = k { self.0.push(f) } }
    /// }
    /// #[derive(pytree_std::PyTree)]
    /// struct P { x: u8, y: u8 }
    /// let mut v = Fields(vec![]);
    /// Flatten::<Std>::visit(&P { x: 1, y: 2 }, &mut v);
    /// assert_eq!(v.0, ["x", "y"]);
    /// ```
    fn enter(&mut self, _key: KeyRef<'_>) {}
    /// The walk comes back from the child last entered.
    ///
    /// ```
    /// use pytree_std::{Flatten, KeyRef, Std, Visit};
    /// struct Balance(i32);
    /// impl<R> Visit<R> for Balance {
    ///     fn leaf(&mut self, _: R) {}
    ///     fn enter(&mut self, _: KeyRef<'_>) { self.0 += 1 }
    ///     fn exit(&mut self) { self.0 -= 1 }
    /// }
    /// let mut v = Balance(0);
    /// Flatten::<Std>::visit(&vec![(1u8, 2u8)], &mut v);
    /// assert_eq!(v.0, 0);
    /// ```
    fn exit(&mut self) {}
}

/// Receives a tree's leaves by mutable reference, in pre-order.
///
/// `M` is how a leaf is lent: [`LeafMut<'a, Ns, L>`](crate::LeafMut), which
/// is `&'a mut L` for scalar leaves and a mutable view for arrays. Each
/// leaf is lent for the whole borrow of the tree (leaves are disjoint), so
/// a visitor may keep them: that is how [`leaves_mut`](crate::ops::basic::leaves_mut)
/// works.
///
/// ```
/// use pytree_std::{Flatten, Std, VisitMut};
/// struct Double;
/// impl VisitMut<&mut f32> for Double { fn leaf(&mut self, x: &mut f32) { *x *= 2.0 } }
/// let mut t = (1.0f32, Some(2.0f32));
/// Flatten::<Std>::visit_mut(&mut t, &mut Double);
/// assert_eq!(t, (2.0, Some(4.0)));
/// ```
pub trait VisitMut<M> {
    /// One leaf.
    ///
    /// ```
    /// use pytree_std::{Flatten, Std, VisitMut};
    /// struct Clamp;
    /// impl VisitMut<&mut i32> for Clamp { fn leaf(&mut self, x: &mut i32) { *x = (*x).clamp(0, 9) } }
    /// let mut t = (-3, vec![12]);
    /// Flatten::<Std>::visit_mut(&mut t, &mut Clamp);
    /// assert_eq!(t, (0, vec![9]));
    /// ```
    fn leaf(&mut self, leaf: M);
    /// The elements of a sequence whose elements are leaves, at once (the
    /// default enters each index and calls [`leaf`](VisitMut::leaf)).
    ///
    /// ```
    /// use pytree_std::{Flatten, Std, VisitMut};
    /// struct Reverse;
    /// impl<'a> VisitMut<&'a mut i32> for Reverse {
    ///     fn leaf(&mut self, _: &'a mut i32) {}
    ///     fn leaf_run<I: ExactSizeIterator<Item = &'a mut i32>>(&mut self, xs: I) {
    ///         let mut xs: Vec<&mut i32> = xs.collect();
    ///         let n = xs.len();
    ///         for i in 0..n / 2 {
    ///             let (a, b) = xs.split_at_mut(n - 1 - i);
    ///             std::mem::swap(a[i], b[0]);
    ///         }
    ///     }
    /// }
    /// let mut t = vec![1, 2, 3];
    /// Flatten::<Std>::visit_mut(&mut t, &mut Reverse);
    /// assert_eq!(t, [3, 2, 1]);
    /// ```
    fn leaf_run<I: ExactSizeIterator<Item = M>>(&mut self, leaves: I) {
        each_at_its_index!(self, leaves);
    }
    /// A hint from a container before its children: at least `n` leaves
    /// follow. Visitors that store nothing keep the default.
    #[doc(hidden)]
    #[inline(always)]
    fn reserve_leaves(&mut self, _n: usize) {}
    /// A node, before its children.
    ///
    /// ```
    /// use pytree_std::{Flatten, NodeRef, Std, VisitMut};
    /// struct Holes(usize);
    /// impl<M> VisitMut<M> for Holes {
    ///     fn leaf(&mut self, _: M) {}
    ///     fn node(&mut self, n: NodeRef<'_>) { if let NodeRef::None = n { self.0 += 1 } }
    /// }
    /// let mut h = Holes(0);
    /// Flatten::<Std>::visit_mut(&mut vec![None, Some(1u8), None], &mut h);
    /// assert_eq!(h.0, 2);
    /// ```
    fn node(&mut self, _node: NodeRef<'_>) {}
    /// The walk goes down to a child.
    ///
    /// ```
    /// use pytree_std::{Flatten, KeyRef, Std, VisitMut};
    /// /// Adds each leaf's index in its sequence.
    /// struct AddIndex(usize);
    /// impl VisitMut<&mut usize> for AddIndex {
    ///     fn leaf(&mut self, x: &mut usize) { *x += self.0 }
    ///     fn enter(&mut self, k: KeyRef<'_>) { if let KeyRef::Index(i) = k { self.0 = i } }
    /// }
    /// let mut t = vec![vec![10usize, 10], vec![10]];
    /// Flatten::<Std>::visit_mut(&mut t, &mut AddIndex(0));
    /// assert_eq!(t, [vec![10, 11], vec![10]]);
    /// ```
    fn enter(&mut self, _key: KeyRef<'_>) {}
    /// The walk comes back from the child last entered.
    ///
    /// ```
    /// use pytree_std::{Flatten, KeyRef, Std, VisitMut};
    /// /// Sets each leaf to its depth.
    /// struct Depth(usize);
    /// impl VisitMut<&mut usize> for Depth {
    ///     fn leaf(&mut self, x: &mut usize) { *x = self.0 }
    ///     fn enter(&mut self, _: KeyRef<'_>) { self.0 += 1 }
    ///     fn exit(&mut self) { self.0 -= 1 }
    /// }
    /// let mut t = (0usize, vec![0usize]);
    /// Flatten::<Std>::visit_mut(&mut t, &mut Depth(0));
    /// assert_eq!(t, (1, vec![2]));
    /// ```
    fn exit(&mut self) {}
}

/// Implements [`Visit`] and [`VisitMut`] with one body, for a visitor that
/// does the same with a leaf however it is lent:
/// `visit_either!(impl<R, F: FnMut(R)> for ForEach<F> { fn leaf(..) .. })`,
/// and after the body `visit_only { .. }` for the methods only [`Visit`]
/// has (`leaf_entries`, `map_keys`).
macro_rules! visit_either {
    (impl<$r:ident $(, $g:ident: $bound:path)*> for $ty:ty { $($body:tt)* } $(visit_only { $($visit:tt)* })?) => {
        impl<$r $(, $g: $bound)*> $crate::traits::visit::Visit<$r> for $ty {
            $($body)*
            $($($visit)*)?
        }
        impl<$r $(, $g: $bound)*> $crate::traits::visit::VisitMut<$r> for $ty {
            $($body)*
        }
    };
}
pub(crate) use visit_either;
