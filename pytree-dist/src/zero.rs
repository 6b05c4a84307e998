//! [`Zero1`]: ZeRO stage 1, the optimizer state split across the ranks,
//! over any [`GradientTransformation`] (the partition and the step are
//! described on the type).

use pytree_optim::{with_leaf_sums, FloatLeaf, GradientTransformation};
use pytree_std::checkpoint::{TensorLeaf, TensorView};
use pytree_std::{Error, PyTree, Signature, TreeDef};

use crate::backend::Flow;
use crate::dist::Dist;
use crate::plan::wire_of;

/// Where a leaf is updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// By this rank only (a float array of at least one dimension).
    Rank(usize),
    /// By every rank (a float scalar or 0-d array), or by none (an
    /// integer or bool leaf, which optimizers leave alone).
    Every { float: bool },
}

/// ZeRO stage 1 over the transformation `G` for parameters of type `P`:
/// its state lives `1/N` on each rank (by whole leaves: see below). The
/// result of a step equals that of `G` on the gradients averaged over the
/// ranks by [`Dist::all_reduce_mean`], bit for bit.
///
/// **The partition is by whole leaves** (as PyTorch's
/// `ZeroRedundancyOptimizer` assigns whole parameters), not by slices of
/// one flat buffer (DeepSpeed): each float array leaf belongs to one rank,
/// chosen greedily, the largest leaves first, each to the rank that holds
/// the fewest bytes so far. Each rank runs the transformation on its
/// *shard*: a tree of the parameters' own type and structure in which the
/// leaves of other ranks are empty arrays (zero elements, the same rank),
/// so key paths, kinds, masks and parameter groups
/// ([`multi_transform`](pytree_optim::multi_transform)) see the tree they
/// were written for; an element-wise state (Adam's `mu`, `nu`) is then
/// allocated for the rank's own leaves only. Scalars and 0-d arrays, which
/// cannot be emptied, are updated on every rank (a few elements). What a
/// flat slicing would have offered in balance (a leaf larger than `1/N`
/// of the model bounds the largest shard), whole leaves repay in
/// exactness: every leaf is updated by the same code on the same elements
/// as without sharding, so the result is the unsharded optimizer's bit for
/// bit, and a transformation that needs a sum over all leaves
/// ([`clip_by_global_norm`](pytree_optim::clip_by_global_norm)) gets each
/// leaf's sum from its owner through
/// [`with_leaf_sums`](pytree_optim::with_leaf_sums), added in leaf order:
/// the unsharded norm, bit for bit (a transformation written elsewhere
/// that sums over the leaves with its own loop sees its shard's leaves
/// only: see `with_leaf_sums`).
///
/// A step: the gradients are averaged, each rank steps its shard, and the
/// parameters are all-gathered (each owner broadcasts its leaves: a
/// large leaf from its own memory into the others', `MPI_Bcast` per
/// piece, the small ones packed, `MPI_Ibcast` per bucket, buckets grouped
/// by owner). The average is an
/// all-reduce rather than a reduce-scatter (a reduce of each bucket to its
/// owner, [`Flow::SumToRoot`](crate::Flow::SumToRoot)): on Open MPI 4.1.4,
/// `MPI_Ireduce` took 3.6 to 5.0 s for GPT-2 small's gradient where
/// `MPI_Iallreduce` took 1.7 s, on the same machine in the same minutes.
/// So the gradients are reduced exactly as by
/// [`Dist::all_reduce_mean`], and a ZeRO-1 step equals a replicated one
/// bit for bit at any number of ranks.
///
/// ```
/// use pytree_dist::{Dist, Zero1};
/// use pytree_optim::{adam, chain, clip_by_global_norm, GradientTransformation};
/// use pytree_std::ndarray::{array, Array1};
/// use pytree_std::PyTree;
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// struct Linear { w: Array1<f32>, b: Array1<f32> }
///
/// let dist = Dist::local();
/// let opt = chain(clip_by_global_norm(1.0), adam(0.1));
/// let mut params = Linear { w: array![1.0, -1.0], b: array![0.0] };
/// let mut zero = Zero1::new(&dist, opt.clone(), &params)?;
/// let mut grads = Linear { w: array![3.0, -4.0], b: array![0.0] };
/// zero.step(&mut params, &mut grads)?; // average, step the shard, all-gather
///
/// let mut alone = Linear { w: array![1.0, -1.0], b: array![0.0] };
/// let mut state = opt.init(&alone)?;
/// opt.step(&mut alone, &mut Linear { w: array![3.0, -4.0], b: array![0.0] }, &mut state)?;
/// assert_eq!(params, alone); // bit for bit
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct Zero1<'d, G, P>
where
    G: GradientTransformation<P>,
    P: PyTree,
{
    dist: &'d Dist,
    inner: G,
    def: TreeDef,
    signatures: Vec<Signature>,
    owners: Vec<Owner>,
    state: G::State,
}

