//! Optimizer arithmetic: [`FloatLeaf`] for nalgebra's dynamic matrices:
//! `DMatrix<T>` is the leaf type of every `DMatrix<T>` and `DVector<T>`
//! field, of `f32`, `f64` and (with feature `half`) `f16` / `bf16`
//! elements.
//!
//! A matrix held by a model is one slice of memory in nalgebra's column
//! order, and the parameters, gradients and moments of an update all are,
//! with the same strides (the moments are made by
//! [`zeros_like`](FloatLeaf::zeros_like) in that order): the update is then
//! the same loop over slices as for ndarray arrays (same kernels, same
//! bits, split across threads with [`Exec::Parallel`]). A view with other
//! strides is walked element by element in column order.
//!
//! ```
//! use pytree_std::elements::{Exec, FloatLeaf};
//! use pytree_std::nalgebra::DMatrix;
//!
//! let mut p = DMatrix::from_element(2, 3, 1.0f64);
//! let g = DMatrix::from_element(2, 3, 0.5f64);
//! let step = |[p]: [&mut f64; 1], [g]: [f64; 1]| *p -= 0.2 * g;
//! DMatrix::zip_elements([p.as_view_mut()], [g.as_view()], Exec::Sequential, &step)?;
//! assert_eq!(p[(1, 2)], 0.9);
//! # Ok::<(), pytree_std::Error>(())
//! ```

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut, RawStorage, RawStorageMut, Scalar};

use crate::elements::{
    all_some, common_shape, sum_slice, zip_element_iters, zip_slices, Exec, FloatElement, FloatLeaf,
};
use pytree_core::Error;

/// The elements of a view whose memory is one run in column order, as a
/// slice; `None` for a view with other strides.
fn column_slice<'v, T: Scalar>(view: &'v DMatrixView<'_, T>) -> Option<&'v [T]> {
    if !view.data.is_contiguous() {
        return None;
    }
    // SAFETY: the view's storage is contiguous (row stride 1, column
    // stride the row count, checked just above), so the slice nalgebra
    // builds from its first element and the linear index of its last one
    // covers exactly the view's `rows * cols` elements, which the view
    // borrows for `'v` and no more; the aliasing the function warns about
    // needs views with strides that interleave, which a contiguous view
    // does not have.
    Some(unsafe { view.data.as_slice_unchecked() })
}

/// [`column_slice`] of a mutable view, for as long as it is borrowed.
fn column_slice_mut<'v, T: Scalar>(view: &'v mut DMatrixViewMut<'_, T>) -> Option<&'v mut [T]> {
    if !view.data.is_contiguous() {
        return None;
    }
    // SAFETY: as in `column_slice`: exactly the view's own elements, and
    // the view is a unique borrow of them, borrowed mutably here for `'v`,
    // so no other reference to them exists while the slice lives.
    Some(unsafe { view.data.as_mut_slice_unchecked() })
}

/// Matrices and vectors of float elements (`DMatrix<T>` is the leaf type
/// of both); see the module docs.
impl<T: FloatElement + Scalar + Default> FloatLeaf for DMatrix<T> {
    type Scalar = T::Compute;

    fn zip_elements<const N: usize, const M: usize, F>(
        mut muts: [DMatrixViewMut<'_, T>; N],
        refs: [DMatrixView<'_, T>; M],
        exec: Exec,
        f: &F,
    ) -> Result<(), Error>
    where
        F: Fn([&mut T::Compute; N], [T::Compute; M]) + Sync,
    {
        let shapes = muts.iter().map(|m| m.shape());
        if common_shape(shapes.chain(refs.iter().map(|r| r.shape())), "matrix")?.is_none() {
            return Ok(());
        }
        let contiguous = muts.iter().all(|m| m.data.is_contiguous())
            && refs.iter().all(|r| r.data.is_contiguous());
        if contiguous {
            let ms = all_some(muts.each_mut().map(column_slice_mut));
            let rs = all_some(refs.each_ref().map(column_slice));
            if let (Some(ms), Some(rs)) = (ms, rs) {
                zip_slices(ms, rs, exec, f);
                return Ok(());
            }
        }
        // Other strides: element by element, every matrix in column order.
        zip_element_iters(
            muts.each_mut().map(|m| m.iter_mut()),
            refs.each_ref().map(|r| r.iter()),
            f,
        );
        Ok(())
    }

    fn sum_elements<F>(leaf: DMatrixView<'_, T>, exec: Exec, f: &F) -> Result<f64, Error>
    where
        F: Fn(T::Compute) -> f64 + Sync,
    {
        Ok(match column_slice(&leaf) {
            Some(s) => sum_slice(s, exec, f),
            None => leaf.iter().map(|x| f(x.load())).sum(),
        })
    }

    /// Zeros of the leaf's shape, in nalgebra's column order (the layout
    /// of every matrix a model owns, so the update stays one loop).
    fn zeros_like(leaf: DMatrixView<'_, T>) -> Result<DMatrix<T>, Error> {
        let (rows, cols) = leaf.shape();
        Ok(DMatrix::from_element(rows, cols, T::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view of part of a matrix (column stride 3, 2 rows) is walked
    /// element by element, with the result of the contiguous loop, and
    /// the rest of the matrix is left alone.
    #[test]
    fn strided_views_give_the_contiguous_result() {
        let step = |[p]: [&mut f32; 1], [g]: [f32; 1]| *p -= 0.5 * g;
        let mut big = DMatrix::from_fn(3, 3, |i, j| (i * 3 + j) as f32);
        let g = DMatrix::from_element(2, 2, 1.0f32);
        let mut want = big.view((0, 0), (2, 2)).clone_owned();
        <DMatrix<f32>>::zip_elements([want.as_view_mut()], [g.as_view()], Exec::Sequential, &step)
            .unwrap();
        let view = big.view_mut((0, 0), (2, 2));
        assert!(!view.data.is_contiguous());
        <DMatrix<f32>>::zip_elements([view], [g.as_view()], Exec::Sequential, &step).unwrap();
        assert_eq!(big.view((0, 0), (2, 2)).clone_owned(), want);
        assert_eq!((big[(2, 2)], big[(0, 2)]), (8.0, 2.0));
        let sum =
            <DMatrix<f32>>::sum_elements(big.view((0, 0), (2, 2)), Exec::Sequential, &f64::from)
                .unwrap();
        assert_eq!(sum, f64::from(want.sum()));
        let err = <DMatrix<f32>>::zip_elements(
            [want.as_view_mut()],
            [big.as_view()],
            Exec::Sequential,
            &step,
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "at <root>: matrix shape mismatch: expected (2, 2), found (3, 3)"
        );
    }
}
