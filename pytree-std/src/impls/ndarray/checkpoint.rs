//! Checkpoints (feature `safetensors`): `ArrayD<A>` and `AnyArray` as
//! [`TensorLeaf`]s, read straight into a new array's memory (or the
//! array already there) with positioned reads; their bytes are
//! `bytes.rs`'s.

use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD};
use pytree_core::{DType, Error};

use super::any_array::{AnyArray, AnyArrayView, AnyArrayViewMut, AnyElement};
use super::bytes::{
    array_of, assign_in_order, by_element, check_fits, check_like, each_variant, not_held,
};
use crate::checkpoint::leaf::{copy_elements, read_elements};
use crate::checkpoint::{TensorLeaf, TensorView};
use crate::leaf_bytes::{check_dtype, Element};

/// An array is read from a file straight into its memory.
///
/// ```
/// use pytree_std::checkpoint::{self, Load};
/// use pytree_std::ndarray::{array, ArrayD};
/// let t: ArrayD<f32> = array![[1.0, 2.0], [3.0, 4.0]].t().to_owned().into_dyn();
/// let file = checkpoint::Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(t.clone(),))?)?;
/// assert_eq!(file.load::<(ArrayD<f32>,)>()?.0.0, t);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<A: Element> TensorLeaf for ArrayD<A> {
    fn from_tensor(
        tensor: &TensorView<'_>,
        _like: Option<&ArrayViewD<'_, A>>,
    ) -> Result<Self, Error> {
        check_dtype(tensor.dtype(), tensor.shape(), A::DTYPE).map_err(|e| tensor.named(e))?;
        let values = read_elements::<A>(tensor)?;
        array_of(tensor.shape(), values).map_err(|e| tensor.named(e))
    }
    fn copy_from_tensor(
        mut slot: ArrayViewMutD<'_, A>,
        tensor: &TensorView<'_>,
    ) -> Result<(), Error> {
        check_fits::<A>(slot.shape(), tensor.dtype(), tensor.shape())
            .map_err(|e| tensor.named(e))?;
        if let Some(dst) = slot.as_slice_mut() {
            return copy_elements(dst, tensor);
        }
        assign_in_order(&mut slot, read_elements::<A>(tensor)?);
        Ok(())
    }
}

/// The typed impl's in-place copy into a typed view.
fn typed_copy<A: Element>(a: ArrayViewMutD<'_, A>, tensor: &TensorView<'_>) -> Result<(), Error> {
    <ArrayD<A> as TensorLeaf>::copy_from_tensor(a, tensor)
}

/// An [`AnyArray`] is loaded with the file's dtype by type alone, or
/// with the template's dtype against a template (another dtype is an
/// error there, as for typed leaves), read as the typed array.
///
/// ```
/// use pytree_std::checkpoint::{self, Checkpoint, Load};
/// use pytree_std::ndarray::array;
/// use pytree_std::AnyArray;
/// let t = (AnyArray::from(array![[1.5f32]]), AnyArray::from(array![7i64, 8]));
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&t)?)?;
/// assert_eq!(file.load::<(AnyArray, AnyArray)>()?.0, t);
/// assert_eq!(file.load_like(&t)?.0, t);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl TensorLeaf for AnyArray {
    fn from_tensor(
        tensor: &TensorView<'_>,
        like: Option<&AnyArrayView<'_>>,
    ) -> Result<Self, Error> {
        check_like(like, tensor.dtype(), tensor.shape()).map_err(|e| tensor.named(e))?;
        by_element!(tensor.dtype(),
            A => <ArrayD<A> as TensorLeaf>::from_tensor(tensor, None).map(A::into_any),
            other => Err(tensor.named(not_held(other))))
    }
    fn copy_from_tensor(slot: AnyArrayViewMut<'_>, tensor: &TensorView<'_>) -> Result<(), Error> {
        each_variant!(slot, AnyArrayViewMut, a => typed_copy(a, tensor))
    }
}
