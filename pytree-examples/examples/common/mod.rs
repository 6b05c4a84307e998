//! What the training examples share (each includes it with `mod common;`
//! and uses its part): the command line, the README's accuracy promise and
//! the lines printed about it, the progress bar, the checkpoint's line,
//! and for the data-parallel examples a rank's share of each batch.

// Each example uses a part of this module.
#![allow(dead_code)]

use std::error::Error;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use pytree_std::checkpoint;

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

/// A progress bar over `steps` steps, its message set to the accuracy.
pub fn progress_bar(steps: usize) -> Result<ProgressBar, Box<dyn Error>> {
    Ok(
        ProgressBar::new(steps as u64).with_style(ProgressStyle::with_template(
            "{bar:40} {pos}/{len} steps {elapsed_precise} {msg}",
        )?),
    )
}

/// An epoch's line: its mean loss and the test accuracy after it.
pub fn epoch_line(epoch: usize, mean_loss: f64, accuracy: f64) -> String {
    format!(
        "epoch {epoch:>2}: loss {mean_loss:.4}, test accuracy {:.2}%",
        accuracy * 100.0
    )
}

/// An epoch done on the bar: its line printed above the bar, its
/// accuracy the bar's message.
pub fn epoch_done(bar: &ProgressBar, epoch: usize, mean_loss: f64, accuracy: f64) {
    let line = epoch_line(epoch, mean_loss, accuracy);
    bar.set_message(format!("{:.2}%", accuracy * 100.0));
    bar.suspend(|| println!("{line}"));
}

/// The training done: the bar cleared, the [`final_line`] of the last
/// epoch's accuracy printed and returned.
pub fn training_done(bar: &ProgressBar, accuracies: &[f64]) -> f64 {
    bar.finish_and_clear();
    let accuracy = accuracies.last().copied().unwrap_or(0.0);
    println!("\n{}", final_line(accuracy));
    accuracy
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
