//! What the training examples share (each includes it with `mod common;`
//! and uses its part): the command line, the README's accuracy promise and
//! the lines printed about it, the progress bar, the checkpoint's line,
//! the shuffled batches of every epoch, and for the data-parallel
//! examples a rank's share of each batch and the optimizer step across
//! the ranks.

// Each example uses a part of this module.
#![allow(dead_code)]

use std::error::Error;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use pytree_dist::{Dist, Zero1};
use pytree_examples::digits::Rng;
use pytree_optim::{FloatLeaf, GradientTransformation};
use pytree_std::elements::summary;
use pytree_std::{checkpoint, ByteLeaf, Flatten, PyTree, Std};

/// What the README promises: the test accuracy reached in 30 epochs.
pub const TARGET_ACCURACY: f64 = 0.95;
/// The (global) batch size.
pub const BATCH: usize = 32;

/// The command line: `--epochs N` (default 30), `--out DIR` (default
/// `target/<example>` in the workspace) and, for the data-parallel
/// examples, `--zero1` (the optimizer state split across the ranks).
pub struct Options {
    pub epochs: usize,
    pub out: PathBuf,
    pub zero1: bool,
}

impl Options {
    /// The options of the command line of `example`, which takes
    /// `--zero1` where `takes_zero1`.
    pub fn parse(example: &str, takes_zero1: bool) -> Result<Options, Box<dyn Error>> {
        let mut options = Options {
            epochs: 30,
            out: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target")
                .join(example),
            zero1: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--epochs" => options.epochs = args.next().ok_or("--epochs N")?.parse()?,
                "--out" => options.out = PathBuf::from(args.next().ok_or("--out DIR")?),
                "--zero1" if takes_zero1 => options.zero1 = true,
                _ => {
                    let usage = if takes_zero1 {
                        "--epochs N, --out DIR or --zero1"
                    } else {
                        "--epochs N or --out DIR"
                    };
                    return Err(format!("unknown argument {arg:?}; use {usage}").into());
                }
            }
        }
        Ok(options)
    }

    /// The output folder, created if need be, as an absolute path.
    pub fn out_dir(&self) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(&self.out)?;
        self.out.canonicalize()
    }
}

/// A progress bar over the steps of `epochs` epochs of `per_epoch` steps
/// each, its message set to the latest accuracy, and the accuracy after
/// each epoch.
pub struct Progress {
    bar: ProgressBar,
    per_epoch: usize,
    accuracies: Vec<f64>,
}

impl Progress {
    /// The bar over `epochs` epochs of `per_epoch` steps each.
    pub fn new(epochs: usize, per_epoch: usize) -> Result<Progress, Box<dyn Error>> {
        let bar = ProgressBar::new((epochs * per_epoch) as u64).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} steps {elapsed_precise} {msg}")?,
        );
        Ok(Progress {
            bar,
            per_epoch,
            accuracies: Vec::with_capacity(epochs),
        })
    }

    /// One step done.
    pub fn step(&self) {
        self.bar.inc(1);
    }

    /// An epoch done, its losses summing to `loss`: its [`epoch_line`]
    /// (with the mean loss) printed above the bar, its accuracy the
    /// bar's message.
    pub fn epoch_done(&mut self, epoch: usize, loss: f64, accuracy: f64) {
        let line = epoch_line(epoch, loss / self.per_epoch as f64, accuracy);
        self.accuracies.push(accuracy);
        self.bar.set_message(format!("{:.2}%", accuracy * 100.0));
        self.bar.suspend(|| println!("{line}"));
    }

    /// The training done: the bar cleared, the [`final_line`] of the
    /// last epoch's accuracy printed and returned.
    pub fn finish(&self) -> f64 {
        self.bar.finish_and_clear();
        let accuracy = self.accuracies.last().copied().unwrap_or(0.0);
        println!("\n{}", final_line(accuracy));
        accuracy
    }

    /// The accuracy after each epoch so far.
    pub fn accuracies(&self) -> &[f64] {
        &self.accuracies
    }
}

