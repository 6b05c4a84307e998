//! [`BurnTensor`] as a [`ByteLeaf`] (feature `burn` alone): its own dtype
//! (`f32`, `f64`, `f16`, `bf16`) and shape, its elements read from the
//! device as little-endian bytes in C order; a new one goes on the
//! template's device (burn's default device without one). The
//! checkpoint's file path is in `checkpoint.rs`.

use std::borrow::Cow;

use burn::tensor::{DType as BurnDType, Device, Tensor, TensorData};
use pytree_core::{DType, Error, Signature};

use super::BurnTensor;
use crate::leaf_bytes::{signature_error, ByteLeaf, ByteTensor};

/// The device of a new tensor: the template's, else burn's default.
pub(super) fn device_like(like: Option<&&BurnTensor>) -> Device {
    like.map_or_else(Device::default, |t| t.device())
}

/// The error for a tensor that no burn leaf holds (not a float).
#[cold]
pub(super) fn not_a_float(found: &Signature) -> Error {
    Error::custom(format!(
        "a burn leaf is a float tensor, not {} ({found})",
        found.dtype()
    ))
}

/// A burn tensor is its own dtype and shape; its bytes are read from its
/// device. A new one (from bytes in memory) goes on the template's
/// device, or burn's default device without a template.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use pytree_std::{BurnTensor, ByteLeaf, ByteTensor};
/// let t = BurnTensor::new(Tensor::<2>::ones([2, 3], &Device::default()));
/// let lent = &t;
/// let sig = <BurnTensor as ByteLeaf>::signature(&lent)?;
/// assert_eq!(sig.to_string(), "f32[2,3]");
/// let bytes = <BurnTensor as ByteLeaf>::bytes(&lent)?;
/// let received = ByteTensor::new(sig.dtype(), sig.shape(), &bytes)?;
/// let back = <BurnTensor as ByteLeaf>::from_bytes(&received, Some(&lent))?;
/// assert_eq!(back.to_data().try_to_vec::<f32>().unwrap(), [1.0; 6]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl ByteLeaf for BurnTensor {
    fn fixed_dtype() -> Option<DType> {
        None
    }

    fn signature(leaf: &&BurnTensor) -> Result<Signature, Error> {
        match leaf.dtype() {
            BurnDType::F32 | BurnDType::F64 | BurnDType::F16 | BurnDType::BF16 => {
                Ok(leaf.signature_without_device())
            }
            other => Err(Error::custom(format!(
                "a burn tensor of dtype {other:?} cannot be stored (supported: f32, f64, f16, bf16)"
            ))),
        }
    }

    /// The elements read from the device, little-endian in C order.
    fn bytes<'a>(leaf: &'a &BurnTensor) -> Result<Cow<'a, [u8]>, Error> {
        <Self as ByteLeaf>::signature(leaf)?;
        if cfg!(target_endian = "big") {
            return Err(Error::custom(
                "saving burn tensors needs a little-endian machine",
            ));
        }
        Ok(Cow::Owned(leaf.to_data().as_bytes().to_vec()))
    }

    /// A new tensor on the slot's device, in its place.
    fn write_bytes(slot: &mut BurnTensor, tensor: &ByteTensor<'_>) -> Result<(), Error> {
        let mine = slot.signature_without_device();
        if mine.dtype() != tensor.dtype() || mine.shape() != tensor.shape() {
            return Err(signature_error(&mine, &tensor.signature()));
        }
        *slot = Self::from_bytes(tensor, Some(&&*slot))?;
        Ok(())
    }

    fn from_bytes(tensor: &ByteTensor<'_>, like: Option<&&BurnTensor>) -> Result<Self, Error> {
        let dtype = match tensor.dtype() {
            DType::F32 => BurnDType::F32,
            DType::F64 => BurnDType::F64,
            DType::F16 => BurnDType::F16,
            DType::BF16 => BurnDType::BF16,
            _ => return Err(not_a_float(&tensor.signature())),
        };
        if cfg!(target_endian = "big") {
            return Err(Error::custom(
                "loading burn tensors needs a little-endian machine",
            ));
        }
        let n = tensor.shape().iter().product::<usize>();
        let data = TensorData::try_from_bytes_vec(tensor.data().to_vec(), [n], dtype)
            .map_err(|e| Error::custom(format!("{}: {e}", tensor.signature())))?;
        let flat = Tensor::<1>::from_data(data, (&device_like(like), dtype));
        BurnTensor::from_flat(flat, tensor.shape())
    }

    fn to_owned_leaf(leaf: &&BurnTensor) -> Self {
        (*leaf).clone()
    }
}
