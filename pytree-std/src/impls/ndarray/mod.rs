//! ndarray arrays as leaves (feature `ndarray`).
//!
//! Every owned array, [`Array<A, D>`] and [`ArcArray<A, D>`] of any
//! dimension `D`, is a pytree with one leaf of type [`ArrayD<A>`]: the rank
//! is erased in the leaf type, so a struct with an `Array2<f32>` and an
//! `Array1<f32>` field (and `ArcArray`s beside them) has one leaf type,
//! `ArrayD<f32>`, and every operation works on it.
//!
//! - The walks by reference lend each array as a view of its own shape:
//!   [`ArrayViewD<'a, A>`] (`leaves`, `fold`, `map_n`'s arguments) and
//!   [`ArrayViewMutD<'a, A>`] (`for_each_mut`, `leaves_mut`, `zip_mut`),
//!   whatever the field's rank. Nothing is copied.
//! - The consuming walks move the data: `flatten` gives `ArrayD<A>`s
//!   (`into_dyn`, no copy for `Array`; an `ArcArray` whose data is shared
//!   is copied, as `ArcArray::into_owned` does), `unflatten` converts each
//!   back to the field's rank with `into_dimensionality`; a leaf of another
//!   rank is an [`Error`] (the derive adds the field's path), never a panic.
//! - Arrays have shapes ([`Leaf::HAS_SHAPE`]): their [`Signature`] is
//!   their dtype and shape, so `map_n` / `zip_mut` of two trees
//!   whose arrays differ in shape fail their check with an error naming
//!   the path and both signatures, before anything is computed or changed;
//!   `set` / `set_subtree` refuse an array of another shape (the slot is a
//!   view, it keeps its shape), and nothing changes.
//!
//! # Rank changes in `map` / `map_n`
//!
//! `map` and (with an infallible function) `map_n` build the tree itself in
//! place, as hand-written code does, and their function returns an
//! `ArrayD<A>`, of any rank. When it returns an array
//! of another rank for a field of a fixed rank (`Array2<f32>` given a 3-d
//! array), there is no value of the field's type to build, no error to
//! return, and the old array is gone (it was moved into the function), so
//! these operations **panic**, naming the path-checked alternatives, which
//! rebuild through the TreeDef and return the rank error at its path:
//! [`map_into`](crate::walk::map_into) for one tree, [`map_n`](crate::walk::map_n)
//! with a function that returns a `Result` for several (or `flatten` then
//! [`unflatten`](crate::walk::unflatten)); or an
//! `ArrayD` field, which takes any rank. The shape may change freely within the rank
//! (`Array2` `[3, 3]` to `[2, 16]`).
//!
//! ```
//! use pytree_std::ndarray::{array, Array1, Array2, ArrayD};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Linear { w: Array2<f32>, b: Array1<f32> }
//!
//! let lin = Linear { w: array![[1.0, 2.0], [3.0, 4.0]], b: array![0.5, 0.5] };
//! // One leaf type for both ranks.
//! let (leaves, def): (Vec<ArrayD<f32>>, _) = pytree_std::flatten(lin.clone());
//! assert_eq!(leaves[0].shape(), [2, 2]);
//! assert_eq!(leaves[1].shape(), [2]);
//! // Views when lent, whatever the rank.
//! let mut params = lin.clone();
//! pytree_std::zip_mut([&mut params], [&lin], |[mut p], [g]| p.scaled_add(-0.5, &g))?;
//! assert_eq!(params.b, array![0.25, 0.25]);
//! // The rank is checked on unflatten.
//! let err = pytree_std::unflatten::<Linear>(&def, vec![leaves[1].clone(), leaves[1].clone()])
//!     .unwrap_err();
//! assert_eq!(err.to_string(), "at .w: array rank mismatch: expected a 2-d array, found f32[2]");
//! # Ok::<(), pytree_std::Error>(())
//! ```

use ndarray::{
    ArcArray, Array, ArrayBase, ArrayD, ArrayViewD, ArrayViewMutD, Axis, Data, Dimension, IxDyn,
    Zip,
};
use pytree_core::{Error, Signature};

pub mod any_array;
mod bytes;
#[cfg(feature = "safetensors")]
mod checkpoint;
mod float;

use super::dtype_of;
use crate::{elements::ApproxEq, elements::Ravel, elements::Tolerance};

/// The signature of an array of `A`s of this shape.
fn array_signature<A: 'static>(shape: &[usize]) -> Signature {
    Signature::new(dtype_of::<A>(), shape.to_vec())
}

