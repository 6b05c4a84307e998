//! Data-parallel training across processes: the digits classifier of
//! `train`, each rank computing the gradient of a different share of every
//! batch, the gradients averaged with pytree-dist (MPI). Run from the
//! repository root (Open MPI: `apt-get install libopenmpi-dev openmpi-bin
//! libclang-dev pkgconf`):
//!
//! ```sh
//! cargo build --release --example train_ddp --features mpi
//! mpirun -np 2 target/release/examples/train_ddp
//! ```
//!
//! - Start: every rank builds the model from its own seed, then takes
//!   rank 0's parameters (`Dist::broadcast`).
//! - Step: the global batch of 32 images is split into one share per
//!   rank; each rank's gradient of its share, weighted by its share's
//!   size, is averaged over the ranks (`Dist::all_reduce_mean`), which is
//!   the gradient of the whole batch; every rank then runs the same
//!   optimizer step, `chain(clip_by_global_norm(1.0), adamw(3e-3, 1e-4))`,
//!   or with `--zero1` the same optimizer with its state split across
//!   the ranks (`pytree_dist::Zero1`).
//! - Checks, every step: every rank holds the same parameters
//!   (`Dist::check_replicated`); rank 0 also runs the single-process
//!   training on the same global batches beside it, and the loss of every
//!   step must equal that run's within `LOSS_TOLERANCE`. At the end: the
//!   test accuracy is at least 95%, and a checkpoint written by all ranks
//!   (each its share of the tensors, rank 0 the index) is loaded back in
//!   one process and predicts exactly as the trained model.
//!
//! Options: `--epochs N` (default 30), `--out DIR` (default
//! `target/train_ddp`), `--zero1`.

mod common;

use std::process::ExitCode;
use std::time::Instant;

use common::{Batches, DdpState, Options, BATCH};
use pytree_dist::Dist;
use pytree_examples::digits::Digits;
use pytree_examples::mlp::{Activation, Mlp};
use pytree_optim::{adamw, chain, clip_by_global_norm, GradientTransformation};
use pytree_std::checkpoint;
use pytree_std::ndarray::Array2;

/// The largest difference allowed between a step's loss here and in the
/// single-process run on the same global batch: the gradients are summed
/// in another order (per share, then across ranks), so they differ in the
/// last bits of `f32`, and Adam carries that through the steps.
const LOSS_TOLERANCE: f32 = 1e-5;

fn main() -> ExitCode {
    pytree_dist::run(train)
}

fn train(dist: &Dist) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let (rank, ranks) = (dist.rank(), dist.size());
    let Options { epochs, out, zero1 } = Options::parse("train_ddp", true)?;
    common::check_ranks(ranks)?;
    let say = common::say(rank);
    let (train, test) = Digits::bundled()?.split(0.2, 0);

    // Every rank starts from rank 0's parameters.
    let mut model = Mlp::<f32>::new(
        &[64, 128, 10],
        Activation::Relu,
        "digits-mlp",
        42 + rank as u64,
    );
    dist.broadcast(&mut model, 0)?;
    dist.check_replicated(&model)?;
    let optimizer = chain(clip_by_global_norm(1.0), adamw(3e-3, 1e-4));
    // The state on every rank, or split across them (ZeRO-1).
    let mut state = DdpState::new(dist, &optimizer, &model, zero1)?;
    say(format!(
        "train_ddp: {ranks} ranks ({}), batches of {BATCH} split across them, {} training images, optimizer state {}",
        dist.backend().name(),
        train.len(),
        state.describe()
    ));
    // Rank 0 runs the single-process training beside it, for comparison.
    let mut reference = (rank == 0)
        .then(|| -> Result<_, pytree_std::Error> { Ok((model.clone(), optimizer.init(&model)?)) })
        .transpose()?;

    let mut batches = Batches::new(train.len());
    let count = batches.per_epoch();
    let (mut worst, mut steps) = (0.0f32, 0usize);
    let mut accuracy = 0.0;
    for epoch in 1..=epochs {
        let mut epoch_loss = 0.0f64;
        for rows in batches.epoch() {
            let n = rows.len();
            let share = common::share(rows, rank, ranks);
            let batch = train.select(share);
            let (loss, mut grads) = model.loss_and_grad(&batch.images, &batch.labels)?;
            // Weighted by the share's size, the mean over ranks is the
            // gradient of the whole batch (the weight is 1 for equal shares).
            let weight = (share.len() * ranks) as f32 / n as f32;
            if weight != 1.0 {
                pytree_std::for_each_mut(&mut grads, |mut g| g.mapv_inplace(|x| x * weight));
            }
            let mut loss = loss * weight;
            state.step(dist, &optimizer, &mut model, &mut grads, &mut loss)?;
            if let Some((ref_model, ref_state)) = reference.as_mut() {
                let whole = train.select(rows);
                let (ref_loss, mut ref_grads) =
                    ref_model.loss_and_grad(&whole.images, &whole.labels)?;
                optimizer.step(ref_model, &mut ref_grads, ref_state)?;
                worst = worst.max((ref_loss - loss).abs());
                if (ref_loss - loss).abs() > LOSS_TOLERANCE {
                    return Err(format!(
                        "step {steps}: loss {loss} on {ranks} ranks, {ref_loss} in one process (more than {LOSS_TOLERANCE} apart)"
                    )
                    .into());
                }
            }
            epoch_loss += f64::from(loss);
            steps += 1;
        }
        accuracy = model.accuracy(&test.images, &test.labels)?;
        say(common::epoch_line(
            epoch,
            epoch_loss / count as f64,
            accuracy,
        ));
    }
    if let Some((ref_model, _)) = &reference {
        let drift = model
            .layers
            .iter()
            .zip(&ref_model.layers)
            .map(|(a, b)| max_abs_diff(&a.w, &b.w))
            .fold(0.0f32, f32::max);
        say(format!(
            "\nevery rank held identical parameters after each of {steps} steps; the loss of every step was within {worst:.2e} of the single-process run (tolerance {LOSS_TOLERANCE:.0e}); largest weight difference at the end {drift:.2e}"
        ));
    }
    say(common::final_line(accuracy));

    // A checkpoint written by every rank: each its share of the tensors,
    // rank 0 the index last.
    let (dir, index, files) = common::save_on_ranks(dist, &out, "digits-mlp", &model)?;
    say(format!(
        "\ncheckpoint: {} ({files} files, written by {ranks} ranks)",
        dir.display()
    ));
    if let Some(zero) = state.sharded() {
        let state_dir = out.join(format!("digits-mlp-adamw-{ranks}-ranks"));
        zero.save_state(&state_dir)?;
        let line = common::zero1_line(&zero.state().1 .0.mu, &model);
        say(format!(
            "optimizer state (sharded): {}; {line}",
            state_dir.display()
        ));
    }
    if rank == 0 {
        let template = Mlp::<f32>::new(&[64, 128, 10], Activation::Relu, "digits-mlp", 0);
        let reloaded = checkpoint::Load::new()
            .open(&index)?
            .load_like(&template)?
            .0;
        let same =
            reloaded == model && reloaded.predict(&test.images)? == model.predict(&test.images)?;
        println!("reloaded in one process: parameters and test predictions identical: {same}");
        if !same {
            return Err("the reloaded model differs from the trained one".into());
        }
        println!("done in {:.1} s", started.elapsed().as_secs_f64());
    }
    common::check_target(accuracy)
}

/// The largest element-wise difference of two arrays.
fn max_abs_diff(a: &Array2<f32>, b: &Array2<f32>) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
