//! Ensembles (feature `ndarray` or `candle`): `N` trees of arrays or
//! tensors stacked along a new leading axis into one tree
//! ([`stack_leaves`]) and cut back into `N` trees ([`unstack_leaves`]), as
//! equinox's `filter_vmap` ensembles (`jax.tree.map(lambda *xs:
//! jnp.stack(xs), *trees)`) and torch's `stack_module_state` do. One
//! optimizer call then trains every member at once: the stacked
//! parameters, gradients and moments are one tree each, and an
//! element-wise optimizer treats each member's slice exactly as it would
//! the member alone; a forward pass written with batched operations over
//! the leading axis (a batched `matmul`) runs every member at once.
//!
//! The members are trees of one type whose leaves are [`Stackable`]:
//! `ArrayD<A>` (feature `ndarray`; arrays of any rank, since stacking adds
//! an axis) and `AnyArray` (each array in its own dtype, integer buffers
//! too), candle's `Tensor` and `Var` (feature `candle`; the stacked
//! tensor keeps the members' dtype and device, and a stacked tree of
//! `Var`s is a tree of `Var`s). A model with fixed-rank ndarray fields goes
//! through a [`Tree`](crate::Tree) of `ArrayD` leaves
//! ([`Tree::from_pytree`](crate::Tree::from_pytree)). This is not
//! [`nested::subside`](crate::nested::subside), treevalue's `subside`, which gathers the
//! members' leaves into `Vec`s.
//!
//! ```
//! # #[cfg(feature = "ndarray")] {
//! use pytree_std::ensemble::{stack_leaves, unstack_leaves};
//! use pytree_std::ndarray::{array, ArrayD};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Linear { w: ArrayD<f32>, b: ArrayD<f32> }
//!
//! let member = |s: f32| Linear { w: (array![[1.0f32, 2.0]] * s).into_dyn(), b: array![s].into_dyn() };
//! let members = vec![member(1.0), member(2.0), member(3.0)];
//! let stacked = stack_leaves(&members)?;
//! assert_eq!((stacked.w.shape(), stacked.b.shape()), (&[3, 1, 2][..], &[3, 1][..]));
//! assert_eq!(unstack_leaves(&stacked)?, members);
//! # }
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! The same with candle tensors:
//!
//! ```
//! # #[cfg(feature = "candle")] {
//! use pytree_std::candle_core::{Device, Tensor};
//! use pytree_std::ensemble::{stack_leaves, unstack_leaves};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug)]
//! struct Linear { w: Tensor, b: Tensor }
//!
//! let member = |s: f32| -> Result<Linear, Box<dyn std::error::Error>> {
//!     Ok(Linear { w: Tensor::new(&[[s, 2.0 * s]], &Device::Cpu)?, b: Tensor::new(&[s], &Device::Cpu)? })
//! };
//! let stacked = stack_leaves(&[member(1.0)?, member(2.0)?, member(3.0)?])?;
//! assert_eq!((stacked.w.dims(), stacked.b.dims()), (&[3, 1, 2][..], &[3, 1][..]));
//! assert_eq!(stacked.b.to_vec2::<f32>()?, [[1.0], [2.0], [3.0]]);
//! let members = unstack_leaves(&stacked)?;
//! assert_eq!(members[1].w.to_vec2::<f32>()?, [[2.0, 4.0]]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use pytree_core::{Leaf, LeafRef};

use crate::std_namespace::Std;
use pytree_core::{Error, Unflatten};