super::shaped::array_leaf!(
    /// `ArrayD<A>` is the leaf type of every array of `A`s, lent as views: an
    /// [`ArrayViewD`] by shared reference, an [`ArrayViewMutD`] by mutable
    /// reference. Its signature is its dtype and shape (`f32[3,4]`).
    ///
    /// ```
    /// use pytree_std::ndarray::{array, ArrayD};
    /// use pytree_std::{Leaf, Std};
    /// let mut a: ArrayD<f32> = array![[1.0, 2.0], [3.0, 4.0]].into_dyn();
    /// assert_eq!(<ArrayD<f32> as Leaf<Std>>::signature(&a.view()).unwrap().to_string(), "f32[2,2]");
    /// // `assign` writes into the view and returns the old data; the shape is kept.
    /// let old = <ArrayD<f32> as Leaf<Std>>::assign(a.view_mut(), array![[0.0, 0.0], [0.0, 1.0]].into_dyn())?;
    /// assert_eq!(old, array![[1.0, 2.0], [3.0, 4.0]].into_dyn());
    /// assert_eq!(a, array![[0.0, 0.0], [0.0, 1.0]].into_dyn());
    /// let err = <ArrayD<f32> as Leaf<Std>>::assign(a.view_mut(), array![1.0].into_dyn()).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: leaf signature mismatch: expected f32[2,2], found f32[1]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    [A: 'static] ArrayD<A>,
    ArrayViewD<A> = view, ArrayViewMutD<A> = view_mut,
    signature = array_signature::<A>,
    swap = |slot, value| Zip::from(&mut slot).and(&mut value).for_each(std::mem::swap),
);

/// The error of a leaf whose rank is not the field's.
#[cold]
fn rank_error<A: 'static>(expected: usize, leaf: &ArrayD<A>) -> Error {
    Error::custom(format!(
        "array rank mismatch: expected a {expected}-d array, found {}",
        array_signature::<A>(leaf.shape())
    ))
}

/// Converts a leaf to the rank `D`, or says why not.
#[inline]
fn to_rank<A: 'static, D: Dimension>(leaf: ArrayD<A>) -> Result<Array<A, D>, Error> {
    if let Some(n) = D::NDIM {
        if leaf.ndim() != n {
            return Err(rank_error(n, &leaf));
        }
    }
    leaf.into_dimensionality::<D>()
        .map_err(|e| Error::custom(format!("array rank conversion failed: {e}")))
}

/// For the infallible walks (`map`, `map_n`) whose function
/// returned an array of another rank: there is nothing to build (see the
/// module docs), so this panics and names the fallible routes.
#[cold]
#[track_caller]
fn rank_changed<A: 'static>(expected: usize, leaf: &ArrayD<A>) -> ! {
    panic!(
        "pytree: the function returned a {}-d array ({}) for an array of rank {expected}; \
         map/map_n keep each array's rank (its type). Use pytree_std::walk::map_into (one \
         tree) or map_n with a function that returns a Result (several trees), which return \
         this as an error at its path, or an ArrayD field",
        leaf.ndim(),
        array_signature::<A>(leaf.shape()),
    )
}

/// [`to_rank`] for the infallible walks.
#[inline]
#[track_caller]
fn to_rank_or_panic<A: 'static, D: Dimension>(leaf: ArrayD<A>) -> Array<A, D> {
    if let Some(n) = D::NDIM {
        if leaf.ndim() != n {
            rank_changed(n, &leaf);
        }
    }
    match leaf.into_dimensionality::<D>() {
        Ok(a) => a,
        // Unreachable: the ranks were compared just above.
        Err(e) => panic!("pytree: array rank conversion failed: {e}"),
    }
}

super::shaped::one_leaf_pytree!(
    /// An owned array of any dimension is one leaf of type `ArrayD<A>`,
    /// moved in and out without copying its data.
    ///
    /// ```
    /// use pytree_std::ndarray::{array, Array2};
    /// let a: Array2<u8> = array![[1, 2], [3, 4]];
    /// let (leaves, def) = pytree_std::flatten(a.clone());
    /// assert_eq!(leaves[0].shape(), [2, 2]);
    /// let back: Array2<u8> = pytree_std::unflatten(&def, leaves)?;
    /// assert_eq!(back, a);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    [A: 'static, D: Dimension] Array<A, D> => ArrayD<A>,
    lend = |a| a.view().into_dyn(), lend_mut = |a| a.view_mut().into_dyn(),
    same = |a, b| a.shape() == b.shape(), signature = |a| array_signature::<A>(a.shape()),
    into_leaf = |a| a.into_dyn(), from_leaf = to_rank::<A, D>,
    from_leaf_or_panic = to_rank_or_panic::<A, D>,
);

