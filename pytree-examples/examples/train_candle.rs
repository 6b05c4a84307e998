//! The candle example: the digits MLP as candle variables, its gradient
//! from candle's autograd (no hand-written backward pass), trained by
//! pytree-optim. Run from the repository root:
//!
//! ```sh
//! cargo run --release --example train_candle
//! ```
//!
//! - Data: the UCI handwritten digits of `train` (`pytree-examples/data/`),
//!   the same 80/20 split.
//! - Model: `Mlp`, a derived pytree of `Linear { w: Var, b: Var }` layers
//!   (candle's trainable variables); the forward pass and the
//!   cross-entropy are candle operations that read the variables directly
//!   (`Var` derefs to `Tensor`).
//! - Loop: candle-nn's, `opt.backward_step(&loss)`: a
//!   `pytree_optim::candle::Optimizer` holds the model's variables and
//!   turns the loss's `backward()` into a gradient tree of the model's
//!   type, then steps `chain(clip_by_global_norm(1.0), adamw(3e-3, 1e-4))`
//!   (the same value as `train`'s). It updates each variable in place (on
//!   the CPU in one pass over its memory, on a GPU as tensor operations on
//!   the device), so the model stays a model of variables, step after step.
//! - Checkpoint: saved to a `.safetensors` file, loaded back by type and
//!   in place into a fresh model, both checked to predict exactly as the
//!   trained one.
//!
//! Options: `--epochs N` (default 30), `--out DIR` (default
//! `target/train_candle` in the workspace).

mod common;

use std::time::Instant;

use common::{Batches, Options, Progress};
use pytree_examples::candle_mlp::{accuracy, tensors, Mlp};
use pytree_examples::digits::Digits;
use pytree_optim::{adamw, candle, chain, clip_by_global_norm};
use pytree_std::candle_core::Device;
use pytree_std::checkpoint;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let options = Options::parse("train_candle", false)?;
    let (epochs, out) = (options.epochs, options.out_dir()?);
    // Any device works; this example runs where candle-core was built for
    // (the CPU without its `cuda` / `metal` features).
    let device = Device::Cpu;

    let (train, test) = Digits::bundled()?.split(0.2, 0);
    println!(
        "digits: {} training images, {} test images (8x8 pixels, 10 classes), device {:?}",
        train.len(),
        test.len(),
        device.location()
    );
    let (test_x, test_y) = tensors(&test, &device)?;

    let model = Mlp::new(&[64, 128, 10], 42, &device)?;
    println!("\n{}", pytree_std::structure(&model));
    println!("{}", pytree_std::elements::summary(&model));

    // The optimizer holds the model's variables (the same ones, not a
    // copy): each step updates them in place, and `model` sees it.
    let mut optimizer =
        candle::Optimizer::new(&model, chain(clip_by_global_norm(1.0), adamw(3e-3, 1e-4)))?;

    let mut batches = Batches::new(train.len());
    let mut progress = Progress::new(epochs, batches.per_epoch())?;
    for epoch in 1..=epochs {
        let mut epoch_loss = 0.0f64;
        for rows in batches.epoch() {
            let (x, y) = tensors(&train.select(rows), &device)?;
            let loss = model.loss(&x, &y)?;
            optimizer.backward_step(&loss)?;
            epoch_loss += f64::from(loss.to_scalar::<f32>()?);
            progress.step();
        }
        let acc = accuracy(&model, &test_x, &test_y)?;
        progress.epoch_done(epoch, epoch_loss, acc);
    }
    let acc = progress.finish();

    // Checkpoint: save; load by type (new variables) and in place (into
    // the variables of a fresh model); both predict as the trained model.
    let path = out.join("digits-mlp-candle.safetensors");
    common::save_checkpoint(&path, epochs, &model)?;
    let fresh = Mlp::new(&[64, 128, 10], 0, &device)?;
    let loaded: Mlp = checkpoint::Load::new().open(&path)?.load_like(&fresh)?.0;
    let mut in_place = fresh;
    checkpoint::Load::new()
        .open(&path)?
        .load_into(&mut in_place)?;
    let trained = model.predict(&test_x)?;
    let same_loaded = loaded.predict(&test_x)? == trained;
    let same_in_place = in_place.predict(&test_x)? == trained;
    println!(
        "reloaded: test predictions identical: by type {same_loaded}, in place {same_in_place}"
    );
    if !(same_loaded && same_in_place) {
        return Err("a reloaded model predicts differently from the trained one".into());
    }
    println!("done in {:.1} s", started.elapsed().as_secs_f64());
    common::check_target(acc)
}
