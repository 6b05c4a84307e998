//! `DMatrix<T>` as a [`ByteLeaf`] (feature `nalgebra` alone): a matrix is
//! a tensor in C (row-major) order, a column (a `DVector`) a 1-d tensor.
//! The checkpoint's file paths are in `checkpoint.rs`.

use std::borrow::Cow;

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut, Scalar};
use pytree_core::{DType, Error, Signature};

use crate::leaf_bytes::{
    check_dtype, elements_from_bytes, signature_error, ByteLeaf, ByteTensor, Element,
};

/// The shape a `rows x cols` matrix is stored as: a column (a
/// `DVector`, or a matrix of one column) is the 1-d tensor `[rows]`,
/// as PyTorch and NumPy store a bias; every other matrix is
/// `[rows, cols]`.
pub(super) fn stored_shape((rows, cols): (usize, usize)) -> Vec<usize> {
    if cols == 1 {
        vec![rows]
    } else {
        vec![rows, cols]
    }
}

/// The matrix a tensor of `dtype` and `shape` is read as: `[n]` a
/// column, `[r, c]` itself; another rank is an error.
pub(super) fn matrix_shape(dtype: DType, shape: &[usize]) -> Result<(usize, usize), Error> {
    match *shape {
        [n] => Ok((n, 1)),
        [rows, cols] => Ok((rows, cols)),
        _ => Err(Error::custom(format!(
            "expected a 1-d or 2-d tensor for a nalgebra matrix, found {}",
            Signature::new(dtype, shape.to_vec())
        ))),
    }
}

/// That a tensor of `dtype` and `shape` fits a lent matrix of `T`s of
/// `rows x cols`, else the error naming both signatures.
pub(super) fn check_fits<T: Element>(
    (rows, cols): (usize, usize),
    dtype: DType,
    shape: &[usize],
) -> Result<(), Error> {
    let want = Signature::new(T::DTYPE, stored_shape((rows, cols)));
    if dtype != T::DTYPE || shape != want.shape() {
        return Err(signature_error(
            &want,
            &Signature::new(dtype, shape.to_vec()),
        ));
    }
    Ok(())
}

/// The error for data that is not `rows * cols` elements.
#[cold]
fn element_count_error<T: Element>(len: usize, rows: usize, cols: usize) -> Error {
    Error::custom(format!(
        "{len} {} values are not {rows} x {cols} elements",
        T::DTYPE
    ))
}

/// The `rows x cols` matrix of `values` in C order (checked to be as
/// many).
pub(super) fn matrix_of<T: Element + Scalar>(
    (rows, cols): (usize, usize),
    values: Vec<T>,
) -> Result<DMatrix<T>, Error> {
    if Some(values.len()) != rows.checked_mul(cols) {
        return Err(element_count_error::<T>(values.len(), rows, cols));
    }
    Ok(if rows == 1 || cols == 1 {
        // One row or one column: C order is nalgebra's order.
        DMatrix::from_vec(rows, cols, values)
    } else {
        DMatrix::from_row_slice(rows, cols, &values)
    })
}

/// Writes `values` (C order, checked to be as many as `slot` holds) into
/// a lent matrix.
pub(super) fn assign_in_order<T: Element + Scalar>(
    slot: &mut DMatrixViewMut<'_, T>,
    values: Vec<T>,
) -> Result<(), Error> {
    let (rows, cols) = slot.shape();
    if values.len() != rows * cols {
        return Err(element_count_error::<T>(values.len(), rows, cols));
    }
    for (k, v) in values.into_iter().enumerate() {
        slot[(k / cols, k % cols)] = v;
    }
    Ok(())
}

/// A dynamic matrix is a tensor in C (row-major) order (nalgebra stores
/// columns first, so the elements are written row by row); a column (a
/// `DVector`) is a 1-d tensor, so that a model's biases are what PyTorch
/// and NumPy write. A new one comes from a 1-d or 2-d tensor of the
/// element's dtype (a 1-d tensor as a column).
///
/// ```
/// use pytree_std::nalgebra::DMatrix;
/// use pytree_std::{ByteLeaf, ByteTensor};
/// let m = DMatrix::from_row_slice(2, 3, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// let view = m.as_view();
/// let sig = <DMatrix<f32> as ByteLeaf>::signature(&view)?;
/// assert_eq!(sig.to_string(), "f32[2,3]");
/// let bytes = <DMatrix<f32> as ByteLeaf>::bytes(&view)?;
/// assert_eq!(&bytes[4..8], 2.0f32.to_le_bytes()); // row-major
/// let t = ByteTensor::new(sig.dtype(), sig.shape(), &bytes)?;
/// assert_eq!(<DMatrix<f32> as ByteLeaf>::from_bytes(&t, None)?, m);
/// let mut zero = DMatrix::<f32>::zeros(2, 3);
/// <DMatrix<f32> as ByteLeaf>::write_bytes(zero.as_view_mut(), &t)?;
/// assert_eq!(zero, m);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<T: Element + Scalar> ByteLeaf for DMatrix<T> {
    fn fixed_dtype() -> Option<DType> {
        Some(T::DTYPE)
    }
    fn signature(leaf: &DMatrixView<'_, T>) -> Result<Signature, Error> {
        Ok(Signature::new(T::DTYPE, stored_shape(leaf.shape())))
    }
    fn bytes<'a>(leaf: &'a DMatrixView<'_, T>) -> Result<Cow<'a, [u8]>, Error> {
        let (rows, cols) = leaf.shape();
        let mut out = Vec::with_capacity(rows * cols * std::mem::size_of::<T>());
        for i in 0..rows {
            for j in 0..cols {
                leaf[(i, j)].put_le(&mut out);
            }
        }
        Ok(Cow::Owned(out))
    }
    fn write_bytes(mut slot: DMatrixViewMut<'_, T>, tensor: &ByteTensor<'_>) -> Result<(), Error> {
        check_fits::<T>(slot.shape(), tensor.dtype(), tensor.shape())?;
        // Every value is decoded (and checked) before the first is written.
        assign_in_order(&mut slot, elements_from_bytes::<T>(tensor.data())?)
    }
    fn from_bytes(
        tensor: &ByteTensor<'_>,
        _like: Option<&DMatrixView<'_, T>>,
    ) -> Result<Self, Error> {
        check_dtype(tensor.dtype(), tensor.shape(), T::DTYPE)?;
        let shape = matrix_shape(tensor.dtype(), tensor.shape())?;
        matrix_of(shape, elements_from_bytes::<T>(tensor.data())?)
    }
    fn to_owned_leaf(leaf: &DMatrixView<'_, T>) -> Self {
        leaf.clone_owned()
    }
}
