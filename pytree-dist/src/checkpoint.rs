//! Checkpoints written by every rank: each rank writes its part of the
//! tensors to a shard of its own (`model-0000R-of-0000N.safetensors`, R
//! from 1), and rank 0 writes the index `model.safetensors.index.json`
//! last, the form pytree-std's checkpoints (and transformers) read, so the
//! directory loads in one process with `pytree_std::checkpoint::load` /
//! `Load::open` on the index, and at any number of ranks.
//!
//! A save is complete when its index is: rank 0 first removes the index
//! of an earlier save into the same directory, every rank then writes its
//! shard (each file under a temporary name, then renamed), the ranks
//! report to each other, and only when every shard is written does rank 0
//! write the index (also renamed into place). A save that fails or is
//! killed on any rank leaves no index, so it never loads as complete.

use std::collections::BTreeMap;
use std::path::Path;

use pytree_std::checkpoint::{self as ck, Save, TensorLeaf};
use pytree_std::{Error, Flatten, Std};

use crate::agree::Op;
use crate::dist::Dist;
use crate::message::{reports, Report};
use crate::owners::{by_leaf, Owner};
use crate::plan::signatures;

/// The index's file name, `model.safetensors.index.json`.
///
/// ```
/// assert_eq!(pytree_dist::checkpoint::INDEX, "model.safetensors.index.json");
/// ```
pub const INDEX: &str = ck::INDEX_FILE;

/// The shard of rank `rank` of `ranks`: `model-00001-of-00002.safetensors`
/// for rank 0 of 2, as transformers names shards.
///
/// ```
/// assert_eq!(pytree_dist::checkpoint::shard_name(1, 2), "model-00002-of-00002.safetensors");
/// ```
pub fn shard_name(rank: usize, ranks: usize) -> String {
    ck::shard_name(rank + 1, ranks)
}

/// Saves `tree`, the same on every rank (the parameters of data-parallel
/// training), into the directory `dir` from all ranks at once: the
/// leaves are split among the ranks by size (the largest first, each to
/// the rank with the fewest bytes so far), each rank writes its shard,
/// rank 0 the index last (see the [module](self)). Returns the number of
/// files written by all ranks. Every rank must call it.
///
/// ```
/// use pytree_std::ndarray::{array, Array1};
/// let dist = pytree_dist::Dist::local();
/// let dir = std::env::temp_dir().join(format!("pytree-dist-save-{}", std::process::id()));
/// let params = (array![1.0f32, 2.0], array![3.0f32]);
/// assert_eq!(pytree_dist::checkpoint::save(&dist, &dir, &params)?, 2);
/// let back: (Array1<f32>, Array1<f32>) = pytree_std::checkpoint::load(dir.join(pytree_dist::checkpoint::INDEX))?;
/// assert_eq!(back, params);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn save<T>(dist: &Dist, dir: impl AsRef<Path>, tree: &T) -> Result<usize, Error>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    dist.agree_on(Op::CheckpointSave, tree)?;
    let signatures = signatures(tree)?;
    let owners: Vec<usize> = by_leaf(&signatures, &vec![true; signatures.len()], dist.size())
        .into_iter()
        .map(|o| match o {
            Owner::Rank(r) => r,
            Owner::Every { .. } | Owner::Split => 0,
        })
        .collect();
    let rank = dist.rank();
    write(dist, dir.as_ref(), |path| {
        Save::new().save_part(path, tree, |i| owners[i] == rank)
    })
}

/// The protocol of [`save`] with each rank's part written by `part`: the
/// index of an earlier save into `dir` removed by rank 0, then on every
/// rank `part(path of this rank's shard)`, which writes the shard (for
/// example with pytree-std's `Save::save_part`, a part of a tree) and
/// returns each tensor written with its size in bytes (an empty list:
/// no file); the reports gathered; the index written by rank 0, and a
/// last gather, so that no rank returns before the index exists. Returns
/// the number of files written. A failure of `part` on any rank is an
/// error on every rank, and no index is written. Every rank must call it.
///
/// ```
/// use pytree_std::checkpoint::{Checkpoint, Load, Save};
/// let dist = pytree_dist::Dist::local();
/// let dir = std::env::temp_dir().join(format!("pytree-dist-with-{}", std::process::id()));
/// let mine = std::collections::BTreeMap::from([("rank0.x".to_string(), vec![1.0f32, 2.0])]);
/// pytree_dist::checkpoint::save_with(&dist, &dir, |path| Save::new().save_part(path, &mine, |_| true))?;
/// assert_eq!(Load::new().open(dir.join(pytree_dist::checkpoint::INDEX))?.len(), 2);
/// let err = pytree_dist::checkpoint::save_with(&dist, &dir, |_| Err(pytree_std::Error::custom("disk full"))).unwrap_err();
/// assert!(err.to_string().contains("rank 0: at <root>: disk full"));
/// assert!(Load::new().open(dir.join(pytree_dist::checkpoint::INDEX)).is_err()); // no index
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn save_with(
    dist: &Dist,
    dir: impl AsRef<Path>,
    part: impl FnOnce(&Path) -> Result<Vec<(String, usize)>, Error>,
) -> Result<usize, Error> {
    write(dist, dir.as_ref(), part)
}

/// See [`save_with`].
pub(crate) fn write(
    dist: &Dist,
    dir: &Path,
    part: impl FnOnce(&Path) -> Result<Vec<(String, usize)>, Error>,
) -> Result<usize, Error> {
    let (rank, ranks) = (dist.rank(), dist.size());
    let index = dir.join(INDEX);
    let mut failure = None;
    if rank == 0 {
        if let Err(e) = std::fs::create_dir_all(dir) {
            failure = Some(format!("cannot create {}: {e}", dir.display()));
        }
        match std::fs::remove_file(&index) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                failure = Some(format!(
                    "cannot remove the old index {}: {e}",
                    index.display()
                ))
            }
            _ => {}
        }
    }
    // Nobody writes a shard before the old index is gone.
    let backend = dist.backend();
    reports(
        backend,
        &Report::of(failure.map_or(Ok(()), Err)),
        "removing the old index",
    )?;
    let file = shard_name(rank, ranks);
    let mine = match part(&dir.join(&file)) {
        Ok(tensors) => Report {
            error: None,
            file: Some(file),
            tensors,
        },
        Err(e) => Report::of(Err(e.to_string())),
    };
    let all = reports(backend, &mine, "writing the shards")?;
    let mut weight_map = BTreeMap::new();
    let mut total = 0usize;
    let mut files = 0;
    for report in all {
        if report.tensors.is_empty() {
            continue;
        }
        files += 1;
        let file = report.file.unwrap_or_default();
        for (name, bytes) in report.tensors {
            weight_map.insert(name, file.clone());
            total += bytes;
        }
    }
    let mut failure = None;
    if rank == 0 {
        if let Err(e) = ck::write_index(dir, &weight_map, total) {
            failure = Some(e.to_string());
        }
    }
    reports(
        backend,
        &Report::of(failure.map_or(Ok(()), Err)),
        "writing the index",
    )?;
    Ok(files + 1)
}
