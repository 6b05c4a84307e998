//! The main example: a real model on real data, the way users of pytree
//! work. Run from the repository root:
//!
//! ```sh
//! cargo run --release --example train
//! ```
//!
//! - Data: the UCI handwritten digits (1797 images of 8x8 pixels) shipped
//!   in `pytree-examples/data/`, split 80/20 into training and test sets.
//! - Model: `Mlp<f32>`, a derived pytree (`Vec<Linear>` of ndarray arrays,
//!   a static activation and name); its forward and backward passes are
//!   written by hand in `pytree-examples/src/mlp.rs`, so the gradient is a
//!   `Mlp<f32>` too.
//! - Optimizer: pytree-optim's `chain(clip_by_global_norm, adamw)`, written
//!   once over any pytree: it never sees the model's type.
//! - Checkpoint: saved with `pytree_std::checkpoint` to a `.safetensors`
//!   file (tensors named `layers.0.w`, ...), loaded back against a fresh
//!   model, and checked to predict exactly as the trained one does.
//! - Output: the parameter table, the loss and test accuracy per epoch
//!   (with a progress bar), the loss curve as an SVG image.
//!
//! Options: `--epochs N` (default 30), `--out DIR` (default
//! `target/train` in the workspace).

mod common;

use std::time::Instant;

use common::{Batches, Options, Progress};
use pytree_examples::digits::Digits;
use pytree_examples::mlp::{Activation, Mlp};
use pytree_examples::plot::loss_curve_svg;
use pytree_optim::{adamw, apply_updates, chain, clip_by_global_norm, GradientTransformation};
use pytree_std::checkpoint;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let options = Options::parse("train", false)?;
    let (epochs, out) = (options.epochs, options.out_dir()?);

    // The data: 1438 training and 359 test images, the same split every run.
    let (train, test) = Digits::bundled()?.split(0.2, 0);
    println!(
        "digits: {} training images, {} test images (8x8 pixels, 10 classes)",
        train.len(),
        test.len()
    );

    // The model, and its parameter table (printed once).
    let mut model = Mlp::<f32>::new(&[64, 128, 10], Activation::Relu, "digits-mlp", 42);
    println!("\n{}", pytree_std::structure(&model));
    println!("{}", pytree_std::elements::summary(&model));

    // The optimizer: clip the gradient's global norm, then AdamW.
    let optimizer = chain(clip_by_global_norm(1.0), adamw(3e-3, 1e-4));
    let mut state = optimizer.init(&model)?;

    let mut batches = Batches::new(train.len());
    let steps_per_epoch = batches.per_epoch();
    let mut progress = Progress::new(epochs, steps_per_epoch)?;
    let mut step_losses: Vec<f32> = Vec::with_capacity(epochs * steps_per_epoch);
    for epoch in 1..=epochs {
        let mut epoch_loss = 0.0f64;
        for rows in batches.epoch() {
            let batch = train.select(rows);
            let (loss, mut grads) = model.loss_and_grad(&batch.images, &batch.labels)?;
            optimizer.update(&mut grads, &mut state, &model)?; // gradients -> updates, in place
            apply_updates(&mut model, &grads)?;
            step_losses.push(loss);
            epoch_loss += f64::from(loss);
            progress.step();
        }
        let accuracy = model.accuracy(&test.images, &test.labels)?;
        progress.epoch_done(epoch, epoch_loss, accuracy);
    }
    let accuracy = progress.finish();

    // Checkpoint: save, load against a fresh model of the same shape, and
    // check that the reloaded model predicts exactly as the trained one.
    let path = out.join("digits-mlp.safetensors");
    common::save_checkpoint(&path, epochs, &model)?;
    let template = Mlp::<f32>::new(&[64, 128, 10], Activation::Relu, "digits-mlp", 0);
    let reloaded: Mlp<f32> = checkpoint::Load::new().open(&path)?.load_like(&template)?.0;
    let same_params = reloaded == model;
    let same_predictions = reloaded.predict(&test.images)? == model.predict(&test.images)?;
    println!("reloaded: parameters identical: {same_params}, test predictions identical: {same_predictions}");
    if !(same_params && same_predictions) {
        return Err("the reloaded model differs from the trained one".into());
    }

    // The loss curve.
    let svg_path = out.join("loss.svg");
    std::fs::write(
        &svg_path,
        loss_curve_svg(&step_losses, epochs, progress.accuracies()),
    )?;
    println!("loss curve: {}", svg_path.display());
    println!("done in {:.1} s", started.elapsed().as_secs_f64());
    common::check_target(accuracy)
}