/// An epoch's line: its mean loss and the test accuracy after it.
pub fn epoch_line(epoch: usize, mean_loss: f64, accuracy: f64) -> String {
    format!(
        "epoch {epoch:>2}: loss {mean_loss:.4}, test accuracy {:.2}%",
        accuracy * 100.0
    )
}

/// The final accuracy beside the README's promise.
pub fn final_line(accuracy: f64) -> String {
    format!(
        "final test accuracy: {:.2}% (the README states >= {:.0}%)",
        accuracy * 100.0,
        TARGET_ACCURACY * 100.0
    )
}

/// An error where the accuracy misses the README's promise.
pub fn check_target(accuracy: f64) -> Result<(), Box<dyn Error>> {
    if accuracy < TARGET_ACCURACY {
        return Err(format!(
            "test accuracy {:.2}% is below {:.0}%",
            accuracy * 100.0,
            TARGET_ACCURACY * 100.0
        )
        .into());
    }
    Ok(())
}

/// Saves `tree` to `path` with the epoch count in its metadata, and
/// prints the file's [`checkpoint_line`].
pub fn save_checkpoint<T>(path: &Path, epochs: usize, tree: &T) -> Result<(), Box<dyn Error>>
where
    T: pytree_std::PyTree,
    T::Leaf: checkpoint::TensorLeaf,
{
    checkpoint::Save::new()
        .metadata("epochs", epochs.to_string())
        .save(path, tree)?;
    println!("\n{}", checkpoint_line(path)?);
    Ok(())
}

/// A checkpoint file's line: its path, size and tensor names.
pub fn checkpoint_line(path: &Path) -> Result<String, Box<dyn Error>> {
    let file = checkpoint::Load::new().open(path)?;
    let names: Vec<&str> = file.names().collect();
    Ok(format!(
        "checkpoint: {} ({} bytes), tensors {names:?}",
        path.display(),
        std::fs::metadata(path)?.len()
    ))
}

/// An error where there are more ranks than images in a batch.
pub fn check_ranks(ranks: usize) -> Result<(), Box<dyn Error>> {
    if ranks > BATCH {
        return Err(format!("{ranks} ranks for batches of {BATCH}: at most {BATCH}").into());
    }
    Ok(())
}

/// Rank `rank`'s share of a batch's `rows`: rows `[rank * n / ranks,
/// (rank + 1) * n / ranks)`. Weighted by `share.len() * ranks / n` (1 for
/// equal shares), the mean over ranks of the shares' mean gradients is the
/// whole batch's.
pub fn share(rows: &[usize], rank: usize, ranks: usize) -> &[usize] {
    let n = rows.len();
    &rows[rank * n / ranks..(rank + 1) * n / ranks]
}

/// The training rows in batches of [`BATCH`], shuffled afresh each epoch
/// (the same seed in every example, so every rank draws the same order).
pub struct Batches {
    rng: Rng,
    order: Vec<usize>,
}

impl Batches {
    /// The batches of `rows` training rows.
    pub fn new(rows: usize) -> Batches {
        Batches {
            rng: Rng::new(7),
            order: (0..rows).collect(),
        }
    }

    /// How many batches an epoch has.
    pub fn per_epoch(&self) -> usize {
        self.order.len().div_ceil(BATCH)
    }

    /// The next epoch's batches: the rows shuffled, then cut in turn.
    pub fn epoch(&mut self) -> std::slice::Chunks<'_, usize> {
        self.rng.shuffle(&mut self.order);
        self.order.chunks(BATCH)
    }
}

