//! Checkpoints (feature `safetensors`): `Tensor` and `Var` as
//! [`TensorLeaf`]s, a file read straight into the vector a new tensor
//! takes over; their bytes are `bytes.rs`'s.

use candle_core::{DType as CandleDType, Device, Shape, Tensor, Var};
use pytree_core::Error;

use super::bytes::{candle_dtype, device_like};
use super::candle_error;
use crate::checkpoint::leaf::read_elements;
use crate::checkpoint::{TensorLeaf, TensorView};
use crate::leaf_bytes::{ByteLeaf, ByteTensor, Element};

/// A candle tensor is loaded onto the template's device, or the CPU
/// without a template; from a file its elements are read straight into
/// the vector the tensor takes over (on the CPU; copied from it to
/// another device).
///
/// ```
/// use pytree_std::candle_core::{Device, Tensor};
/// use pytree_std::checkpoint::{self, Checkpoint, Load};
/// let t = (Tensor::new(&[[1.0f32, 2.0]], &Device::Cpu)?,);
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&t)?)?;
/// let back: (Tensor,) = file.load_like(&t)?.0;
/// assert_eq!(back.0.to_vec2::<f32>()?, [[1.0, 2.0]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl TensorLeaf for Tensor {
    fn from_tensor(tensor: &TensorView<'_>, like: Option<&&Tensor>) -> Result<Self, Error> {
        let dtype = candle_dtype(tensor.dtype()).ok_or_else(|| {
            Error::custom(format!(
                "tensor `{}` ({}): candle has no dtype {}",
                tensor.name(),
                tensor.signature(),
                tensor.dtype()
            ))
        })?;
        if let Some(bytes) = tensor.data_in_memory() {
            let bytes = ByteTensor::new(tensor.dtype(), tensor.shape(), bytes)?;
            return Self::from_bytes(&bytes, like).map_err(|e| tensor.named(e));
        }
        fn typed<T: candle_core::WithDType + Element>(
            tensor: &TensorView<'_>,
            device: &Device,
        ) -> Result<Tensor, Error> {
            let values = read_elements::<T>(tensor)?;
            Tensor::from_vec(values, Shape::from_dims(tensor.shape()), device).map_err(candle_error)
        }
        let device = device_like(like);
        match dtype {
            CandleDType::U8 => typed::<u8>(tensor, &device),
            CandleDType::U32 => typed::<u32>(tensor, &device),
            CandleDType::I16 => typed::<i16>(tensor, &device),
            CandleDType::I32 => typed::<i32>(tensor, &device),
            CandleDType::I64 => typed::<i64>(tensor, &device),
            CandleDType::BF16 => typed::<half::bf16>(tensor, &device),
            CandleDType::F16 => typed::<half::f16>(tensor, &device),
            CandleDType::F32 => typed::<f32>(tensor, &device),
            CandleDType::F64 => typed::<f64>(tensor, &device),
            other => Err(Error::custom(format!(
                "tensor `{}` ({}): candle dtype {} is not read from files",
                tensor.name(),
                tensor.signature(),
                other.as_str()
            ))),
        }
    }
    fn copy_from_tensor(slot: &mut Tensor, tensor: &TensorView<'_>) -> Result<(), Error> {
        let new = Self::from_tensor(tensor, Some(&&*slot))?;
        *slot = new;
        Ok(())
    }
}

/// A candle variable is loaded as its tensor. Loaded by type or against
/// a template it is a new variable (on the template's device); loaded in
/// place it is written with `Var::set`, so every holder of the variable
/// (a model built from it, a `VarMap`) sees the loaded value.
///
/// ```
/// use pytree_std::candle_core::{Device, Var};
/// use pytree_std::checkpoint::{self, Checkpoint, Load};
/// let saved = (Var::new(&[1.0f32, 2.0], &Device::Cpu)?,);
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&saved)?)?;
/// let mut model = (Var::zeros(2, saved.0.dtype(), &Device::Cpu)?,);
/// let held = model.0.as_tensor().clone();
/// file.load_into(&mut model)?;
/// assert_eq!(held.to_vec1::<f32>()?, [1.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl TensorLeaf for Var {
    fn from_tensor(tensor: &TensorView<'_>, like: Option<&&Var>) -> Result<Self, Error> {
        let t = <Tensor as TensorLeaf>::from_tensor(tensor, like.map(|v| v.as_tensor()).as_ref())?;
        Var::from_tensor(&t).map_err(candle_error)
    }
    fn copy_from_tensor(slot: &mut Var, tensor: &TensorView<'_>) -> Result<(), Error> {
        let new = <Tensor as TensorLeaf>::from_tensor(tensor, Some(&slot.as_tensor()))?;
        slot.set(&new).map_err(candle_error)
    }
    /// Written in place (`Var::set`): the same variable, which every
    /// holder sees loaded.
    fn reload(leaf: &&Var, tensor: &TensorView<'_>) -> Result<Self, Error> {
        let mut same = (*leaf).clone();
        Self::copy_from_tensor(&mut same, tensor)?;
        Ok(same)
    }
}
