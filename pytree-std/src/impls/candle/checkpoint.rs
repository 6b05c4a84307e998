//! Checkpoints (feature `safetensors`): `Tensor` and `Var` as
//! [`TensorLeaf`]s.

use std::borrow::Cow;

use candle_core::{DType as CandleDType, Device, Shape, Tensor, Var};
use pytree_core::{DType, Error, Leaf, Signature};

use super::candle_error;
use crate::checkpoint::leaf::read_elements;
use crate::checkpoint::{Element, TensorLeaf, TensorView};
use crate::std_namespace::Std;

/// The candle dtype stored as `d`, for the dtypes both candle and the
/// format name.
fn candle_dtype(d: DType) -> Option<CandleDType> {
    match d {
        DType::Other(_) => None,
        d => super::candle_dtype(d),
    }
}

/// The elements of `t` (C order) as little-endian bytes.
fn le_bytes<T: candle_core::WithDType>(
    t: &Tensor,
    put: impl Fn(T, &mut Vec<u8>),
) -> Result<Vec<u8>, Error> {
    let values = t
        .flatten_all()
        .and_then(|f| f.to_vec1::<T>())
        .map_err(candle_error)?;
    let mut out = Vec::with_capacity(values.len() * std::mem::size_of::<T>());
    for v in values {
        put(v, &mut out);
    }
    Ok(out)
}

/// A candle tensor is stored with its own dtype and shape (copied to
/// the CPU to be written); loaded onto the template's device, or the
/// CPU without a template. The dtypes are the nine that both candle
/// and the format name (`u8`, `u32`, `i16`, `i32`, `i64`, `bf16`,
/// `f16`, `f32`, `f64`); another is an error at the leaf's path.
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
    fn fixed_dtype() -> Option<DType> {
        None
    }
    fn tensor_signature(leaf: &&Tensor) -> Result<Signature, Error> {
        let dtype = <Tensor as Leaf<Std>>::signature(leaf)
            .map(|s| s.dtype())
            .unwrap_or(DType::Other("unknown"));
        if candle_dtype(dtype).is_none() {
            return Err(Error::custom(format!(
                "a candle tensor of dtype {} cannot be stored (supported: u8, u32, i16, i32, i64, bf16, f16, f32, f64)",
                leaf.dtype().as_str()
            )));
        }
        Ok(Signature::new(dtype, leaf.dims().to_vec()))
    }
    fn tensor_bytes<'a>(leaf: &'a &Tensor) -> Result<Cow<'a, [u8]>, Error> {
        let t: &Tensor = leaf;
        let bytes = match t.dtype() {
            CandleDType::U8 => le_bytes::<u8>(t, |v, o| o.push(v))?,
            CandleDType::U32 => le_bytes::<u32>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::I16 => le_bytes::<i16>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::I32 => le_bytes::<i32>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::I64 => le_bytes::<i64>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::BF16 => {
                le_bytes::<half::bf16>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?
            }
            CandleDType::F16 => {
                le_bytes::<half::f16>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?
            }
            CandleDType::F32 => le_bytes::<f32>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::F64 => le_bytes::<f64>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            other => {
                return Err(Error::custom(format!(
                    "a candle tensor of dtype {} cannot be stored",
                    other.as_str()
                )))
            }
        };
        Ok(Cow::Owned(bytes))
    }
    fn from_tensor(tensor: &TensorView<'_>, like: Option<&&Tensor>) -> Result<Self, Error> {
        let dtype = candle_dtype(tensor.dtype).ok_or_else(|| {
            Error::custom(format!(
                "tensor `{}` ({}): candle has no dtype {}",
                tensor.name,
                tensor.signature(),
                tensor.dtype
            ))
        })?;
        let device = like.map_or(Device::Cpu, |t| t.device().clone());
        if let Some(bytes) = tensor.data_in_memory() {
            if cfg!(target_endian = "big") {
                return Err(Error::custom(
                    "loading candle tensors needs a little-endian machine",
                ));
            }
            return Tensor::from_raw_buffer(bytes, dtype, tensor.shape, &device)
                .map_err(candle_error);
        }
        // From a file: read straight into the vector the tensor takes
        // over (on the CPU; copied from it to another device).
        fn typed<T: candle_core::WithDType + Element>(
            tensor: &TensorView<'_>,
            device: &Device,
        ) -> Result<Tensor, Error> {
            let values = read_elements::<T>(tensor)?;
            Tensor::from_vec(values, Shape::from_dims(tensor.shape), device).map_err(candle_error)
        }
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
                tensor.name,
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
    fn to_owned_leaf(leaf: &&Tensor) -> Self {
        (*leaf).clone()
    }
}

/// A candle variable is stored as its tensor. Loaded by type or
/// against a template it is a new variable (on the template's
/// device); loaded in place it is written with `Var::set`, so every
/// holder of the variable (a model built from it, a `VarMap`) sees the
/// loaded value.
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
    fn fixed_dtype() -> Option<DType> {
        None
    }
    fn tensor_signature(leaf: &&Var) -> Result<Signature, Error> {
        <Tensor as TensorLeaf>::tensor_signature(&leaf.as_tensor())
    }
    fn tensor_bytes<'a>(leaf: &'a &Var) -> Result<Cow<'a, [u8]>, Error> {
        <Tensor as TensorLeaf>::tensor_bytes(&leaf.as_tensor()).map(|b| Cow::Owned(b.into_owned()))
    }
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
    fn to_owned_leaf(leaf: &&Var) -> Self {
        (*leaf).clone()
    }
}
