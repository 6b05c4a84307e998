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

use pytree_optim::{FloatLeaf, GradientTransformation};
use pytree_std::checkpoint::{self as ck, Load, Save, TensorLeaf};
use pytree_std::paths::KeyStr;
use pytree_std::{Error, Flatten, PyTree, Signature, Std, Unflatten};
use serde_json::{json, Value};

use crate::dist::Dist;
use crate::zero::{partition, Owner, Zero1};

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
    format!("model-{:05}-of-{ranks:05}.safetensors", rank + 1)
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
    dist.agreed_plan("checkpoint save".into(), tree, true, |_| false, |_| 0)?;
    let signatures = signatures(tree)?;
    let owners: Vec<usize> = partition(&signatures, &vec![true; signatures.len()], dist.size())
        .into_iter()
        .map(|o| match o {
            Owner::Rank(r) => r,
            Owner::Every { .. } => 0,
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
fn write(
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
    report(dist, &json!({"error": failure}), "removing the old index")?;
    let file = shard_name(rank, ranks);
    let written = part(&dir.join(&file));
    let mine = match &written {
        Ok(names) => json!({"file": file, "names": names}),
        Err(e) => json!({"error": e.to_string()}),
    };
    let all = report(dist, &mine, "writing the shards")?;
    let mut weight_map = BTreeMap::new();
    let mut total = 0usize;
    let mut files = 0;
    for r in &all {
        let names = r["names"].as_array().cloned().unwrap_or_default();
        if !names.is_empty() {
            files += 1;
        }
        for n in names {
            let (Some(name), Some(bytes)) = (n[0].as_str(), n[1].as_u64()) else {
                continue;
            };
            weight_map.insert(
                name.to_string(),
                r["file"].as_str().unwrap_or("").to_string(),
            );
            total += bytes as usize;
        }
    }
    let mut failure = None;
    if rank == 0 {
        if let Err(e) = ck::write_index(dir, &weight_map, total) {
            failure = Some(e.to_string());
        }
    }
    report(dist, &json!({"error": failure}), "writing the index")?;
    Ok(files + 1)
}

/// All-gathers each rank's report (JSON); an error on every rank if any
/// rank's report has an `error`.
fn report(dist: &Dist, mine: &Value, what: &str) -> Result<Vec<Value>, Error> {
    let all: Vec<Value> = dist
        .backend()
        .all_gather(mine.to_string().as_bytes())?
        .iter()
        .map(|b| serde_json::from_slice(b).unwrap_or(Value::Null))
        .collect();
    let failures: Vec<String> = all
        .iter()
        .enumerate()
        .filter_map(|(r, v)| v["error"].as_str().map(|e| format!("rank {r}: {e}")))
        .collect();
    if failures.is_empty() {
        Ok(all)
    } else {
        Err(Error::custom(format!(
            "checkpoint save failed while {what}, no index written: {}",
            failures.join("; ")
        )))
    }
}

fn signatures<T>(tree: &T) -> Result<Vec<Signature>, Error>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    pytree_std::leaves(tree)
        .iter()
        .map(<T::Leaf as TensorLeaf>::tensor_signature)
        .collect()
}

impl<G, P> Zero1<'_, G, P>
where
    G: GradientTransformation<P>,
    G::State: PyTree,
    <G::State as Flatten<Std>>::Leaf: TensorLeaf,
    P: PyTree,
    P::Leaf: FloatLeaf + TensorLeaf,
{
    /// Saves the optimizer state of all ranks into `dir`, as one
    /// checkpoint of the *unsharded* state: each rank writes the state
    /// leaves of its own parameters (a leaf every rank holds, of a scalar
    /// parameter, is written by rank 0), rank 0 the index last (see the
    /// [module](self)). It loads in one process as the state of the
    /// unsharded optimizer (`pytree_std::checkpoint::load`), and at any
    /// number of ranks with [`load_state`](Zero1::load_state). Returns the
    /// number of files written. Every rank must call it.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_optim::{adam, AdamState, GradientTransformation};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let mut params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let mut zero = Zero1::new(&dist, adam(0.1), &params)?;
    /// zero.step(&mut params, &mut vec![array![0.5f32, 0.5], array![1.0f32]])?;
    /// let dir = std::env::temp_dir().join(format!("pytree-dist-zero-{}", std::process::id()));
    /// zero.save_state(&dir)?;
    /// let whole: AdamState<Vec<Array1<f32>>> = pytree_std::checkpoint::load(dir.join(pytree_dist::checkpoint::INDEX))?;
    /// assert_eq!((whole.0.count, &whole.0.mu), (1, &zero.state().0.mu));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn save_state(&self, dir: impl AsRef<Path>) -> Result<usize, Error> {
        let dist = self.dist();
        let state = self.state();
        // The shards' leaves differ in shape; their structure must not.
        dist.agree_structure("zero1 save_state", &pytree_std::structure(state))?;
        // Each state leaf is written by the lowest rank holding the most
        // elements of it: its owner, or rank 0 for a leaf all ranks hold.
        let counts: Vec<u64> = signatures(state)?
            .iter()
            .map(|s| s.num_elements() as u64)
            .collect();
        let bytes: Vec<u8> = counts.iter().flat_map(|c| c.to_le_bytes()).collect();
        let all = dist.backend().all_gather(&bytes)?;
        let count = |r: usize, j: usize| -> u64 {
            all[r]
                .get(j * 8..j * 8 + 8)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        };
        let rank = dist.rank();
        let writer = |j: usize| {
            (0..all.len())
                .max_by_key(|&r| (count(r, j), std::cmp::Reverse(r)))
                .unwrap_or(0)
        };
        write(dist, dir.as_ref(), |path| {
            Save::new().save_part(path, state, |j| writer(j) == rank)
        })
    }

    /// Loads the state saved by [`save_state`](Zero1::save_state) (at any
    /// number of ranks, or the state of an unsharded optimizer saved by
    /// `pytree_std::checkpoint`) from its index or file `path`: each rank
    /// reads the leaves of its own shard, and the static data (the step
    /// count). Dtypes and shapes are checked; on an error nothing has
    /// changed.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_optim::{adam, GradientTransformation};
    /// use pytree_std::ndarray::array;
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0]];
    /// let opt = adam(0.1);
    /// let mut state = opt.init(&params)?;
    /// opt.step(&mut params.clone(), &mut vec![array![1.0f32, 1.0]], &mut state)?;
    /// let path = std::env::temp_dir().join(format!("pytree-dist-load-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::save(&path, &state)?;
    /// let mut zero = Zero1::new(&dist, opt, &params)?;
    /// zero.load_state(&path)?;
    /// assert_eq!((zero.state().0.count, &zero.state().0.nu), (1, &state.0.nu));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_state(&mut self, path: impl AsRef<Path>) -> Result<(), Error>
    where
        G::State: Unflatten<Std>,
    {
        let file = Load::new().open(path)?;
        let state = self.state_mut();
        let def = file.treedef()?;
        // Check every leaf this rank reads before writing any.
        let mut wanted = Vec::new();
        let mut problems = Vec::new();
        pytree_std::paths::leaves_with_path(&*state)
            .into_iter()
            .for_each(|(ref path, leaf)| {
                let Ok(sig) =
                    <<G::State as Flatten<Std>>::Leaf as TensorLeaf>::tensor_signature(&leaf)
                else {
                    problems.push(format!("at {path}: no signature"));
                    wanted.push(None);
                    return;
                };
                if sig.num_elements() == 0 && !sig.shape().is_empty() {
                    wanted.push(None); // another rank's leaf
                    return;
                }
                let name = path.keystr(KeyStr::SIMPLE);
                match file.tensor(&name) {
                    Some(t) if t.signature() == sig => wanted.push(Some(name)),
                    Some(t) => {
                        problems.push(format!(
                            "at {path}: tensor `{name}`: expected {sig}, found {}",
                            t.signature()
                        ));
                        wanted.push(None);
                    }
                    None => {
                        problems.push(format!("at {path}: tensor `{name}`: not in the checkpoint"));
                        wanted.push(None);
                    }
                }
            });
        if !problems.is_empty() {
            return Err(Error::custom(format!(
                "zero1 load_state: {}",
                problems.join("; ")
            )));
        }
        for (slot, name) in pytree_std::leaves_mut(&mut *state).into_iter().zip(&wanted) {
            if let Some(name) = name {
                let tensor = file
                    .tensor(name)
                    .ok_or_else(|| Error::custom(format!("tensor `{name}` vanished")))?;
                <<G::State as Flatten<Std>>::Leaf as TensorLeaf>::copy_from_tensor(slot, &tensor)?;
            }
        }
        if let Some(def) = def.filter(|d| *d != pytree_std::structure(&*state)) {
            let leaves: Vec<<G::State as Flatten<Std>>::Leaf> = pytree_std::leaves(&*state)
                .iter()
                .map(<<G::State as Flatten<Std>>::Leaf as TensorLeaf>::to_owned_leaf)
                .collect();
            *state = pytree_std::unflatten(&def, leaves)?;
        }
        Ok(())
    }
}
