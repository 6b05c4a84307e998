//! nalgebra's dynamically sized matrices and vectors as leaves (feature
//! `nalgebra`), on the model of the ndarray impls: [`DMatrix<T>`] and
//! [`DVector<T>`] are pytrees with one leaf of type `DMatrix<T>` (a vector
//! is an `n x 1` matrix, moved without copying), so a struct with a
//! `DMatrix<f64>` and a `DVector<f64>` field has one leaf type. The walks
//! by reference lend each as a matrix view ([`DMatrixView`] /
//! [`DMatrixViewMut`]); the signature is the dtype and `[rows, cols]`, so
//! multi-tree operations compare shapes before anything changes and
//! `set` refuses a matrix of another shape. Unflattening a `DVector` from
//! a matrix of more than one column is an error at its path; `map` /
//! `map_n` whose function returns such a matrix for a vector field panic,
//! naming `map_into` and `map_n` with a fallible function (which return
//! the error), as for
//! rank-typed ndarray arrays. Statically sized matrices (`Matrix3<f64>`)
//! are not covered: their shapes are types, and one leaf type for all of
//! them would need the same dynamic erasure.
//!
//! Everything a leaf type provides for nalgebra is in this folder:
//! `Leaf`, `Flatten` / `Unflatten`, `Ravel` (C order), `ApproxEq`, the
//! optimizer arithmetic `FloatLeaf` (`float.rs`), `ByteLeaf` (`bytes.rs`:
//! C order, a column as a 1-d tensor) and with `safetensors` the
//! checkpoint's `TensorLeaf` (`checkpoint.rs`). Not ensembles: a stacked leaf has a
//! member axis on top of a matrix's two, nalgebra has no 3-d matrix to
//! hold it, and `stack_leaves` returns a tree of the members' own type.
//!
//! ```
//! use pytree_std::nalgebra::{DMatrix, DVector};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Linear { w: DMatrix<f64>, b: DVector<f64> }
//!
//! let lin = Linear { w: DMatrix::identity(2, 2), b: DVector::from_element(2, 1.0) };
//! let (leaves, def) = pytree_std::flatten(lin.clone());
//! assert_eq!(leaves[1].shape(), (2, 1));
//! let mut p = lin.clone();
//! pytree_std::zip_mut([&mut p], [&lin], |[mut x], [g]| x -= g * 0.5)?;
//! assert_eq!(p.b, DVector::from_element(2, 0.5));
//! let err = pytree_std::unflatten::<Linear>(&def, vec![leaves[0].clone(), leaves[0].clone()])
//!     .unwrap_err();
//! assert_eq!(err.to_string(), "at .b: not a column vector: expected f64[_,1], found f64[2,2]");
//! # Ok::<(), pytree_std::Error>(())
//! ```

use nalgebra::{
    DMatrix, DMatrixView, DMatrixViewMut, DVector, Dim, Dyn, Matrix, RawStorage, Scalar, U1,
};
use pytree_core::{Error, Signature};

mod bytes;
#[cfg(feature = "safetensors")]
mod checkpoint;
mod float;

use super::dtype_of;
use crate::{elements::ApproxEq, elements::Ravel, elements::Tolerance};

/// The signature of a `rows x cols` matrix of `T`s.
fn matrix_signature<T: 'static>(shape: (usize, usize)) -> Signature {
    Signature::new(dtype_of::<T>(), vec![shape.0, shape.1])
}

super::shaped::array_leaf!(
    /// `DMatrix<T>` is the leaf type of nalgebra's dynamic matrices and
    /// vectors, lent as matrix views; its signature is `dtype[rows,cols]`.
    ///
    /// ```
    /// use pytree_std::nalgebra::DMatrix;
    /// use pytree_std::{Leaf, Std};
    /// let mut m = DMatrix::from_element(2, 3, 1.0f32);
    /// assert_eq!(<DMatrix<f32> as Leaf<Std>>::signature(&m.as_view()).unwrap().to_string(), "f32[2,3]");
    /// let old = <DMatrix<f32> as Leaf<Std>>::assign(m.as_view_mut(), DMatrix::zeros(2, 3))?;
    /// assert_eq!((old[(0, 0)], m[(0, 0)]), (1.0, 0.0));
    /// assert!(<DMatrix<f32> as Leaf<Std>>::assign(m.as_view_mut(), DMatrix::zeros(3, 2)).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    [T: Scalar] DMatrix<T>,
    DMatrixView<T> = as_view, DMatrixViewMut<T> = as_view_mut,
    signature = matrix_signature::<T>,
    swap = |slot, value| slot.iter_mut().zip(value.iter_mut()).for_each(|(a, b)| std::mem::swap(a, b)),
);

/// The error of a matrix read where a vector is wanted.
#[cold]
fn not_a_column<T: 'static>(shape: (usize, usize)) -> Error {
    Error::custom(format!(
        "not a column vector: expected {}[_,1], found {}",
        dtype_of::<T>(),
        matrix_signature::<T>(shape)
    ))
}

/// A matrix leaf as a vector, or why not.
fn to_vector<T: Scalar>(m: DMatrix<T>) -> Result<DVector<T>, Error> {
    if m.ncols() != 1 {
        return Err(not_a_column::<T>(m.shape()));
    }
    let n = m.nrows();
    Ok(m.reshape_generic(Dyn(n), U1))
}

