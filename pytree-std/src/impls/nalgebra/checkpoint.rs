//! Checkpoints (feature `safetensors`): `DMatrix<T>` as a
//! [`TensorLeaf`], a file read straight into a new vector of elements
//! with one positioned read; its bytes are `bytes.rs`'s.

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut, Scalar};
use pytree_core::Error;

use super::bytes::{assign_in_order, check_fits, matrix_of, matrix_shape};
use crate::checkpoint::leaf::read_elements;
use crate::checkpoint::{TensorLeaf, TensorView};
use crate::leaf_bytes::{check_dtype, Element};

/// Loaded by type from a 1-d or 2-d tensor of the element's dtype (a
/// 1-d tensor as a column), against a template or in place with the
/// template's shape.
///
/// ```
/// use pytree_std::checkpoint::{self, Checkpoint, Load};
/// use pytree_std::nalgebra::{DMatrix, DVector};
/// use pytree_std::PyTree;
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// struct Linear { w: DMatrix<f32>, b: DVector<f32> }
///
/// let lin = Linear { w: DMatrix::from_row_slice(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), b: DVector::from_vec(vec![7.0, 8.0]) };
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&lin)?)?;
/// let w = file.tensor("w").unwrap();
/// assert_eq!(w.signature().to_string(), "f32[2,3]");
/// assert_eq!(&w.data()?[4..8], 2.0f32.to_le_bytes()); // row-major
/// assert_eq!(file.tensor("b").unwrap().signature().to_string(), "f32[2]");
/// assert_eq!(file.load::<Linear>()?.0, lin);
/// assert_eq!(file.load_like(&lin)?.0, lin);
/// let mut zero = Linear { w: DMatrix::zeros(2, 3), b: DVector::zeros(2) };
/// file.load_into(&mut zero)?;
/// assert_eq!(zero, lin);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<T: Element + Scalar> TensorLeaf for DMatrix<T> {
    fn from_tensor(
        tensor: &TensorView<'_>,
        _like: Option<&DMatrixView<'_, T>>,
    ) -> Result<Self, Error> {
        check_dtype(tensor.dtype(), tensor.shape(), T::DTYPE).map_err(|e| tensor.named(e))?;
        let shape = matrix_shape(tensor.dtype(), tensor.shape()).map_err(|e| tensor.named(e))?;
        let values = read_elements::<T>(tensor)?;
        matrix_of(shape, values).map_err(|e| tensor.named(e))
    }
    fn copy_from_tensor(
        mut slot: DMatrixViewMut<'_, T>,
        tensor: &TensorView<'_>,
    ) -> Result<(), Error> {
        check_fits::<T>(slot.shape(), tensor.dtype(), tensor.shape())
            .map_err(|e| tensor.named(e))?;
        // Every value is read (and checked) before the first is written.
        let values = read_elements::<T>(tensor)?;
        assign_in_order(&mut slot, values).map_err(|e| tensor.named(e))
    }
}