/// The optimizer state of a data-parallel example: the whole of it on
/// every rank (`--zero1` off), or split across the ranks (ZeRO-1).
pub enum DdpState<'d, G, P>
where
    G: GradientTransformation<P>,
    P: PyTree,
{
    Replicated(G::State),
    Sharded(Box<Zero1<'d, G, P>>),
}

impl<'d, G, P> DdpState<'d, G, P>
where
    G: GradientTransformation<P> + Clone,
    G::State: PyTree,
    <G::State as Flatten<Std>>::Leaf: ByteLeaf,
    P: PyTree,
    P::Leaf: FloatLeaf + ByteLeaf,
{
    /// `optimizer`'s state for `params`, sharded where `zero1`.
    pub fn new(
        dist: &'d Dist,
        optimizer: &G,
        params: &P,
        zero1: bool,
    ) -> Result<Self, Box<dyn Error>> {
        Ok(if zero1 {
            DdpState::Sharded(Box::new(Zero1::new(dist, optimizer.clone(), params)?))
        } else {
            DdpState::Replicated(optimizer.init(params)?)
        })
    }

    /// How the state is held, for the first line of an example.
    pub fn describe(&self) -> &'static str {
        match self {
            DdpState::Replicated(_) => "replicated",
            DdpState::Sharded(_) => "sharded (ZeRO-1)",
        }
    }

    /// One step on every rank from this rank's `grads` and `loss` (of its
    /// share, weighted by its size): the loss becomes the mean over the
    /// ranks; replicated, the gradients are averaged (all-reduced) and
    /// every rank steps the whole model; sharded, ZeRO-1 reduce-scatters
    /// them, steps this rank's shard and all-gathers the parameters. Then
    /// every rank must hold the same parameters.
    pub fn step(
        &mut self,
        dist: &Dist,
        optimizer: &G,
        params: &mut P,
        grads: &mut P,
        loss: &mut f32,
    ) -> Result<(), Box<dyn Error>> {
        dist.all_reduce_mean(loss)?;
        match self {
            DdpState::Replicated(state) => {
                dist.all_reduce_mean(grads)?;
                optimizer.step(params, grads, state)?;
            }
            DdpState::Sharded(zero) => zero.step(params, grads)?,
        }
        dist.check_replicated(params)?;
        Ok(())
    }

    /// The ZeRO-1 state, where sharded.
    pub fn sharded(&self) -> Option<&Zero1<'d, G, P>> {
        match self {
            DdpState::Replicated(_) => None,
            DdpState::Sharded(zero) => Some(zero.as_ref()),
        }
    }
}

/// Rank 0's single-process run beside a data-parallel one (`reference`,
/// `None` on the other ranks) one step on the whole batch, its loss and
/// gradient from `loss_and_grads`: that loss, for [`Drift::step`].
pub fn reference_step<G, P>(
    optimizer: &G,
    reference: &mut Option<(P, G::State)>,
    loss_and_grads: impl FnOnce(&P) -> Result<(f32, P), Box<dyn Error>>,
) -> Result<Option<f32>, Box<dyn Error>>
where
    G: GradientTransformation<P>,
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    let Some((params, state)) = reference.as_mut() else {
        return Ok(None);
    };
    let (loss, mut grads) = loss_and_grads(params)?;
    optimizer.step(params, &mut grads, state)?;
    Ok(Some(loss))
}

/// The end of a data-parallel run: where the state is sharded, the line
/// about ZeRO-1's split ([`zero1_line`], Adam's first moment picked out
/// of the state by `mu`); the final accuracy's line; then the checkpoint
/// of `params` written by every rank ([`save_on_ranks`], whose folder,
/// index file and file count it returns).
pub fn finish<G, P>(
    dist: &Dist,
    state: &DdpState<'_, G, P>,
    mu: impl FnOnce(&G::State) -> &P,
    params: &P,
    accuracy: f64,
    out: &Path,
    name: &str,
) -> Result<(PathBuf, PathBuf, usize), Box<dyn Error>>
where
    G: GradientTransformation<P> + Clone,
    G::State: PyTree,
    <G::State as Flatten<Std>>::Leaf: ByteLeaf,
    P: PyTree,
    P::Leaf: FloatLeaf + ByteLeaf + checkpoint::TensorLeaf,
{
    let say = say(dist.rank());
    if let Some(zero) = state.sharded() {
        say(format!("ZeRO-1: {}", zero1_line(mu(zero.state()), params)));
    }
    say(final_line(accuracy));
    save_on_ranks(dist, out, name, params)
}

/// What a data-parallel example prints: the lines only rank 0 prints.
pub fn say(rank: usize) -> impl Fn(String) {
    move |line| {
        if rank == 0 {
            println!("{line}");
        }
    }
}

