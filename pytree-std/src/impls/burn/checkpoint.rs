//! Checkpoints (feature `safetensors`): [`BurnTensor`] as a
//! [`TensorLeaf`], stored in its own dtype (`f32`, `f64`, `f16`, `bf16`)
//! and read back onto the template's device (burn's default device
//! without one).

use std::borrow::Cow;

use burn::tensor::{DType as BurnDType, Device, Tensor, TensorData};
use pytree_core::{DType, Error, Signature};

use super::BurnTensor;
use crate::checkpoint::leaf::read_elements;
use crate::checkpoint::{Element, TensorLeaf, TensorView};

/// The elements of `tensor` (little-endian, as stored) as a rank-1 burn
/// tensor on `device`.
fn flat_from_file<T>(tensor: &TensorView<'_>, device: &Device) -> Result<Tensor<1>, Error>
where
    T: Element + burn::tensor::Element,
{
    let values = read_elements::<T>(tensor)?;
    let n = values.len();
    let data = TensorData::new(values, [n]);
    let dtype = data.dtype();
    Ok(Tensor::<1>::from_data(data, (device, dtype)))
}

impl TensorLeaf for BurnTensor {
    fn fixed_dtype() -> Option<DType> {
        None
    }

    fn tensor_signature(leaf: &&BurnTensor) -> Result<Signature, Error> {
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
    fn tensor_bytes<'a>(leaf: &'a &BurnTensor) -> Result<Cow<'a, [u8]>, Error> {
        Self::tensor_signature(leaf)?;
        if cfg!(target_endian = "big") {
            return Err(Error::custom(
                "saving burn tensors needs a little-endian machine",
            ));
        }
        Ok(Cow::Owned(leaf.to_data().as_bytes().to_vec()))
    }

    fn from_tensor(tensor: &TensorView<'_>, like: Option<&&BurnTensor>) -> Result<Self, Error> {
        let device = like.map_or_else(Device::default, |t| t.device());
        let flat = match tensor.dtype() {
            DType::F32 => flat_from_file::<f32>(tensor, &device)?,
            DType::F64 => flat_from_file::<f64>(tensor, &device)?,
            DType::F16 => flat_from_file::<half::f16>(tensor, &device)?,
            DType::BF16 => flat_from_file::<half::bf16>(tensor, &device)?,
            other => {
                return Err(Error::custom(format!(
                    "tensor `{}` ({}): a burn leaf is a float tensor, not {other}",
                    tensor.name(),
                    tensor.signature()
                )))
            }
        };
        BurnTensor::from_flat(flat, tensor.shape())
    }

    fn copy_from_tensor(slot: &mut BurnTensor, tensor: &TensorView<'_>) -> Result<(), Error> {
        *slot = Self::from_tensor(tensor, Some(&&*slot))?;
        Ok(())
    }

    fn to_owned_leaf(leaf: &&BurnTensor) -> Self {
        (*leaf).clone()
    }
}
