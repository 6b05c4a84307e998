//! Ensembles (feature `ndarray`): `N` trees of arrays stacked along a new
//! leading axis into one tree ([`stack_leaves`]) and cut back into `N`
//! trees ([`unstack_leaves`]), as equinox's `filter_vmap` ensembles and
//! torch's `stack_module_state` do. One optimizer call then trains every
//! member at once: the stacked parameters, gradients and moments are one
//! tree each, and an element-wise optimizer treats each member's slice
//! exactly as it would the member alone.
//!
//! The members are trees of one type whose leaves are `ArrayD<A>` (arrays
//! of any rank, since stacking adds an axis): a model declared with
//! `ArrayD` fields, or any tree of arrays converted to a
//! [`Tree`](crate::Tree) of `ArrayD` leaves with
//! [`Tree::from_pytree`](crate::Tree::from_pytree). This is not
//! [`transpose::subside`](crate::transpose::subside), treevalue's `subside`, which gathers the
//! members' leaves into `Vec`s.
//!
//! ```
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
//! # Ok::<(), pytree_std::Error>(())
//! ```

use ndarray::{ArrayD, ArrayViewD, Axis};

use crate::{Error, ErrorKind, KeyPath, Std, Unflatten};

/// Places `err` at `path`.
fn at_path(mut err: Error, path: &KeyPath) -> Error {
    for entry in path.entries().iter().rev() {
        err = err.at(entry.clone());
    }
    err
}

/// One error for several problems (the problem itself when there is one).
fn combine(mut all: Vec<Error>) -> Result<(), Error> {
    match all.len() {
        0 => Ok(()),
        1 => Err(all
            .pop()
            .unwrap_or_else(|| Error::custom("the trees differ"))),
        _ => Err(Error::new(ErrorKind::Mismatches(all))),
    }
}

/// Stacks `members` (trees of one structure and leaf shapes) along a new
/// leading axis: the leaf at each key path of the result is the members'
/// leaves at that path stacked, of shape `[N, ...]` (`N` the number of
/// members); static fields come from the first member. Members that
/// differ are an error listing every mismatch (structure and shapes, each
/// with its path and member, numbered from 0); no members at all is an
/// error too.
///
/// ```
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
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn stack_leaves<T, A>(members: &[T]) -> Result<T, Error>
where
    T: Unflatten<Std, Leaf = ArrayD<A>>,
    A: Clone + 'static,
{
    let Some(first) = members.first() else {
        return Err(Error::custom(
            "stack_leaves: no trees to stack (an ensemble has at least one member)",
        ));
    };
    pytree_core::__private::check_all::<Std, T>(members.iter().collect())?;
    let per_member: Vec<Vec<ArrayViewD<'_, A>>> = members.iter().map(crate::leaves).collect();
    let paths = crate::structure(first).leaf_paths()?;
    let mut stacked = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        let views: Vec<ArrayViewD<'_, A>> = per_member.iter().map(|l| l[i].clone()).collect();
        let leaf = ndarray::stack(Axis(0), &views)
            .map_err(|e| at_path(Error::custom(format!("stack_leaves: {e}")), path))?;
        stacked.push(leaf);
    }
    crate::unflatten(&crate::structure(first), stacked)
}

/// Cuts a stacked tree back into its members: member `i` has, at each key
/// path, the leaf's slice `i` along the leading axis. Every leaf must have
/// a leading axis, all of one length `N` (the first leaf's); a leaf
/// without one (a 0-d array) or with another length is an error, every
/// such leaf listed with its path and shape, and nothing is built.
///
/// ```
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
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unstack_leaves<T, A>(stacked: &T) -> Result<Vec<T>, Error>
where
    T: Unflatten<Std, Leaf = ArrayD<A>>,
    A: Clone + 'static,
{
    let leaves = crate::paths::leaves_with_path(stacked);
    let n = match leaves.first() {
        Some((_, leaf)) => leaf.shape().first().copied(),
        None => {
            return Err(Error::custom(
                "unstack_leaves: the tree has no leaves, so no member axis to cut along",
            ))
        }
    };
    let mut problems = Vec::new();
    for (path, leaf) in &leaves {
        if n.is_none() || leaf.shape().first().copied() != n {
            let want = match n {
                Some(n) => format!("a leading (member) axis of length {n}"),
                None => "a leading (member) axis".to_string(),
            };
            problems.push(at_path(
                Error::custom(format!(
                    "unstack_leaves: expected {want}, found shape {:?}",
                    leaf.shape()
                )),
                path,
            ));
        }
    }
    combine(problems)?;
    let def = crate::structure(stacked);
    let n = n.unwrap_or(0);
    (0..n)
        .map(|i| {
            let member: Vec<ArrayD<A>> = leaves
                .iter()
                .map(|(_, leaf)| leaf.index_axis(Axis(0), i).to_owned())
                .collect();
            crate::unflatten(&def, member)
        })
        .collect()
}