/// The losses of a data-parallel run beside those of rank 0's
/// single-process run on the same global batches: the largest difference
/// of a step's loss, and of an epoch's mean loss, which must stay within
/// a tolerance.
pub struct Drift {
    tolerance: f64,
    steps: usize,
    worst_step: f32,
    worst_epoch: f64,
    epoch: (f64, f64),
}

impl Drift {
    /// No step yet; an epoch's mean loss may differ by `tolerance`.
    pub fn new(tolerance: f64) -> Drift {
        Drift {
            tolerance,
            steps: 0,
            worst_step: 0.0,
            worst_epoch: 0.0,
            epoch: (0.0, 0.0),
        }
    }

    /// A step's loss (the mean over the ranks) and, on rank 0, the
    /// single-process run's.
    pub fn step(&mut self, loss: f32, reference: Option<f32>) {
        self.steps += 1;
        self.epoch.0 += f64::from(loss);
        if let Some(r) = reference {
            self.worst_step = self.worst_step.max((r - loss).abs());
            self.epoch.1 += f64::from(r);
        }
    }

    /// The epoch `epoch` of `steps` steps done (on `ranks` ranks): its
    /// mean loss; an error where the single-process run's (`compared`:
    /// rank 0) is more than the tolerance away.
    pub fn epoch_done(
        &mut self,
        epoch: usize,
        ranks: usize,
        steps: usize,
        compared: bool,
    ) -> Result<f64, Box<dyn Error>> {
        let (loss, reference) = std::mem::take(&mut self.epoch);
        if compared {
            let diff = (loss - reference).abs() / steps as f64;
            if diff > self.tolerance {
                return Err(format!(
                    "epoch {epoch}: the mean loss on {ranks} ranks is {diff:.2e} from the single-process run's"
                )
                .into());
            }
            self.worst_epoch = self.worst_epoch.max(diff);
        }
        Ok(loss / steps as f64)
    }

    /// The line on the whole run (rank 0's).
    pub fn line(&self) -> String {
        format!(
            "every rank held identical parameters after each of {} steps; each epoch's mean loss within {:.2e} of the single-process run's (tolerance {:.0e}), each step's within {:.2e}",
            self.steps, self.worst_epoch, self.tolerance, self.worst_step
        )
    }
}

/// The line of a checkpoint written by the ranks (`files` files in `dir`)
/// and reloaded in one process, printed; an error where the reloaded
/// model predicts otherwise (`same` false).
pub fn reloaded(dir: &Path, files: usize, same: bool) -> Result<(), Box<dyn Error>> {
    println!(
        "checkpoint: {} ({files} files); reloaded in one process, test predictions identical: {same}",
        dir.display()
    );
    if !same {
        return Err("the reloaded model predicts differently".into());
    }
    Ok(())
}

/// The line about ZeRO-1's split: the bytes of Adam's first moment `mu`
/// that rank 0 holds, beside those of the whole model `params`.
pub fn zero1_line<T: Flatten<Std>>(mu: &T, params: &T) -> String {
    let bytes = |t: &T| summary(t).num_bytes().unwrap_or(0);
    format!(
        "Adam's first moment on rank 0: {} of {} bytes",
        bytes(mu),
        bytes(params)
    )
}

/// A checkpoint of `tree` written by every rank (each its share of the
/// tensors, rank 0 the index last) into `out/<name>-<ranks>-ranks`: the
/// folder, the index file to load it from in one process and how many
/// files were written.
pub fn save_on_ranks<T>(
    dist: &Dist,
    out: &Path,
    name: &str,
    tree: &T,
) -> Result<(PathBuf, PathBuf, usize), Box<dyn Error>>
where
    T: Flatten<Std>,
    T::Leaf: checkpoint::TensorLeaf,
{
    let dir = out.join(format!("{name}-{}-ranks", dist.size()));
    let files = pytree_dist::checkpoint::save(dist, &dir, tree)?;
    let index = dir.join(pytree_dist::checkpoint::INDEX);
    Ok((dir, index, files))
}