impl<G, P> std::fmt::Debug for Zero1<'_, G, P>
where
    G: GradientTransformation<P>,
    P: PyTree,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zero1")
            .field("rank", &self.dist.rank())
            .field("owners", &self.owners)
            .finish_non_exhaustive()
    }
}

/// A leaf of `leaf`'s dtype and rank with no elements, or `None` for a
/// leaf that cannot be emptied (a scalar, a 0-d array, not a float).
fn empty_like<L: TensorLeaf>(leaf: &L::Ref<'_>) -> Option<L> {
    let sig = L::tensor_signature(leaf).ok()?;
    if sig.shape().is_empty() || wire_of(sig.dtype()).is_none() {
        return None;
    }
    let shape = vec![0; sig.shape().len()];
    let view = TensorView::new("", sig.dtype(), &shape, &[]).ok()?;
    L::from_tensor(&view, Some(leaf)).ok()
}

/// Each leaf's owner: the largest first, each to the rank holding the
/// fewest bytes so far (ties: the lower rank).
pub(crate) fn partition(signatures: &[Signature], emptiable: &[bool], ranks: usize) -> Vec<Owner> {
    let bytes = |s: &Signature| s.size_in_bytes().unwrap_or(0);
    let mut owners: Vec<Owner> = signatures
        .iter()
        .map(|s| Owner::Every {
            float: wire_of(s.dtype()).is_some(),
        })
        .collect();
    let mut order: Vec<usize> = (0..signatures.len()).filter(|&i| emptiable[i]).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(bytes(&signatures[i])));
    let mut load = vec![0usize; ranks];
    for i in order {
        let r = (0..ranks).min_by_key(|&r| (load[r], r)).unwrap_or(0);
        load[r] += bytes(&signatures[i]);
        owners[i] = Owner::Rank(r);
    }
    owners
}

