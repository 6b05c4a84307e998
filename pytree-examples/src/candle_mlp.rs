//! The digits MLP of `train_candle` and `train_ddp_candle`: a derived
//! pytree of candle variables (`Linear { w: Var, b: Var }`), its forward
//! pass and cross-entropy as candle operations, so that its gradient comes
//! from candle's autograd (`pytree_optim::candle::value_and_grad`).
//!
//! ```
//! use pytree_examples::candle_mlp::{tensors, Mlp};
//! use pytree_examples::digits::Digits;
//! use pytree_std::candle_core::Device;
//! let (train, _) = Digits::bundled()?.split(0.2, 0);
//! let model = Mlp::new(&[64, 16, 10], 0, &Device::Cpu)?;
//! let (x, y) = tensors(&train.select(&[0, 1, 2]), &Device::Cpu)?;
//! let (loss, grads) = pytree_optim::candle::value_and_grad(&model, |m| m.loss(&x, &y))?;
//! assert!(loss.to_scalar::<f32>()? > 0.0 && grads.layers.len() == 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use pytree_std::candle_core::{DType, Device, Result as CResult, Tensor, Var, D};
use pytree_std::PyTree;

use crate::digits::{Digits, Rng};

/// A dense layer: `x w + b`.
#[derive(PyTree, Clone, Debug)]
pub struct Linear {
    /// `inputs x outputs`.
    pub w: Var,
    /// `outputs`.
    pub b: Var,
}

/// ReLU between the layers, softmax cross-entropy after the last.
#[derive(PyTree, Clone, Debug)]
pub struct Mlp {
    /// The layers, input first.
    pub layers: Vec<Linear>,
}

impl Mlp {
    /// He-initialized weights (from `seed`), zero biases.
    pub fn new(sizes: &[usize], seed: u64, device: &Device) -> CResult<Mlp> {
        let mut rng = Rng::new(seed);
        let layers = sizes
            .windows(2)
            .map(|io| {
                let scale = (2.0 / io[0] as f64).sqrt();
                let w: Vec<f32> = (0..io[0] * io[1])
                    .map(|_| (rng.normal() * scale) as f32)
                    .collect();
                Ok(Linear {
                    w: Var::from_vec(w, (io[0], io[1]), device)?,
                    b: Var::zeros(io[1], DType::F32, device)?,
                })
            })
            .collect::<CResult<_>>()?;
        Ok(Mlp { layers })
    }

    /// The logits of a batch of images (`n x 64`).
    pub fn forward(&self, x: &Tensor) -> CResult<Tensor> {
        let mut h = x.clone();
        for (i, layer) in self.layers.iter().enumerate() {
            h = h.matmul(&layer.w)?.broadcast_add(&layer.b)?;
            if i + 1 < self.layers.len() {
                h = h.relu()?;
            }
        }
        Ok(h)
    }

    /// The mean softmax cross-entropy of the batch.
    pub fn loss(&self, x: &Tensor, labels: &Tensor) -> CResult<Tensor> {
        let logits = self.forward(x)?;
        let max = logits.max_keepdim(D::Minus1)?;
        let shifted = logits.broadcast_sub(&max)?;
        let log_sum = shifted.exp()?.sum_keepdim(D::Minus1)?.log()?;
        let log_p = shifted.broadcast_sub(&log_sum)?;
        log_p.gather(&labels.unsqueeze(1)?, 1)?.neg()?.mean_all()
    }

    /// The predicted class of each image.
    pub fn predict(&self, x: &Tensor) -> CResult<Vec<u32>> {
        self.forward(x)?.argmax(D::Minus1)?.to_vec1::<u32>()
    }
}

/// A batch as tensors: images `n x 64`, labels `n` (`u32`).
pub fn tensors(d: &Digits, device: &Device) -> CResult<(Tensor, Tensor)> {
    let images = d.images.as_standard_layout();
    let x = Tensor::from_slice(
        images.as_slice().expect("standard layout"),
        (d.len(), 64),
        device,
    )?;
    let labels: Vec<u32> = d.labels.iter().map(|&l| l as u32).collect();
    Ok((x, Tensor::from_vec(labels, d.len(), device)?))
}

/// The fraction of `x`'s images whose class the model predicts right.
pub fn accuracy(model: &Mlp, x: &Tensor, labels: &Tensor) -> CResult<f64> {
    let predicted = model.predict(x)?;
    let labels = labels.to_vec1::<u32>()?;
    let right = predicted
        .iter()
        .zip(&labels)
        .filter(|(p, l)| p == l)
        .count();
    Ok(right as f64 / labels.len() as f64)
}
