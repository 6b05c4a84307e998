//! The parts of the main example, `cargo run --release --example train`
//! (`examples/train.rs`): the UCI handwritten digits shipped in `data/`
//! ([`digits`]), an MLP as a derived pytree with its forward and backward
//! passes written by hand ([`mlp`]), and the loss curve as an SVG image
//! ([`plot`]); the same MLP as candle variables for `train_candle` and
//! `train_ddp_candle` ([`candle_mlp`]). They live in a library so that the test suite checks them
//! (`tests/backward.rs`: the gradient against finite differences).
//!
//! ```
//! use pytree_examples::{digits::Digits, mlp::{Activation, Mlp}};
//! let (train, _test) = Digits::bundled()?.split(0.2, 0);
//! let model = Mlp::<f32>::new(&[64, 16, 10], Activation::Relu, "tiny", 0);
//! let (loss, grad) = model.loss_and_grad(&train.images, &train.labels)?;
//! assert!(loss > 0.0 && pytree_std::leaves(&grad).len() == 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "burn")]
pub mod burn_mlp;
pub mod candle_mlp;
pub mod digits;
pub mod mlp;
pub mod plot;