impl<'d, G, P> Zero1<'d, G, P>
where
    G: GradientTransformation<P>,
    P: PyTree,
    P::Leaf: FloatLeaf + TensorLeaf,
{
    /// Shards `inner` for `params` over the ranks of `dist`: the partition
    /// (the same on every rank, checked), and the state of this rank's
    /// shard (`inner.init` on it).
    pub fn new(dist: &'d Dist, inner: G, params: &P) -> Result<Self, Error> {
        let def = pytree_std::structure(params);
        let leaves = pytree_std::leaves(params);
        let signatures = leaves
            .iter()
            .map(<P::Leaf as TensorLeaf>::tensor_signature)
            .collect::<Result<Vec<_>, _>>()?;
        let emptiable: Vec<bool> = leaves
            .iter()
            .map(|l| empty_like::<P::Leaf>(l).is_some())
            .collect();
        let owners = partition(&signatures, &emptiable, dist.size());
        drop(leaves);
        // The ranks agree on the tree (and so on the partition).
        dist.agreed_plan("zero1 new".into(), params, true, |_| false, |_| 0)?;
        let shard = shard_of(params, &owners, dist.rank())?;
        let state = inner.init(&shard)?;
        Ok(Zero1 {
            dist,
            inner,
            def,
            signatures,
            owners,
            state,
        })
    }

    /// The processes it runs on.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// assert_eq!(zero.dist().size(), 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn dist(&self) -> &'d Dist {
        self.dist
    }

    /// This rank's part of the state: the state of `inner` for its shard.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// assert_eq!(zero.state().0.count, 0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn state(&self) -> &G::State {
        &self.state
    }

    /// The same, writable (to load it from a checkpoint, say).
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// let mut zero = zero;
    /// zero.state_mut().0.count = 5;
    /// assert_eq!(zero.state().0.count, 5);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn state_mut(&mut self) -> &mut G::State {
        &mut self.state
    }

    /// The wrapped transformation.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// assert_eq!(zero.inner().first.b1, 0.9);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn inner(&self) -> &G {
        &self.inner
    }

    /// The rank that updates leaf `i` (in leaf order), or `None` for a
    /// leaf every rank updates (a scalar) or none does (an integer).
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// assert_eq!((zero.owner(0), zero.owner(1)), (Some(0), Some(0))); // one rank
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn owner(&self, i: usize) -> Option<usize> {
        match self.owners.get(i)? {
            Owner::Rank(r) => Some(*r),
            Owner::Every { .. } => None,
        }
    }

    /// This rank's shard of `tree`: its own leaves, the others empty.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// assert_eq!(zero.shard(&params)?, params); // a world of one owns everything
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn shard(&self, tree: &P) -> Result<P, Error> {
        self.check(tree)?;
        shard_of(tree, &self.owners, self.dist.rank())
    }

    /// One step from this rank's gradients (of its share of the batch):
    /// the gradients averaged over the ranks (all-reduced: see
    /// [`Zero1`]), the shard stepped by `inner`, the parameters
    /// all-gathered. `grads` is
    /// scratch space afterwards. Every rank must call it; on an error
    /// before the first collective (a tree of another structure than at
    /// [`new`](Zero1::new)), nothing has changed.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// let mut params = params;
    /// let mut zero = zero;
    /// zero.step(&mut params, &mut vec![array![1.0f32, -1.0], array![0.5f32]])?;
    /// assert_eq!(params[0], array![0.9f32, 2.1]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn step(&mut self, params: &mut P, grads: &mut P) -> Result<(), Error> {
        self.check(params)?;
        self.check(grads)?;
        let n = self.dist.size();
        let owners = &self.owners;
        let divisor = (n > 1).then_some(n);
        // An all-reduce, not a reduce to each leaf's owner: Open MPI
        // 4.1.4's MPI_Ireduce took 3.6 to 5.0 s for GPT-2 small's buckets
        // where MPI_Iallreduce took 1.7 s (BENCHMARKS.md, issue 26); the
        // other ranks' copies of a leaf's mean are scratch.
        let plan = self.dist.agreed_plan(
            "zero1 all-reduce of the gradients".into(),
            &*grads,
            true,
            |i| owners[i] != Owner::Every { float: false },
            |_| 0,
        )?;
        self.dist.run_plan(Flow::SumToAll, grads, &plan, divisor)?;
        self.step_reduced(params, grads)
    }

    /// One step from gradients already averaged over the ranks (equal on
    /// every rank, after [`Dist::all_reduce_mean`]): the shard stepped,
    /// the parameters all-gathered.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// let mut params = params;
    /// let mut zero = zero;
    /// let mut grads = vec![array![1.0f32, -1.0], array![0.5f32]];
    /// dist.all_reduce_mean(&mut grads)?;
    /// zero.step_averaged(&mut params, &mut grads)?;
    /// assert_eq!(params[1], array![2.9f32]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn step_averaged(&mut self, params: &mut P, grads: &mut P) -> Result<(), Error> {
        self.check(params)?;
        self.check(grads)?;
        self.step_reduced(params, grads)
    }

    fn step_reduced(&mut self, params: &mut P, grads: &P) -> Result<(), Error> {
        let rank = self.dist.rank();
        let mut shard = shard_of(&*params, &self.owners, rank)?;
        let mut shard_grads = shard_of(grads, &self.owners, rank)?;
        let owners = &self.owners;
        let dist = self.dist;
        // Each leaf's sum comes from its owner (the scalars' from rank 0).
        let complete = |sums: &mut [f64]| -> Result<(), Error> {
            let mut mine: Vec<f64> = sums
                .iter()
                .zip(owners)
                .map(|(&s, o)| match *o {
                    Owner::Rank(r) if r == rank => s,
                    Owner::Every { .. } if rank == 0 => s,
                    _ => 0.0,
                })
                .collect();
            dist.all_reduce_sum(&mut mine)?;
            sums.copy_from_slice(&mine);
            Ok(())
        };
        let (inner, state) = (&self.inner, &mut self.state);
        with_leaf_sums(&complete, || {
            inner.step(&mut shard, &mut shard_grads, state)
        })?;
        // This rank's leaves back into the parameters (unless they are
        // the same memory: a candle variable is updated in place).
        let same: Vec<bool> = pytree_std::leaves(&*params)
            .into_iter()
            .zip(pytree_std::leaves(&shard))
            .map(|(p, s)| <P::Leaf as FloatLeaf>::shares_memory(p, s))
            .collect();
        let shard_leaves = pytree_std::leaves(&shard);
        for (i, slot) in pytree_std::leaves_mut(params).into_iter().enumerate() {
            let updated_here = match owners[i] {
                Owner::Rank(r) => r == rank,
                Owner::Every { float } => float,
            };
            if updated_here && !same[i] {
                let sig = &self.signatures[i];
                let bytes = <P::Leaf as TensorLeaf>::tensor_bytes(&shard_leaves[i])?;
                let mut slot = slot;
                // One copy into the leaf's memory where it lends it.
                match <P::Leaf as TensorLeaf>::tensor_bytes_mut(&mut slot) {
                    Some(mem) if mem.len() == bytes.len() => mem.copy_from_slice(&bytes),
                    _ => {
                        let view = TensorView::new("", sig.dtype(), sig.shape(), &bytes)?;
                        <P::Leaf as TensorLeaf>::copy_from_tensor(slot, &view)?;
                    }
                }
            }
        }
        let plan = self.dist.agreed_plan(
            "zero1 all-gather".into(),
            &*params,
            true,
            |i| matches!(owners[i], Owner::Rank(_)),
            |i| match owners[i] {
                Owner::Rank(r) => r,
                Owner::Every { .. } => 0,
            },
        )?;
        self.dist.run_plan(Flow::FromRoot, params, &plan, None)
    }

    /// An error unless `tree` has the structure and leaf signatures the
    /// partition was made for.
    fn check(&self, tree: &P) -> Result<(), Error> {
        let def = pytree_std::structure(tree);
        if def != self.def {
            let why = self.def.diff(&def).into_iter().next();
            return Err(Error::custom(format!(
                "zero1: the tree differs from the one it was sharded for{}",
                why.map_or(String::new(), |e| format!(": {e}"))
            )));
        }
        for (i, leaf) in pytree_std::leaves(tree).iter().enumerate() {
            let sig = <P::Leaf as TensorLeaf>::tensor_signature(leaf)?;
            if sig != self.signatures[i] {
                let path = def
                    .leaf_path(i)
                    .map_or_else(|| format!("leaf {i}"), |p| p.to_string());
                return Err(Error::custom(format!(
                    "zero1: at {path}: expected {}, found {sig} (the tree it was sharded for)",
                    self.signatures[i]
                )));
            }
        }
        Ok(())
    }
}

