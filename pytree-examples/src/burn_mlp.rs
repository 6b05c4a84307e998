//! The digits MLP as a burn model (feature `burn`): a `#[derive(Module)]`
//! struct of burn-nn `Linear` layers, exactly as a burn user writes it; no
//! pytree code in the model. pytree-std sees it as a tree of its float
//! parameters through `BurnModule`, and pytree-optim steps it from burn's
//! autodiff gradients (`examples/train_burn.rs`).

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::digits::{Digits, CLASSES, PIXELS};

/// `64 -> hidden -> 10`, ReLU between.
///
/// ```
/// use burn::tensor::Device;
/// let model = pytree_examples::burn_mlp::Mlp::new(128, &Device::default());
/// let tree = pytree_std::BurnModule::new(model);
/// assert_eq!(pytree_std::structure(&tree).to_string(),
///     r#"{"fc1": {"weight": *, "bias": *}, "fc2": {"weight": *, "bias": *}}"#);
/// ```
#[derive(Module, Debug)]
pub struct Mlp {
    /// `64 x hidden` (burn's `Linear` weight is `[d_in, d_out]`).
    pub fc1: Linear,
    /// `hidden x 10`.
    pub fc2: Linear,
    /// The activation.
    pub relu: Relu,
}

impl Mlp {
    /// A new model on `device`, with burn's default initialization (burn's
    /// seed: `burn::tensor::Device::seed`).
    pub fn new(hidden: usize, device: &Device) -> Mlp {
        Mlp {
            fc1: LinearConfig::new(PIXELS, hidden).init(device),
            fc2: LinearConfig::new(hidden, CLASSES).init(device),
            relu: Relu::new(),
        }
    }

    /// The logits of `x` (`n x 64`): `n x 10`.
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.fc2.forward(self.relu.forward(self.fc1.forward(x)))
    }

    /// The mean cross-entropy of `x`'s logits against `labels`.
    pub fn loss(&self, x: Tensor<2>, labels: Tensor<1, Int>) -> Tensor<1> {
        let logits = self.forward(x);
        CrossEntropyLossConfig::new()
            .init(&logits.device())
            .forward(logits, labels)
    }

    /// The predicted class of each image.
    pub fn predict(&self, x: Tensor<2>) -> Vec<i64> {
        self.forward(x)
            .argmax(1)
            .flatten::<1>(0, 1)
            .into_data()
            .convert::<i64>()
            .try_to_vec::<i64>()
            .unwrap_or_default()
    }
}

/// A batch as tensors on `device`: images `n x 64`, labels `n`.
///
/// ```
/// use burn::tensor::Device;
/// let d = pytree_examples::digits::Digits::bundled()?;
/// let (x, y) = pytree_examples::burn_mlp::tensors(&d.select(&[0, 1, 2]), &Device::default());
/// assert_eq!((x.dims(), y.dims()), ([3, 64], [3]));
/// # Ok::<(), pytree_examples::digits::DataError>(())
/// ```
pub fn tensors(d: &Digits, device: &Device) -> (Tensor<2>, Tensor<1, Int>) {
    let pixels: Vec<f32> = d.images.iter().copied().collect();
    let x = Tensor::<2>::from_data(TensorData::new(pixels, [d.len(), PIXELS]), device);
    let labels: Vec<i64> = d.labels.iter().map(|&l| l as i64).collect();
    let y = Tensor::<1, Int>::from_data(TensorData::new(labels, [d.len()]), device);
    (x, y)
}

/// The fraction of `x`'s images whose class the model predicts right.
pub fn accuracy(model: &Mlp, x: Tensor<2>, labels: &[usize]) -> f64 {
    let predicted = model.predict(x);
    let right = predicted
        .iter()
        .zip(labels)
        .filter(|(p, l)| **p == **l as i64)
        .count();
    right as f64 / labels.len().max(1) as f64
}
