//! `ArrayD<A>` and `AnyArray` as [`ByteLeaf`]s (feature `ndarray` alone):
//! an array is its dtype, shape and little-endian elements in C order.
//! The checkpoint's file paths are in `checkpoint.rs`.

use std::borrow::Cow;

use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn};
use pytree_core::{DType, Error, Signature};

use super::any_array::{AnyArray, AnyArrayView, AnyArrayViewMut, AnyElement};
use crate::leaf_bytes::{
    check_dtype, element_bytes, element_bytes_mut, elements_from_bytes, signature_error,
    write_elements, ByteLeaf, ByteTensor, Element,
};

/// The array of `shape` holding `values` (C order), or why not (its
/// error names the signature).
pub(super) fn array_of<A: Element>(shape: &[usize], values: Vec<A>) -> Result<ArrayD<A>, Error> {
    ArrayD::from_shape_vec(IxDyn(shape), values)
        .map_err(|e| Error::custom(format!("{}: {e}", Signature::new(A::DTYPE, shape.to_vec()))))
}

/// That a tensor of `dtype` and `shape` fits a lent array of `A`s of
/// `slot_shape`, else the error naming both signatures.
pub(super) fn check_fits<A: Element>(
    slot_shape: &[usize],
    dtype: DType,
    shape: &[usize],
) -> Result<(), Error> {
    if dtype != A::DTYPE || slot_shape != shape {
        return Err(signature_error(
            &Signature::new(A::DTYPE, slot_shape.to_vec()),
            &Signature::new(dtype, shape.to_vec()),
        ));
    }
    Ok(())
}

/// Writes `values` (C order, as many as `slot` holds) into a view that is
/// not contiguous in C order (a transposed one, say).
pub(super) fn assign_in_order<A: Element>(slot: &mut ArrayViewMutD<'_, A>, values: Vec<A>) {
    for (d, v) in slot.iter_mut().zip(values) {
        *d = v;
    }
}