/// A leaf type that ensembles can stack along a new leading axis and cut
/// back ([`stack_leaves`], [`unstack_leaves`]): `ArrayD<A>` and
/// `AnyArray` (feature `ndarray`), candle's `Tensor` and `Var` (feature
/// `candle`). nalgebra's `DMatrix` is not: a stacked matrix has three
/// axes, and nalgebra has no type for it.
///
/// [`stack_leaves`] checks the members against each other (structure and
/// leaf [signatures](pytree_core::Signature): shape, dtype, device) before
/// it calls [`stack`](Stackable::stack), and [`unstack_leaves`] checks
/// every leaf's leading axis (through [`shape`](Stackable::shape)) before
/// it calls [`index`](Stackable::index); an implementation only does the
/// work. A leaf type of your own implements it the same way:
///
/// ```
/// use pytree_std::ensemble::{stack_leaves, unstack_leaves, Stackable};
/// use pytree_std::{Error, PyTree};
///
/// /// A flat buffer with its shape, row-major.
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// #[pytree(leaf)]
/// struct Buf { shape: Vec<usize>, data: Vec<f32> }
///
/// impl Stackable for Buf {
///     fn stack(members: &[&Buf]) -> Result<Buf, Error> {
///         let mut shape = vec![members.len()];
///         shape.extend(&members[0].shape);
///         Ok(Buf { shape, data: members.iter().flat_map(|m| m.data.iter().copied()).collect() })
///     }
///     fn shape<'a>(leaf: &'a &Buf) -> &'a [usize] {
///         &leaf.shape
///     }
///     fn index(leaf: &&Buf, i: usize) -> Result<Buf, Error> {
///         let size: usize = leaf.shape[1..].iter().product();
///         Ok(Buf { shape: leaf.shape[1..].to_vec(), data: leaf.data[i * size..(i + 1) * size].to_vec() })
///     }
/// }
///
/// let members = vec![vec![Buf { shape: vec![2], data: vec![1.0, 2.0] }], vec![Buf { shape: vec![2], data: vec![3.0, 4.0] }]];
/// let stacked = stack_leaves(&members)?;
/// assert_eq!(stacked[0], Buf { shape: vec![2, 2], data: vec![1.0, 2.0, 3.0, 4.0] });
/// assert_eq!(unstack_leaves(&stacked)?, members);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait Stackable: Leaf<Std> {
    /// The members' leaves (at least one, all of one signature) stacked
    /// along a new leading axis: of shape `[N, ...]`, `N` =
    /// `members.len()`, in the members' dtype (and device).
    ///
    /// ```
    /// # #[cfg(feature = "ndarray")] {
    /// use pytree_std::ensemble::Stackable;
    /// use pytree_std::ndarray::{arr1, arr2, ArrayD};
    ///
    /// let (a, b) = (arr1(&[1.0f32, 2.0]).into_dyn(), arr1(&[3.0f32, 4.0]).into_dyn());
    /// let s = <ArrayD<f32> as Stackable>::stack(&[a.view(), b.view()])?;
    /// assert_eq!(s, arr2(&[[1.0f32, 2.0], [3.0, 4.0]]).into_dyn());
    /// # }
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn stack(members: &[LeafRef<'_, Std, Self>]) -> Result<Self, Error>;

    /// The leaf's shape (its first entry is the member axis of a stacked
    /// leaf; a 0-d leaf has none).
    ///
    /// ```
    /// # #[cfg(feature = "ndarray")] {
    /// use pytree_std::ensemble::Stackable;
    /// use pytree_std::ndarray::{ArrayD, IxDyn};
    ///
    /// let a = ArrayD::<f64>::zeros(IxDyn(&[3, 2]));
    /// assert_eq!(<ArrayD<f64> as Stackable>::shape(&a.view()), [3, 2]);
    /// # }
    /// ```
    fn shape<'a>(leaf: &'a LeafRef<'_, Std, Self>) -> &'a [usize];

    /// Member `i` of a stacked leaf: its slice `i` along the leading axis,
    /// that axis removed, in memory of its own (writing to it in place
    /// leaves the stacked leaf as it was). The caller has checked that the
    /// leaf has a leading axis longer than `i`.
    ///
    /// ```
    /// # #[cfg(feature = "ndarray")] {
    /// use pytree_std::ensemble::Stackable;
    /// use pytree_std::ndarray::{arr1, arr2, ArrayD};
    ///
    /// let s = arr2(&[[1.0f32, 2.0], [3.0, 4.0]]).into_dyn();
    /// assert_eq!(<ArrayD<f32> as Stackable>::index(&s.view(), 1)?, arr1(&[3.0f32, 4.0]).into_dyn());
    /// # }
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn index(leaf: &LeafRef<'_, Std, Self>, i: usize) -> Result<Self, Error>;
}

/// Stacks `members` (trees of one structure and leaf signatures) along a
/// new leading axis: the leaf at each key path of the result is the
/// members' leaves at that path stacked, of shape `[N, ...]` (`N` the
/// number of members), in their dtype and on their device; static fields
/// come from the first member. Members that differ are an error listing
/// every mismatch (structure, and shapes, dtypes and devices of leaves,
/// each with its path and member, numbered from 0); no members at all is
/// an error too.
///
/// ```
/// # #[cfg(feature = "ndarray")] {
/// use pytree_std::ensemble::stack_leaves;
/// use pytree_std::ndarray::{arr1, ArrayD};
///
/// let a: Vec<ArrayD<f64>> = vec![arr1(&[1.0, 2.0]).into_dyn()];
/// let b: Vec<ArrayD<f64>> = vec![arr1(&[3.0, 4.0]).into_dyn()];
/// let s = stack_leaves(&[a.clone(), b])?;
/// assert_eq!(s[0], pytree_std::ndarray::arr2(&[[1.0, 2.0], [3.0, 4.0]]).into_dyn());
///
/// let odd: Vec<ArrayD<f64>> = vec![arr1(&[1.0]).into_dyn()];
/// let err = stack_leaves(&[a, odd]).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at [0]: leaf signature mismatch: expected f64[2], found f64[1]");
/// # }
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn stack_leaves<T>(members: &[T]) -> Result<T, Error>
where
    T: Unflatten<Std>,
    T::Leaf: Stackable,
{
    let Some(first) = members.first() else {
        return Err(Error::custom(
            "stack_leaves: no trees to stack (an ensemble has at least one member)",
        ));
    };
    pytree_core::__private::check_all::<Std, T>(members.iter().collect())?;
    let per_member: Vec<Vec<LeafRef<'_, Std, T::Leaf>>> =
        members.iter().map(crate::walk::leaves).collect();
    let def = crate::walk::structure(first);
    let paths = def.leaf_paths()?;
    let mut stacked = Vec::with_capacity(paths.len());
    let mut column = Vec::with_capacity(members.len());
    for (i, path) in paths.iter().enumerate() {
        column.clear();
        column.extend(per_member.iter().map(|l| l[i].clone()));
        stacked.push(<T::Leaf as Stackable>::stack(&column).map_err(|e| e.under(path))?);
    }
    rebuild_like(first, stacked)
}

/// A tree of `like`'s structure holding `leaves` (one per leaf of `like`,
/// in order): through its TreeDef, or built like `like` for a tree that a
/// TreeDef cannot rebuild alone (a `BurnModule`).
fn rebuild_like<T: Unflatten<Std>>(like: &T, leaves: Vec<T::Leaf>) -> Result<T, Error> {
    let def = crate::walk::structure(like);
    pytree_core::ops::basic::unflatten_like::<Std, T>(&def, like, leaves)
}

/// Cuts a stacked tree back into its members: member `i` has, at each key
/// path, the leaf's slice `i` along the leading axis, in memory of its own.
/// Every leaf must have a leading axis, all of one length `N` (the first
/// leaf's); a leaf without one (0-d) or with another length is an error,
/// every such leaf listed with its path and shape, and nothing is built.
///
/// ```
/// # #[cfg(feature = "ndarray")] {
/// use pytree_std::ensemble::unstack_leaves;
/// use pytree_std::ndarray::{arr0, arr2, ArrayD};
///
/// let stacked: (ArrayD<f32>, ArrayD<f32>) = (arr2(&[[1.0f32, 2.0], [3.0, 4.0]]).into_dyn(), arr2(&[[5.0f32], [6.0]]).into_dyn());
/// let members = unstack_leaves(&stacked)?;
/// assert_eq!(members.len(), 2);
/// assert_eq!(members[1].1, pytree_std::ndarray::arr1(&[6.0f32]).into_dyn());
///
/// let bad: (ArrayD<f32>, ArrayD<f32>) = (arr2(&[[1.0f32], [2.0]]).into_dyn(), arr0(3.0f32).into_dyn());
/// assert_eq!(unstack_leaves(&bad).unwrap_err().to_string(),
///     "at [1]: unstack_leaves: expected a leading (member) axis of length 2, found shape []");
/// # }
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unstack_leaves<T>(stacked: &T) -> Result<Vec<T>, Error>
where
    T: Unflatten<Std>,
    T::Leaf: Stackable,
{
    let leaves = crate::paths::leaves_with_path(stacked);
    let n = match leaves.first() {
        Some((_, leaf)) => <T::Leaf as Stackable>::shape(leaf).first().copied(),
        None => {
            return Err(Error::custom(
                "unstack_leaves: the tree has no leaves, so no member axis to cut along",
            ))
        }
    };
    let mut problems = Vec::new();
    for (path, leaf) in &leaves {
        let shape = <T::Leaf as Stackable>::shape(leaf);
        if n.is_none() || shape.first().copied() != n {
            let want = match n {
                Some(n) => format!("a leading (member) axis of length {n}"),
                None => "a leading (member) axis".to_string(),
            };
            problems.push(
                Error::custom(format!(
                    "unstack_leaves: expected {want}, found shape {shape:?}"
                ))
                .under(path),
            );
        }
    }
    if !problems.is_empty() {
        return Err(Error::from_mismatches(problems));
    }
    let n = n.unwrap_or(0);
    (0..n)
        .map(|i| {
            let member = leaves
                .iter()
                .map(|(path, leaf)| {
                    <T::Leaf as Stackable>::index(leaf, i).map_err(|e| e.under(path))
                })
                .collect::<Result<Vec<T::Leaf>, Error>>()?;
            rebuild_like(stacked, member)
        })
        .collect()
}