/// `tree` with the leaves other ranks own replaced by empty ones (new
/// ones each time: two shards never share a leaf's memory, which candle
/// variables would).
fn shard_of<P>(tree: &P, owners: &[Owner], rank: usize) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: TensorLeaf,
{
    let def = pytree_std::structure(tree);
    let leaves = pytree_std::leaves(tree)
        .iter()
        .enumerate()
        .map(|(i, leaf)| match owners[i] {
            Owner::Rank(r) if r != rank => empty_like::<P::Leaf>(leaf)
                .ok_or_else(|| Error::custom(format!("zero1: leaf {i} can no longer be emptied"))),
            _ => Ok(<P::Leaf as TensorLeaf>::to_owned_leaf(leaf)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Through the TreeDef, or built like `tree` for a tree a TreeDef cannot
    // rebuild alone (a burn module).
    pytree_std::generic::basic::unflatten_like::<pytree_std::Std, P>(&def, tree, leaves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pytree_std::DType;

    #[test]
    fn the_largest_leaves_go_first_to_the_least_loaded_rank() {
        let sig = |n: usize| Signature::new(DType::F32, vec![n]);
        let sigs = [
            sig(10),
            sig(40),
            sig(30),
            sig(25),
            Signature::scalar(DType::F32),
        ];
        let owners = partition(&sigs, &[true, true, true, true, false], 2);
        // 40 -> 0, 30 -> 1, 25 -> 1 (30 < 40), 10 -> 0 (40 < 55).
        assert_eq!(
            owners,
            [
                Owner::Rank(0),
                Owner::Rank(0),
                Owner::Rank(1),
                Owner::Rank(1),
                Owner::Every { float: true }
            ]
        );
    }
}
