//! [`Zero1::save_state`] and [`Zero1::load_state`]: the sharded state
//! saved as one checkpoint of the *unsharded* state (every rank writing a
//! shard, [`crate::checkpoint`]'s protocol), and loaded at any number of
//! ranks, split either way.
//!
//! Split by element, a state leaf that follows a parameter element by
//! element (Adam's `mu` of `layers.0.w`: its key path ends with the
//! parameter's, and its shape is that of this rank's shard of it) is
//! saved whole: each rank's elements are gathered to the leaf's writer,
//! which puts them where the [layout](super::layout) says. Every other
//! state leaf (a step count, the state of a scalar parameter) is the same
//! on every rank and written by rank 0.

use std::path::Path;

use pytree_optim::{FloatLeaf, GradientTransformation};
use pytree_std::checkpoint::{Load, Save, TensorLeaf, TensorView};
use pytree_std::paths::KeyStr;
use pytree_std::{ByteLeaf, Error, PyTree, Signature, Std, Unflatten};

use super::follows::{Follows, StateLeaf};
use super::{by_leaf, Owner, Zero1};
use crate::agree::Op;
use crate::checkpoint::write;
use crate::plan::signatures;

impl<G, P> Zero1<'_, G, P>
where
    G: GradientTransformation<P>,
    G::State: PyTree,
    StateLeaf<G, P>: TensorLeaf,
    P: PyTree,
    P::Leaf: FloatLeaf + TensorLeaf,
{
    /// Saves the optimizer state of all ranks into `dir`, as one
    /// checkpoint of the *unsharded* state: each state leaf is written
    /// whole by one rank (split by element, its elements gathered from
    /// every rank first; by whole leaves, its owner's); a leaf every rank
    /// holds (a step count, the state of a scalar parameter) by rank 0,
    /// and rank 0 writes the index last (see [`crate::checkpoint`]). It
    /// loads in one process as the state of the unsharded optimizer
    /// (`pytree_std::checkpoint::load`), and at any number of ranks with
    /// [`load_state`](Zero1::load_state). Returns the number of files
    /// written. Every rank must call it.
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
        let rank = dist.rank();
        // The shards' leaves differ in shape; their structure must not.
        dist.agree_structure(Op::ZeroSaveState, &pytree_std::structure(state))?;
        let Some(split) = &self.split else {
            return self.save_by_leaf(dir.as_ref());
        };
        let follows = self.state_leaves()?;
        let sigs = signatures(state)?;
        // The unsharded state's signatures; the split leaves among the
        // ranks by size, the others to rank 0.
        let whole: Vec<Signature> = sigs
            .iter()
            .zip(&follows)
            .map(|(s, f)| match f {
                Follows::Param(i) => {
                    Signature::new(s.dtype(), self.signatures[*i].shape().to_vec())
                }
                Follows::Whole => s.clone(),
            })
            .collect();
        let gathered: Vec<bool> = follows.iter().map(|f| *f != Follows::Whole).collect();
        let writers: Vec<usize> = by_leaf(&whole, &gathered, dist.size())
            .into_iter()
            .map(|o| match o {
                Owner::Rank(r) => r,
                _ => 0,
            })
            .collect();
        let all_pieces: Vec<_> = (0..dist.size()).map(|r| split.layout.pieces(r)).collect();
        let def = pytree_std::structure(state);
        let mut leaves = Vec::with_capacity(sigs.len());
        for (j, leaf) in pytree_std::leaves(state).iter().enumerate() {
            let Follows::Param(i) = follows[j] else {
                leaves.push(<StateLeaf<G, P> as ByteLeaf>::to_owned_leaf(leaf));
                continue;
            };
            // Every rank's elements of it to every rank (the writer keeps
            // them): one all-gather per split state leaf.
            let mine = <StateLeaf<G, P> as ByteLeaf>::bytes(leaf)?;
            let all = dist.backend().all_gather(&mine)?;
            if writers[j] != rank {
                leaves.push(<StateLeaf<G, P> as ByteLeaf>::to_owned_leaf(leaf));
                continue;
            }
            let size = whole[j].dtype().size_in_bytes().unwrap_or(0);
            let mut bytes = vec![0u8; whole[j].num_elements() * size];
            for (r, theirs) in all.iter().enumerate() {
                let mut at = 0;
                for p in all_pieces[r].iter().filter(|p| p.leaf == i) {
                    let (from, to) = (p.start * size, (p.start + p.len) * size);
                    let src = theirs.get(at..at + to - from).ok_or_else(|| {
                        Error::custom(format!(
                            "zero1 save_state: rank {r} sent {} bytes of state leaf {j}, fewer than its part",
                            theirs.len()
                        ))
                    })?;
                    bytes[from..to].copy_from_slice(src);
                    at += to - from;
                }
            }
            let view = TensorView::new("", whole[j].dtype(), whole[j].shape(), &bytes)?;
            leaves.push(<StateLeaf<G, P> as TensorLeaf>::from_tensor(
                &view,
                Some(leaf),
            )?);
        }
        let full: G::State =
            pytree_std::generic::basic::unflatten_like::<Std, G::State>(&def, state, leaves)?;
        write(dist, dir.as_ref(), |path| {
            Save::new().save_part(path, &full, |j| writers[j] == rank)
        })
    }

    /// [`save_state`](Zero1::save_state) by whole leaves: each state leaf
    /// written by the lowest rank holding the most elements of it.
    fn save_by_leaf(&self, dir: &Path) -> Result<usize, Error> {
        let dist = self.dist();
        let state = self.state();
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
        write(dist, dir, |path| {
            Save::new().save_part(path, state, |j| writer(j) == rank)
        })
    }

    /// Loads the state saved by [`save_state`](Zero1::save_state) (at any
    /// number of ranks, split either way, or the state of an unsharded
    /// optimizer saved by `pytree_std::checkpoint`) from its index or file
    /// `path`: each rank reads its own elements of each state leaf, and
    /// the static data (the step count). Dtypes and shapes are checked; on
    /// an error nothing has changed.
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
        let follows = self.state_leaves()?;
        let rank = self.dist().rank();
        let pieces = self.split.as_ref().map(|s| s.layout.pieces(rank));
        let state = &self.state;
        let def = file.treedef()?;
        // Check every leaf this rank reads before writing any: by leaf,
        // its tensor's name and the parameter it follows.
        let mut wanted: Vec<Option<(String, Follows)>> = Vec::new();
        let mut problems = Vec::new();
        for (j, (path, leaf)) in pytree_std::paths::leaves_with_path(state)
            .into_iter()
            .enumerate()
        {
            let Ok(sig) = <StateLeaf<G, P> as ByteLeaf>::signature(&leaf) else {
                problems.push(format!("at {path}: no signature"));
                wanted.push(None);
                continue;
            };
            if sig.num_elements() == 0 && !sig.shape().is_empty() {
                wanted.push(None); // another rank's leaf (or elements)
                continue;
            }
            let expected = match follows[j] {
                Follows::Param(i) => {
                    Signature::new(sig.dtype(), self.signatures[i].shape().to_vec())
                }
                Follows::Whole => sig,
            };
            let name = path.keystr(KeyStr::SIMPLE);
            match file.tensor(&name) {
                Some(t) if t.signature() == expected => wanted.push(Some((name, follows[j]))),
                Some(t) => {
                    problems.push(format!(
                        "at {path}: tensor `{name}`: expected {expected}, found {}",
                        t.signature()
                    ));
                    wanted.push(None);
                }
                None => {
                    problems.push(format!("at {path}: tensor `{name}`: not in the checkpoint"));
                    wanted.push(None);
                }
            }
        }
        if !problems.is_empty() {
            return Err(Error::custom(format!(
                "zero1 load_state: {}",
                problems.join("; ")
            )));
        }
        let shard_sigs: Vec<Signature> = (0..self.signatures.len())
            .map(|i| self.shard_signature(i))
            .collect();
        let state = &mut self.state;
        for (slot, want) in pytree_std::leaves_mut(&mut *state).into_iter().zip(&wanted) {
            let Some((name, follows)) = want else {
                continue;
            };
            let tensor = file
                .tensor(name)
                .ok_or_else(|| Error::custom(format!("tensor `{name}` vanished")))?;
            let (Follows::Param(i), Some(pieces)) = (follows, &pieces) else {
                <StateLeaf<G, P> as TensorLeaf>::copy_from_tensor(slot, &tensor)?;
                continue;
            };
            // This rank's elements of the whole tensor.
            let data = tensor.data()?;
            let size = tensor.dtype().size_in_bytes().unwrap_or(0);
            let mut bytes = Vec::with_capacity(shard_sigs[*i].num_elements() * size);
            for p in pieces.iter().filter(|p| p.leaf == *i) {
                let part = data
                    .get(p.start * size..(p.start + p.len) * size)
                    .ok_or_else(|| {
                        Error::custom(format!("tensor `{name}` is shorter than its shape"))
                    })?;
                bytes.extend_from_slice(part);
            }
            let view = TensorView::new(name, tensor.dtype(), shard_sigs[*i].shape(), &bytes)?;
            <StateLeaf<G, P> as TensorLeaf>::copy_from_tensor(slot, &view)?;
        }
        if let Some(def) = def.filter(|d| *d != pytree_std::structure(&*state)) {
            let leaves: Vec<StateLeaf<G, P>> = pytree_std::leaves(&*state)
                .iter()
                .map(<StateLeaf<G, P> as ByteLeaf>::to_owned_leaf)
                .collect();
            *state = pytree_std::unflatten(&def, leaves)?;
        }
        Ok(())
    }
}