super::shaped::one_leaf_pytree!(
    /// A shared (copy-on-write) array of any dimension is one leaf of type
    /// `ArrayD<A>`, so `ArcArray` and `Array` fields mix in one struct. The
    /// walks by reference lend views; a mutable view of a shared array
    /// first makes its data unique (`ArcArray`'s copy on write, hence
    /// `A: Clone`); flattening copies the data only if it is shared.
    ///
    /// ```
    /// use pytree_std::ndarray::{array, ArcArray1, Array1};
    /// use pytree_std::PyTree;
    /// #[derive(PyTree, Debug, PartialEq)]
    /// struct Embed { table: ArcArray1<f32>, bias: Array1<f32> }
    /// let shared = array![1.0f32, 2.0].into_shared();
    /// let mut e = Embed { table: shared.clone(), bias: array![0.0] };
    /// pytree_std::for_each_mut(&mut e, |mut x| x += 1.0);
    /// assert_eq!(e.table, array![2.0, 3.0]);
    /// assert_eq!(shared, array![1.0, 2.0]); // copied on write
    /// ```
    [A: Clone + 'static, D: Dimension] ArcArray<A, D> => ArrayD<A>,
    lend = |a| a.view().into_dyn(), lend_mut = |a| a.view_mut().into_dyn(),
    same = |a, b| a.shape() == b.shape(), signature = |a| array_signature::<A>(a.shape()),
    into_leaf = |a| a.into_owned().into_dyn(),
    from_leaf = |a| to_rank::<A, D>(a).map(Array::into_shared),
    from_leaf_or_panic = |a| to_rank_or_panic::<A, D>(a).into_shared(),
);

/// An array's elements in C (row-major) order, whatever its memory
/// layout; rebuilt in the shape of its signature.
///
/// ```
/// use pytree_std::ndarray::{array, Array1, Array2};
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: Array2<f32>, b: Array1<f32> }
/// let lin = Linear { w: array![[1.0, 2.0], [3.0, 4.0]].reversed_axes(), b: array![5.0] };
/// let (flat, plan) = pytree_std::elements::ravel(&lin)?;
/// assert_eq!(flat, [1.0, 3.0, 2.0, 4.0, 5.0]); // C order of the transposed view
/// assert_eq!(plan.unravel(&flat)?, lin);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<A: Clone + 'static> Ravel<A> for ArrayD<A> {
    fn ravel_into(leaf: ArrayViewD<'_, A>, out: &mut Vec<A>) -> Result<(), Error> {
        // A standard-layout array is one slice in C order: one copy (a
        // `memcpy` for plain element types); other layouts element by element.
        match leaf.as_slice() {
            Some(slice) => out.extend_from_slice(slice),
            None => out.extend(leaf.iter().cloned()),
        }
        Ok(())
    }
    fn unravel_from(like: &Signature, data: &[A]) -> Result<Self, Error> {
        ArrayD::from_shape_vec(IxDyn(like.shape()), data.to_vec()).map_err(|e| {
            Error::custom(format!(
                "cannot shape {} elements as {like}: {e}",
                data.len()
            ))
        })
    }
}

/// Equal shapes, then elementwise [`ApproxEq`]: floats within the
/// tolerance, other elements exactly. For every array and view
/// (`ArrayViewD` is how `tree_equal` receives array leaves).
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::{elements::ApproxEq, elements::Tolerance};
/// let a = array![[1.0f64, 2.0]];
/// assert!(a.approx_eq(&array![[1.0, 2.0 + 1e-9]], Tolerance::new(0.0, 1e-6)));
/// assert!(!a.approx_eq(&array![[1.0, 2.1]], Tolerance::new(0.0, 1e-6)));
/// assert!(!a.view().into_dyn().approx_eq(&array![1.0, 2.0].view().into_dyn(), Tolerance::new(1.0, 1.0)));
/// ```
impl<S, D> ApproxEq for ArrayBase<S, D>
where
    S: Data,
    S::Elem: ApproxEq,
    D: Dimension,
{
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.shape() == other.shape() && Zip::from(self).and(other).all(|a, b| a.approx_eq(b, tol))
    }
}

/// Ensembles (feature `ndarray`): `ndarray::stack` along axis 0; a member
/// is `index_axis(Axis(0), i)` copied into an array of its own.
impl<A: Clone + 'static> crate::ensemble::Stackable for ArrayD<A> {
    fn stack(members: &[ArrayViewD<'_, A>]) -> Result<Self, Error> {
        ndarray::stack(Axis(0), members).map_err(|e| Error::custom(format!("stack_leaves: {e}")))
    }
    fn shape<'a>(leaf: &'a ArrayViewD<'_, A>) -> &'a [usize] {
        leaf.shape()
    }
    fn index(leaf: &ArrayViewD<'_, A>, i: usize) -> Result<Self, Error> {
        Ok(leaf.index_axis(Axis(0), i).to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_of_elements() {
        assert_eq!(array_signature::<f64>(&[2]).to_string(), "f64[2]");
        assert_eq!(array_signature::<u8>(&[]).to_string(), "u8[]");
        assert_eq!(
            array_signature::<String>(&[1]).dtype(),
            pytree_core::DType::Other("alloc::string::String")
        );
    }
}
