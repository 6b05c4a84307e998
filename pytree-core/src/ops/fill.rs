//! Partitions and filters that fill the holes with values instead of
//! `None` (equinox's `partition(.., replace=v)` / `filter(.., replace=v)`),
//! and [`replace_nones`] (optree's `tree_replace_nones`), which turns the
//! `None` holes of a tree back into leaves.
//!
//! A filled partition keeps the tree's own type (`Mlp<f32>` in, two
//! `Mlp<f32>` out): the holes are leaves like the others, made by a fill
//! function that sees the leaf it stands in for, so an array leaf can be
//! replaced by zeros of its own shape.

use alloc::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::ops::with_path::flatten_walk;
use crate::ops::{flatten, unflatten};
use crate::paths::key_path::KeyPath;
use crate::sources::def_source::DefSource;
use crate::sources::source::Source;
use crate::static_data::Static;
use crate::traits::flatten::unwind::Unwinding;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::treedef::describe_view;
use crate::treedef::node::NodeView;
use crate::treedef::schema::Schema;

/// `pytree_std::split::partition_fill` for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Counter { #[pytree(kind = "state")] count: f64, bias: f64 }
/// let (params, state) = pytree_core::ops::fill::partition_fill::<pytree_std::Std, _, _, _>(
///     Counter { count: 3.0, bias: 0.5 },
///     |path, _| path.kind() == "param",
///     |_, _| 0.0,
/// )?;
/// assert_eq!(params, Counter { count: 0.0, bias: 0.5 });
/// assert_eq!(state, Counter { count: 3.0, bias: 0.0 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn partition_fill<Ns, T, F, G>(tree: T, mut pred: F, mut fill: G) -> Result<(T, T), Error>
where
    T: Unflatten<Ns>,
    F: FnMut(&KeyPath, &T::Leaf) -> bool,
    G: FnMut(&KeyPath, &T::Leaf) -> T::Leaf,
{
    let mut kept = Vec::new();
    let mut rest = Vec::new();
    let def = flatten_walk::<Ns, T, _>(tree, |path, leaf| {
        let hole = fill(path, &leaf);
        if pred(path, &leaf) {
            kept.push(leaf);
            rest.push(hole);
        } else {
            kept.push(hole);
            rest.push(leaf);
        }
    });
    // `kept` is held until `rest` is built: an error there drops it with
    // a walk (`unwind.rs`), however deep it is.
    let kept = Unwinding::tree::<Ns>(unflatten::<Ns, T, _>(&def, kept)?);
    let rest = unflatten::<Ns, T, _>(&def, rest)?;
    Ok((kept.take(), rest))
}

/// The engine of `pytree_std::split::partition_fill`, for any namespace `Ns`
/// (documented there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<f32> = tree! { "w" => 2.0, "b" => -1.0 };
/// let kept = pytree_core::ops::fill::filter_fill::<pytree_std::Std, _, _, _>(t, |_, x| *x > 0.0, |_, _| f32::NAN)?;
/// assert!(kept["b"].as_leaf().is_some_and(|x| x.is_nan()));
/// assert_eq!(kept["w"], Tree::leaf(2.0));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn filter_fill<Ns, T, F, G>(tree: T, mut pred: F, mut fill: G) -> Result<T, Error>
where
    T: Unflatten<Ns>,
    F: FnMut(&KeyPath, &T::Leaf) -> bool,
    G: FnMut(&KeyPath, &T::Leaf) -> T::Leaf,
{
    let mut out = Vec::new();
    let def = flatten_walk::<Ns, T, _>(tree, |path, leaf| {
        out.push(if pred(path, &leaf) {
            leaf
        } else {
            fill(path, &leaf)
        })
    });
    unflatten::<Ns, T, _>(&def, out)
}

/// What the next leaf read from a [`FillSource`] is.
#[derive(Clone, Copy)]
enum Next {
    /// Not looked at yet: a leaf, `Some(leaf)` or `None`.
    Unread,
    /// A `None` that `any_node` reported as a leaf: the fill value.
    Fill,
    /// A leaf that `any_node` reported.
    Leaf,
}

/// Reads a tree whose leaves may be `Some(leaf)` or `None` holes as one
/// whose leaves are plain: a hole gives the fill value.
struct FillSource<S, G> {
    inner: S,
    fill: G,
    next: Next,
}

impl<L, S: Source<L>, G: FnMut() -> L> Source<L> for FillSource<S, G> {
    fn leaf(&mut self) -> Result<L, Error> {
        match core::mem::replace(&mut self.next, Next::Unread) {
            Next::Fill => Ok((self.fill)()),
            Next::Leaf => self.inner.leaf(),
            Next::Unread => match self.inner.any_node()? {
                // `Some(x)`: `x` must be a leaf, read next.
                NodeView::Leaf | NodeView::Some => self.inner.leaf(),
                NodeView::None => Ok((self.fill)()),
                other => Err(Error::new(ErrorKind::NodeMismatch {
                    expected: "a leaf, Some(leaf) or None".into(),
                    found: describe_view(&other),
                })),
            },
        }
    }
    fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error> {
        self.inner.struct_node(candidates)
    }
    fn static_field<T: Static>(&mut self) -> Result<T, Error> {
        self.inner.static_field()
    }
    fn seq_node(&mut self) -> Result<usize, Error> {
        self.inner.seq_node()
    }
    fn tuple_node(&mut self, arity: usize) -> Result<(), Error> {
        self.inner.tuple_node(arity)
    }
    fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error> {
        self.inner.map_node()
    }
    fn option_node(&mut self) -> Result<bool, Error> {
        self.inner.option_node()
    }
    /// A reader of any structure (the dynamic tree) sees every `None` as
    /// a leaf (the fill value) and looks through `Some`.
    fn any_node(&mut self) -> Result<NodeView, Error> {
        loop {
            match self.inner.any_node()? {
                NodeView::Some => continue,
                NodeView::None => {
                    self.next = Next::Fill;
                    return Ok(NodeView::Leaf);
                }
                NodeView::Leaf => {
                    self.next = Next::Leaf;
                    return Ok(NodeView::Leaf);
                }
                other => return Ok(other),
            }
        }
    }
}

/// `pytree_std::split::replace_nones` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::{tree, PyTree, Tree};
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear<T> { w: T, b: T }
/// let half = Linear { w: Some(1.0f32), b: None };
/// assert_eq!(pytree_core::ops::fill::replace_nones::<pytree_std::Std, _, Linear<f32>, _>(half, || 0.0)?, Linear { w: 1.0, b: 0.0 });
/// let t: Tree<f32> = tree! { "w" => 1.0, "b" => None };
/// assert_eq!(pytree_core::ops::fill::replace_nones::<pytree_std::Std, _, Tree<f32>, _>(t, || 0.0)?, tree! { "w" => 1.0, "b" => 0.0 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn replace_nones<Ns, U, T, G>(tree: U, fill: G) -> Result<T, Error>
where
    U: Flatten<Ns>,
    T: Unflatten<Ns, Leaf = U::Leaf>,
    G: FnMut() -> U::Leaf,
{
    let (leaves, def) = flatten::<Ns, U>(tree);
    let mut source = FillSource {
        inner: DefSource::new(&def, leaves.into_iter()),
        fill,
        next: Next::Unread,
    };
    let value = T::unflatten_from(&mut source)?;
    source.inner.finish()?;
    Ok(value)
}
