//! Checkpoints (feature `safetensors`): [`BurnTensor`] as a
//! [`TensorLeaf`], a file read straight into the vector of a new tensor
//! (on the template's device; burn's default device without one); its
//! bytes are `bytes.rs`'s; and the layout rule of burn's `Linear` against
//! PyTorch's ([`Load::transpose_linear`], [`Save::transpose_linear`]).

use burn::tensor::{Device, Tensor, TensorData};
use pytree_core::{DType, Error};

use super::bytes::{device_like, not_a_float};
use super::{BurnModule, BurnTensor};
use crate::checkpoint::leaf::read_elements;
use crate::checkpoint::{Load, Save, TensorLeaf, TensorView};
use crate::leaf_bytes::Element;

impl Load {
    /// Reads the weights of `like`'s burn-nn `Linear` layers
    /// ([`BurnModule::linear_weights`]) transposed: burn keeps a `Linear`
    /// weight as `[d_in, d_out]`, PyTorch's `nn.Linear` (and so every
    /// Hugging Face file) as `[d_out, d_in]`. The rule of burn-store's
    /// `PyTorchToBurnAdapter` (every 2-d `weight` of a `Linear`, whatever
    /// its shape, a square one too), by key path: it is
    /// [`Load::transpose`] of those names, so strict as that is (a tensor
    /// of another shape than the transpose, the template's own shape
    /// included, is an error naming the leaf's path, expected and found).
    /// The names are the tree's, after the renames; give `like`, the
    /// template the file loads into. Other names differ too (burn's
    /// `LayerNorm` has `gamma` and `beta` where PyTorch has `weight` and
    /// `bias`): map them with [`Load::renames`].
    ///
    /// ```
    /// use burn::module::Module;
    /// use burn::nn::{Linear, LinearConfig};
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_std::checkpoint::{Load, Save};
    /// use pytree_std::{BurnModule, BurnTensor};
    /// use std::collections::BTreeMap;
    ///
    /// #[derive(Module, Debug)]
    /// struct Net { fc: Linear }
    ///
    /// // PyTorch's `nn.Linear(2, 3)`: weight [3, 2].
    /// let d = Device::default();
    /// let torch = BTreeMap::from([
    ///     ("fc.weight", BurnTensor::new(Tensor::<2>::from_data([[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]], &d))),
    ///     ("fc.bias", BurnTensor::new(Tensor::<1>::from_data([0.5f32, 0.5, 0.5], &d))),
    /// ]);
    /// let bytes = Save::new().to_bytes(&torch)?;
    /// let like = BurnModule::new(Net { fc: LinearConfig::new(2, 3).init(&d) });
    /// assert_eq!(like.linear_weights(), ["fc.weight"]);
    /// let err = Load::new().from_bytes(bytes.clone())?.load_like(&like).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["fc"]["weight"]: tensor `fc.weight`: expected f32[2,3], found f32[3,2]"#);
    /// let file = Load::new().transpose_linear(&like).from_bytes(bytes)?;
    /// let net: Net = file.load_like(&like)?.0.into_module()?;
    /// let y = net.fc.forward(Tensor::<2>::from_data([[1.0f32, 1.0]], &d)); // PyTorch's W x + b
    /// assert_eq!(y.into_data().try_to_vec::<f32>().unwrap(), [3.5, 7.5, 11.5]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn transpose_linear<M: burn::module::Module>(self, like: &BurnModule<M>) -> Self {
        self.transpose(like.linear_weights())
    }
}

impl Save {
    /// Writes the weights of `module`'s burn-nn `Linear` layers
    /// transposed, in PyTorch's layout `[d_out, d_in]`
    /// ([`Save::transpose`] of [`BurnModule::linear_weights`]): the inverse
    /// of [`Load::transpose_linear`]. The names are the tree's, before the
    /// renames.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::tensor::Device;
    /// use pytree_std::checkpoint::{Load, Save};
    /// use pytree_std::BurnModule;
    /// let tree = BurnModule::new(LinearConfig::new(2, 3).init(&Device::default()));
    /// let bytes = Save::new().transpose_linear(&tree).to_bytes(&tree)?;
    /// let file = Load::new().transpose_linear(&tree).from_bytes(bytes)?;
    /// assert_eq!(file.tensor("weight").unwrap().shape(), [3, 2]);
    /// let back = file.load_like(&tree)?.0;
    /// assert!(pytree_std::elements::tree_equal(&back, &tree, pytree_std::elements::Tolerance::EXACT));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn transpose_linear<M: burn::module::Module>(self, module: &BurnModule<M>) -> Self {
        self.transpose(module.linear_weights())
    }
}

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

/// Read from a file straight into a new tensor's vector.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use pytree_std::checkpoint::{self, Checkpoint, Load};
/// use pytree_std::BurnTensor;
/// let t = vec![BurnTensor::new(Tensor::<2>::ones([2, 3], &Device::default()))];
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&t)?)?;
/// let back: Vec<BurnTensor> = file.load_like(&t)?.0;
/// assert_eq!(back[0].shape(), [2, 3]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl TensorLeaf for BurnTensor {
    fn from_tensor(tensor: &TensorView<'_>, like: Option<&&BurnTensor>) -> Result<Self, Error> {
        let device = device_like(like);
        let flat = match tensor.dtype() {
            DType::F32 => flat_from_file::<f32>(tensor, &device)?,
            DType::F64 => flat_from_file::<f64>(tensor, &device)?,
            DType::F16 => flat_from_file::<half::f16>(tensor, &device)?,
            DType::BF16 => flat_from_file::<half::bf16>(tensor, &device)?,
            _ => return Err(tensor.named(not_a_float(&tensor.signature()))),
        };
        BurnTensor::from_flat(flat, tensor.shape())
    }

    fn copy_from_tensor(slot: &mut BurnTensor, tensor: &TensorView<'_>) -> Result<(), Error> {
        *slot = Self::from_tensor(tensor, Some(&&*slot))?;
        Ok(())
    }
}
