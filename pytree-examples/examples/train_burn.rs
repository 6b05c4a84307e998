//! The burn example: the digits classifier of `train` as a
//! `#[derive(Module)]` burn model on burn-flex (burn's CPU backend),
//! its gradients from burn's autodiff, trained by pytree-optim. Run from
//! the repository root:
//!
//! ```sh
//! cargo run --release -p pytree-examples --features burn --example train_burn
//! ```
//!
//! - Data: the UCI handwritten digits of `train` (`pytree-examples/data/`),
//!   the same 80/20 split.
//! - Model: `burn_mlp::Mlp`, two burn-nn `Linear` layers, written as any
//!   burn user writes a model: pytree-std sees it as a tree of its float
//!   parameters (`BurnModule`), named as burn-store names them.
//! - Loop: burn's (`loss.backward()`, `GradientsParams::from_grads`), with
//!   the step of a whole-tree transformation that burn's per-parameter
//!   optimizers cannot express: `chain(clip_by_global_norm(1.0),
//!   adamw(3e-3, 1e-4))`, the same value as `train`'s, clipping by the
//!   global norm of all gradients (torch's `clip_grad_norm_`).
//! - Checkpoint: the model (and the optimizer's state) saved to
//!   `.safetensors` files, loaded back into a fresh model in place and
//!   against a template, both checked to predict exactly as the trained
//!   one; the state's moments read back bit for bit.
//!
//! Options: `--epochs N` (default 30), `--out DIR` (default
//! `target/train_burn` in the workspace).

mod common;

use std::time::Instant;

use burn::optim::GradientsParams;
use burn::tensor::Device;
use common::{Batches, Options, Progress};
use pytree_examples::burn_mlp::{accuracy, tensors, Mlp};
use pytree_examples::digits::Digits;
use pytree_optim::{adamw, chain, clip_by_global_norm};
use pytree_std::{checkpoint, BurnModule};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let options = Options::parse("train_burn", false)?;
    let (epochs, out) = (options.epochs, options.out_dir()?);
    // burn's default device (burn-flex here), with autodiff.
    let device = Device::default().autodiff();
    device.seed(42);

    let (train, test) = Digits::bundled()?.split(0.2, 0);
    println!(
        "digits: {} training images, {} test images (8x8 pixels, 10 classes), device {device:?}",
        train.len(),
        test.len(),
    );
    let (test_x, _) = tensors(&test, &device);

    let mut model = Mlp::new(128, &device);
    {
        let tree = BurnModule::new(model.clone());
        println!("\n{}", pytree_std::structure(&tree));
        println!("{}", pytree_std::elements::summary(&tree));
    }

    let tx = chain(clip_by_global_norm(1.0), adamw(3e-3, 1e-4));
    let mut state = pytree_optim::burn::init(&tx, &model)?;

    let mut batches = Batches::new(train.len());
    let mut progress = Progress::new(epochs, batches.per_epoch())?;
    for epoch in 1..=epochs {
        let mut epoch_loss = 0.0f64;
        for rows in batches.epoch() {
            let (x, y) = tensors(&train.select(rows), &device);
            let loss = model.loss(x, y);
            epoch_loss += loss.clone().into_scalar::<f64>();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = pytree_optim::burn::step(&tx, model, &grads, &mut state)?;
            progress.step();
        }
        let acc = accuracy(&model, test_x.clone(), &test.labels);
        progress.epoch_done(epoch, epoch_loss, acc);
    }
    let acc = progress.finish();

    // Checkpoint: the model and the optimizer's state; loaded into a
    // fresh model in place and against a template, each predicting as
    // the trained one; the state reloaded equal to the one saved.
    let path = out.join("digits-mlp-burn.safetensors");
    let trained = BurnModule::new(model.clone());
    common::save_checkpoint(&path, epochs, &trained)?;
    let state_path = out.join("digits-mlp-burn-adamw.safetensors");
    checkpoint::Save::new().save(&state_path, &state)?;

    let mut in_place = BurnModule::new(Mlp::new(128, &device));
    checkpoint::Load::new()
        .open(&path)?
        .load_into(&mut in_place)?;
    let template = BurnModule::new(Mlp::new(128, &device));
    let (like, _) = checkpoint::Load::new().open(&path)?.load_like(&template)?;
    let predicted = model.predict(test_x.clone());
    let same_in_place = in_place.into_module()?.predict(test_x.clone()) == predicted;
    let same_like = like.into_module()?.predict(test_x) == predicted;
    // The state's leaves back into a state at the same step (its count is
    // a static field: restoring another count from the file rebuilds the
    // state from the file's TreeDef, which a burn module cannot be built
    // from; the guide's "burn").
    let mut resumed = state.clone();
    pytree_std::for_each_mut(&mut resumed, |m| -> Result<(), pytree_std::Error> {
        *m = m.map_flat(|x| x.zeros_like())?;
        Ok(())
    })?;
    checkpoint::Load::new()
        .open(&state_path)?
        .load_into(&mut resumed)?;
    let same_state =
        pytree_std::elements::tree_equal(&resumed, &state, pytree_std::elements::Tolerance::EXACT);
    println!(
        "reloaded: test predictions identical: in place {same_in_place}, by template {same_like}; \
         optimizer state identical {same_state}"
    );
    if !(same_in_place && same_like && same_state) {
        return Err("a reloaded model or state differs from the trained one".into());
    }
    println!("done in {:.1} s", started.elapsed().as_secs_f64());
    common::check_target(acc)
}