/// [`to_vector`] for the infallible walks: panics, naming the fallible
/// routes (see the module docs).
#[track_caller]
fn to_vector_or_panic<T: Scalar>(m: DMatrix<T>) -> DVector<T> {
    if m.ncols() != 1 {
        panic!(
            "pytree: the function returned a matrix {} for a DVector; map/map_n keep \
             vectors as vectors (their type). Use pytree_std::walk::map_into (one tree) or map_n \
             with a function that returns a Result (several trees), which return this as an error \
             at its path, or a DMatrix field",
            matrix_signature::<T>(m.shape())
        );
    }
    let n = m.nrows();
    m.reshape_generic(Dyn(n), U1)
}

/// A vector as its leaf, an `n x 1` matrix (no copy).
fn vector_leaf<T: Scalar>(v: DVector<T>) -> DMatrix<T> {
    let n = v.nrows();
    v.reshape_generic(Dyn(n), Dyn(1))
}

super::shaped::one_leaf_pytree!(
    /// A dynamic matrix is one leaf, itself.
    ///
    /// ```
    /// use pytree_std::nalgebra::DMatrix;
    /// let m = vec![DMatrix::from_element(2, 2, 1u8), DMatrix::zeros(1, 3)];
    /// let (leaves, def) = pytree_std::flatten(m.clone());
    /// assert_eq!(leaves[1].shape(), (1, 3));
    /// assert_eq!(pytree_std::unflatten::<Vec<DMatrix<u8>>>(&def, leaves)?, m);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    [T: Scalar] DMatrix<T> => DMatrix<T>,
    lend = |m| m.as_view(), lend_mut = |m| m.as_view_mut(),
    same = |a, b| a.shape() == b.shape(), signature = |m| matrix_signature::<T>(m.shape()),
    into_leaf = |m| m, from_leaf = Ok, from_leaf_or_panic = |m| m,
);

super::shaped::one_leaf_pytree!(
    /// A dynamic vector is one leaf of type `DMatrix<T>`, an `n x 1`
    /// matrix (moved, not copied); unflattening one from a matrix of more
    /// than one column is an error.
    ///
    /// ```
    /// use pytree_std::nalgebra::{DMatrix, DVector};
    /// let v = DVector::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let (leaves, def) = pytree_std::flatten(v.clone());
    /// assert_eq!(leaves[0].shape(), (3, 1));
    /// assert_eq!(pytree_std::unflatten::<DVector<f32>>(&def, leaves)?, v);
    /// assert!(pytree_std::unflatten::<DVector<f32>>(&def, [DMatrix::zeros(3, 2)]).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    [T: Scalar] DVector<T> => DMatrix<T>,
    lend = |m| m.as_view(), lend_mut = |m| m.as_view_mut(),
    same = |a, b| a.shape() == b.shape(), signature = |m| matrix_signature::<T>(m.shape()),
    into_leaf = vector_leaf::<T>, from_leaf = to_vector::<T>,
    from_leaf_or_panic = to_vector_or_panic::<T>,
);

/// A matrix's elements in C (row-major) order, as every leaf ravels
/// (nalgebra stores columns first); rebuilt from rows.
///
/// ```
/// use pytree_std::nalgebra::{DMatrix, DVector};
/// let m = (DMatrix::from_row_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0]), DVector::from_vec(vec![5.0]));
/// let (flat, plan) = pytree_std::elements::ravel(&m)?;
/// assert_eq!(flat, [1.0, 2.0, 3.0, 4.0, 5.0]);
/// assert_eq!(plan.unravel(&flat)?, m);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<T: Scalar> Ravel<T> for DMatrix<T> {
    fn ravel_into(leaf: DMatrixView<'_, T>, out: &mut Vec<T>) -> Result<(), Error> {
        let (rows, cols) = leaf.shape();
        out.reserve(rows * cols);
        for i in 0..rows {
            out.extend((0..cols).map(|j| leaf[(i, j)].clone()));
        }
        Ok(())
    }
    fn unravel_from(like: &Signature, data: &[T]) -> Result<Self, Error> {
        match *like.shape() {
            [rows, cols] if rows.checked_mul(cols) == Some(data.len()) => {
                Ok(DMatrix::from_row_slice(rows, cols, data))
            }
            _ => Err(Error::custom(format!(
                "cannot shape {} elements as the matrix {like}",
                data.len()
            ))),
        }
    }
}

/// Equal shapes, then elementwise [`ApproxEq`] (floats within the
/// tolerance, other elements exactly), for every matrix, vector and view.
///
/// ```
/// use pytree_std::nalgebra::DMatrix;
/// use pytree_std::{elements::ApproxEq, elements::Tolerance};
/// let a = DMatrix::from_element(2, 2, 1.0f64);
/// assert!(a.approx_eq(&DMatrix::from_element(2, 2, 1.0 + 1e-9), Tolerance::new(0.0, 1e-6)));
/// assert!(!a.approx_eq(&DMatrix::from_element(1, 4, 1.0), Tolerance::new(1.0, 1.0)));
/// ```
impl<T, R, C, S> ApproxEq for Matrix<T, R, C, S>
where
    T: ApproxEq,
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C>,
{
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        // Both iterators go in column-major order over equal shapes.
        self.shape() == other.shape()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.approx_eq(b, tol))
    }
}