/// An array of any rank is a tensor of its shape. Its bytes are
/// borrowed when it is contiguous in C order, else copied in that
/// order (a transposed view, say); written in place where it is
/// contiguous ([`ByteLeaf::bytes_mut`]).
///
/// ```
/// use pytree_std::ndarray::{array, ArrayD};
/// use pytree_std::{ByteLeaf, ByteTensor};
/// let a: ArrayD<f32> = array![[1.0, 2.0], [3.0, 4.0]].into_dyn();
/// let sig = <ArrayD<f32> as ByteLeaf>::signature(&a.view())?;
/// assert_eq!(sig.to_string(), "f32[2,2]");
/// let t = a.t(); // sent in C order of its own shape
/// let bytes = <ArrayD<f32> as ByteLeaf>::bytes(&t)?;
/// let back = <ArrayD<f32> as ByteLeaf>::from_bytes(&ByteTensor::new(sig.dtype(), t.shape(), &bytes)?, None)?;
/// assert_eq!(back, t);
/// let mut zeros = ArrayD::<f32>::zeros(vec![2, 2]);
/// <ArrayD<f32> as ByteLeaf>::write_bytes(zeros.view_mut(), &ByteTensor::new(sig.dtype(), t.shape(), &bytes)?)?;
/// assert_eq!(zeros, t);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<A: Element> ByteLeaf for ArrayD<A> {
    fn fixed_dtype() -> Option<DType> {
        Some(A::DTYPE)
    }
    fn signature(leaf: &ArrayViewD<'_, A>) -> Result<Signature, Error> {
        Ok(Signature::new(A::DTYPE, leaf.shape().to_vec()))
    }
    fn bytes<'a>(leaf: &'a ArrayViewD<'_, A>) -> Result<Cow<'a, [u8]>, Error> {
        match leaf.as_slice() {
            Some(values) => Ok(element_bytes(values)),
            None => {
                let values: Vec<A> = leaf.iter().copied().collect();
                Ok(Cow::Owned(element_bytes(&values).into_owned()))
            }
        }
    }
    fn bytes_mut<'a>(slot: &'a mut ArrayViewMutD<'_, A>) -> Option<&'a mut [u8]> {
        element_bytes_mut(slot.as_slice_mut()?)
    }
    fn write_bytes(mut slot: ArrayViewMutD<'_, A>, tensor: &ByteTensor<'_>) -> Result<(), Error> {
        check_fits::<A>(slot.shape(), tensor.dtype(), tensor.shape())?;
        if let Some(dst) = slot.as_slice_mut() {
            return write_elements(dst, tensor.data());
        }
        assign_in_order(&mut slot, elements_from_bytes::<A>(tensor.data())?);
        Ok(())
    }
    fn from_bytes(
        tensor: &ByteTensor<'_>,
        _like: Option<&ArrayViewD<'_, A>>,
    ) -> Result<Self, Error> {
        check_dtype(tensor.dtype(), tensor.shape(), A::DTYPE)?;
        array_of(tensor.shape(), elements_from_bytes::<A>(tensor.data())?)
    }
    fn to_owned_leaf(leaf: &ArrayViewD<'_, A>) -> Self {
        leaf.to_owned()
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
// For `checkpoint.rs` (feature `safetensors`).
#[cfg_attr(not(feature = "safetensors"), allow(unused_imports))]
pub(super) use each_variant;

/// `$body` with the type `$a` the element type of an [`AnyArray`] of
/// dtype `$dtype`; `$none` (with `$other` the dtype) for a dtype that an
/// `AnyArray` does not hold.
macro_rules! by_element {
    ($dtype:expr, $a:ident => $body:expr, $other:ident => $none:expr) => {
        by_element!(@each $dtype, $a => $body, $other => $none;
            F32 f32, F64 f64, F16 half::f16, BF16 half::bf16,
            I64 i64, I32 i32, U8 u8, Bool bool)
    };
    // One arm a dtype and its element type.
    (@each $dtype:expr, $a:ident => $body:expr, $other:ident => $none:expr;
        $($variant:ident $t:ty),*) => {
        match $dtype {
            $(DType::$variant => {
                type $a = $t;
                $body
            })*
            $other => $none,
        }
    };
}
// For `checkpoint.rs` (feature `safetensors`).
#[cfg_attr(not(feature = "safetensors"), allow(unused_imports))]
pub(super) use by_element;

/// The error for a dtype that no `AnyArray` holds.
#[cold]
pub(super) fn not_held(dtype: DType) -> Error {
    Error::custom(format!(
        "dtype {dtype} is not one an AnyArray holds (f32, f64, f16, bf16, i64, i32, u8, bool)"
    ))
}

/// That a tensor of `found`'s dtype may replace the template `like`:
/// the same dtype, as for typed leaves.
pub(super) fn check_like(
    like: Option<&AnyArrayView<'_>>,
    found: DType,
    shape: &[usize],
) -> Result<(), Error> {
    match like {
        Some(like) => check_dtype(found, shape, like.dtype()),
        None => Ok(()),
    }
}

/// The typed impl's bytes of a typed view.
fn typed_bytes<'a, A: Element>(a: &'a ArrayViewD<'_, A>) -> Result<Cow<'a, [u8]>, Error> {
    <ArrayD<A> as ByteLeaf>::bytes(a)
}

/// The typed impl's write into a typed view.
fn typed_write<A: Element>(a: ArrayViewMutD<'_, A>, tensor: &ByteTensor<'_>) -> Result<(), Error> {
    <ArrayD<A> as ByteLeaf>::write_bytes(a, tensor)
}

/// An [`AnyArray`] is a tensor of its own dtype and shape: its bytes
/// are the typed array's; a new one takes the tensor's dtype, or with a
/// template the template's (another dtype is an error there, as for
/// typed leaves).
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::{AnyArray, ByteLeaf, ByteTensor};
/// let a = AnyArray::from(array![7i64, 8]);
/// let view = a.lend();
/// let sig = <AnyArray as ByteLeaf>::signature(&view)?;
/// let bytes = <AnyArray as ByteLeaf>::bytes(&view)?;
/// let t = ByteTensor::new(sig.dtype(), sig.shape(), &bytes)?;
/// assert_eq!(<AnyArray as ByteLeaf>::from_bytes(&t, None)?, a);
/// let f = AnyArray::from(array![1.0f32, 2.0]);
/// assert!(<AnyArray as ByteLeaf>::from_bytes(&t, Some(&f.lend())).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl ByteLeaf for AnyArray {
    fn fixed_dtype() -> Option<DType> {
        None
    }
    fn signature(leaf: &AnyArrayView<'_>) -> Result<Signature, Error> {
        Ok(leaf.signature())
    }
    fn bytes<'a>(leaf: &'a AnyArrayView<'_>) -> Result<Cow<'a, [u8]>, Error> {
        each_variant!(leaf, AnyArrayView, a => typed_bytes(a))
    }
    fn bytes_mut<'a>(slot: &'a mut AnyArrayViewMut<'_>) -> Option<&'a mut [u8]> {
        each_variant!(slot, AnyArrayViewMut, a => element_bytes_mut(a.as_slice_mut()?))
    }
    fn write_bytes(slot: AnyArrayViewMut<'_>, tensor: &ByteTensor<'_>) -> Result<(), Error> {
        each_variant!(slot, AnyArrayViewMut, a => typed_write(a, tensor))
    }
    fn from_bytes(tensor: &ByteTensor<'_>, like: Option<&AnyArrayView<'_>>) -> Result<Self, Error> {
        check_like(like, tensor.dtype(), tensor.shape())?;
        by_element!(tensor.dtype(),
            A => <ArrayD<A> as ByteLeaf>::from_bytes(tensor, None).map(A::into_any),
            other => Err(not_held(other)))
    }
    fn to_owned_leaf(leaf: &AnyArrayView<'_>) -> Self {
        leaf.to_owned()
    }
}
