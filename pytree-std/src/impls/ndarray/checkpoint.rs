//! Checkpoints (feature `safetensors`): `ArrayD<A>` and `AnyArray` as
//! [`TensorLeaf`]s.

use std::borrow::Cow;

use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn};
use pytree_core::{DType, Error, Signature};

use super::any_array::{AnyArray, AnyArrayView, AnyArrayViewMut, AnyElement};
use crate::checkpoint::leaf::{
    copy_elements, dtype_error, element_bytes, element_bytes_mut, read_elements,
};
use crate::checkpoint::{Element, TensorLeaf, TensorView};

/// An array of any rank is a tensor of its shape. Its bytes are
/// borrowed when it is contiguous in C order, else copied in that
/// order (a transposed view, say).
///
/// ```
/// use pytree_std::checkpoint::{self, Load, TensorLeaf};
/// use pytree_std::ndarray::{array, ArrayD};
/// let a: ArrayD<f32> = array![[1.0, 2.0], [3.0, 4.0]].into_dyn();
/// assert_eq!(<ArrayD<f32> as TensorLeaf>::tensor_signature(&a.view())?.to_string(), "f32[2,2]");
/// let t = a.t().to_owned(); // stored in C order of its own shape
/// let file = checkpoint::Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(t.clone(),))?)?;
/// assert_eq!(file.load::<(ArrayD<f32>,)>()?.0.0, t);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<A: Element> TensorLeaf for ArrayD<A> {
    fn fixed_dtype() -> Option<DType> {
        Some(A::DTYPE)
    }
    fn tensor_signature(leaf: &ArrayViewD<'_, A>) -> Result<Signature, Error> {
        Ok(Signature::new(A::DTYPE, leaf.shape().to_vec()))
    }
    fn tensor_bytes<'a>(leaf: &'a ArrayViewD<'_, A>) -> Result<Cow<'a, [u8]>, Error> {
        match leaf.as_slice() {
            Some(values) => Ok(element_bytes(values)),
            None => {
                let values: Vec<A> = leaf.iter().copied().collect();
                Ok(Cow::Owned(element_bytes(&values).into_owned()))
            }
        }
    }
    fn from_tensor(
        tensor: &TensorView<'_>,
        _like: Option<&ArrayViewD<'_, A>>,
    ) -> Result<Self, Error> {
        if tensor.dtype != A::DTYPE {
            return Err(dtype_error(tensor, A::DTYPE));
        }
        let values = read_elements::<A>(tensor)?;
        ArrayD::from_shape_vec(IxDyn(tensor.shape), values).map_err(|e| {
            Error::custom(format!(
                "tensor `{}` ({}): {e}",
                tensor.name,
                tensor.signature()
            ))
        })
    }
    fn copy_from_tensor(
        mut slot: ArrayViewMutD<'_, A>,
        tensor: &TensorView<'_>,
    ) -> Result<(), Error> {
        if tensor.dtype != A::DTYPE || slot.shape() != tensor.shape {
            return Err(Error::custom(format!(
                "tensor `{}`: expected {}, found {}",
                tensor.name,
                Signature::new(A::DTYPE, slot.shape().to_vec()),
                tensor.signature()
            )));
        }
        if let Some(dst) = slot.as_slice_mut() {
            return copy_elements(dst, tensor);
        }
        let values = read_elements::<A>(tensor)?;
        for (d, v) in slot.iter_mut().zip(values) {
            *d = v;
        }
        Ok(())
    }
    fn to_owned_leaf(leaf: &ArrayViewD<'_, A>) -> Self {
        leaf.to_owned()
    }
    fn tensor_bytes_mut<'a>(slot: &'a mut ArrayViewMutD<'_, A>) -> Option<&'a mut [u8]> {
        element_bytes_mut(slot.as_slice_mut()?)
    }
}

/// Calls `$body` with `$a` bound to the typed array (or view) inside
/// each variant of an [`AnyArray`] type.
macro_rules! each_variant {
    ($value:expr, $ty:ident, $a:ident => $body:expr) => {
        match $value {
            $ty::F32($a) => $body,
            $ty::F64($a) => $body,
            $ty::F16($a) => $body,
            $ty::BF16($a) => $body,
            $ty::I64($a) => $body,
            $ty::I32($a) => $body,
            $ty::U8($a) => $body,
            $ty::Bool($a) => $body,
        }
    };
}

/// The typed impl's bytes of a typed view.
fn typed_bytes<'a, A: Element>(a: &'a ArrayViewD<'_, A>) -> Result<Cow<'a, [u8]>, Error> {
    <ArrayD<A> as TensorLeaf>::tensor_bytes(a)
}

/// The typed impl's in-place copy into a typed view.
fn typed_copy<A: Element>(a: ArrayViewMutD<'_, A>, tensor: &TensorView<'_>) -> Result<(), Error> {
    <ArrayD<A> as TensorLeaf>::copy_from_tensor(a, tensor)
}

/// The array of the file's dtype, as the typed impl reads it.
fn any_from_tensor(tensor: &TensorView<'_>) -> Result<AnyArray, Error> {
    fn typed<A: Element + AnyElement>(tensor: &TensorView<'_>) -> Result<AnyArray, Error> {
        <ArrayD<A> as TensorLeaf>::from_tensor(tensor, None).map(A::into_any)
    }
    match tensor.dtype {
        DType::F32 => typed::<f32>(tensor),
        DType::F64 => typed::<f64>(tensor),
        DType::F16 => typed::<half::f16>(tensor),
        DType::BF16 => typed::<half::bf16>(tensor),
        DType::I64 => typed::<i64>(tensor),
        DType::I32 => typed::<i32>(tensor),
        DType::U8 => typed::<u8>(tensor),
        DType::Bool => typed::<bool>(tensor),
        other => Err(Error::custom(format!(
            "tensor `{}`: dtype {other} is not one an AnyArray holds \
             (f32, f64, f16, bf16, i64, i32, u8, bool)",
            tensor.name
        ))),
    }
}

/// An [`AnyArray`] is a tensor of its own dtype and shape: saved as
/// the typed array it holds, loaded with the file's dtype by type
/// alone, or with the template's dtype against a template (another
/// dtype is an error there, as for typed leaves).
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
    fn fixed_dtype() -> Option<DType> {
        None
    }
    fn tensor_signature(leaf: &AnyArrayView<'_>) -> Result<Signature, Error> {
        Ok(leaf.signature())
    }
    fn tensor_bytes<'a>(leaf: &'a AnyArrayView<'_>) -> Result<Cow<'a, [u8]>, Error> {
        each_variant!(leaf, AnyArrayView, a => typed_bytes(a))
    }
    fn from_tensor(
        tensor: &TensorView<'_>,
        like: Option<&AnyArrayView<'_>>,
    ) -> Result<Self, Error> {
        if let Some(like) = like {
            if like.dtype() != tensor.dtype {
                return Err(dtype_error(tensor, like.dtype()));
            }
        }
        any_from_tensor(tensor)
    }
    fn copy_from_tensor(slot: AnyArrayViewMut<'_>, tensor: &TensorView<'_>) -> Result<(), Error> {
        each_variant!(slot, AnyArrayViewMut, a => typed_copy(a, tensor))
    }
    fn to_owned_leaf(leaf: &AnyArrayView<'_>) -> Self {
        leaf.to_owned()
    }
    fn tensor_bytes_mut<'a>(slot: &'a mut AnyArrayViewMut<'_>) -> Option<&'a mut [u8]> {
        each_variant!(slot, AnyArrayViewMut, a => element_bytes_mut(a.as_slice_mut()?))
    }
}
