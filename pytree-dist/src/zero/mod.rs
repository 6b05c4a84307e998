//! [`Zero1`]: ZeRO stages 1 and 2, the optimizer state (and, through
//! [`Zero1::accumulate`], the gradients) split across the ranks, over any
//! [`GradientTransformation`]. The partition ([`Partition`]) and the step
//! are described on the type; [`layout`] says how the elements are split,
//! [`exchange`] how they travel, [`checkpoint`] how the state is saved.

#[cfg(feature = "checkpoint")]
mod checkpoint;
mod exchange;
mod follows;
mod layout;

use std::ops::Range;

use pytree_optim::{step_in, Context, FloatLeaf, GradientTransformation};
use pytree_std::{ByteLeaf, ByteTensor, Error, Flatten, PyTree, Signature, Std, TreeDef};

use crate::agree::Op;
use crate::backend::Flow;
use crate::dist::Dist;
use crate::owners::{by_leaf, Owner};
use crate::plan::{load_f32, load_f64, store_f32, store_f64, wire_of};
use exchange::{Flats, ShardBuckets, ShardSide, Slot};
use layout::{shard_shape, Layout, Piece};

/// How [`Zero1`] splits the optimizer state across the ranks.
///
/// ```
/// assert_eq!(pytree_dist::Partition::default(), pytree_dist::Partition::Elements);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Partition {
    /// By element (DeepSpeed's ZeRO): every float array leaf is laid end
    /// to end with the others in buckets, and each rank owns its `1/N` of
    /// every bucket, so each rank holds `1/N` of the state (within one
    /// element per bucket) whatever the leaf sizes; a leaf may be split
    /// across ranks. The gradients are reduce-scattered and the
    /// parameters all-gathered: the traffic of one all-reduce. The
    /// transformation sees each leaf as this rank's elements of it, in
    /// an array of the leaf's rank (`[n, 1, ..]`): right for element-wise
    /// transformations (SGD, momentum, Adam, AdamW, Lion, clipping by
    /// value, weight decay, masks by key path), not for one that reads a
    /// leaf's shape (Adafactor's factored moments), whose state
    /// [`Zero1::new`] refuses; use [`Leaves`](Partition::Leaves) there.
    #[default]
    Elements,
    /// By whole leaves (torch's `ZeroRedundancyOptimizer`): each float
    /// array leaf belongs to one rank, the largest first, each to the
    /// rank with the fewest bytes so far. Any transformation sees its
    /// leaves whole, and every sum is the unsharded one bit for bit, but
    /// a leaf larger than `1/N` of the model bounds the largest share
    /// (an embedding of 99% of the parameters puts 99% of the state on
    /// one rank); the gradients are all-reduced and the parameters
    /// broadcast by their owners.
    Leaves,
}

/// ZeRO over the transformation `G` for parameters of type `P`: its state
/// lives `1/N` on each rank, split [by element](Partition::Elements) (the
/// default) or [by whole leaves](Partition::Leaves). A step's result
/// equals that of `G` on the gradients averaged over the ranks, bit for
/// bit, for element-wise transformations (see below for sums).
///
/// **Stage 1** ([`step`](Zero1::step)): the gradients are averaged, each
/// rank steps its *shard*, and the parameters are gathered. Split by
/// element, the average is a reduce-scatter (each rank receives the mean
/// of its own elements only) and the gathering an all-gather: together
/// the bytes of one all-reduce, as DeepSpeed's ZeRO moves. Where the
/// split leaves lend their memory (contiguous `f32` / `f64` arrays), the
/// messages go from the gradients' leaves into the shard's and from the
/// shard's into the parameters', with nothing packed. What a step still
/// copies is this rank's elements of the parameters: into its shard as
/// the step starts (so the step starts from `params` as they are, a
/// checkpoint loaded into them included) and back once stepped. The shard is a
/// tree of the parameters' own type and structure whose leaves hold this
/// rank's elements, so key paths, masks and parameter groups
/// ([`multi_transform`](pytree_optim::multi_transform)) see the tree they
/// were written for; an element-wise state (Adam's `mu`, `nu`) is then
/// allocated for those elements only. Scalars and 0-d arrays, which
/// cannot be split, are averaged by an all-reduce and updated on every
/// rank (a few elements).
///
/// **Stage 2** ([`accumulate`](Zero1::accumulate) then
/// [`step_accumulated`](Zero1::step_accumulated)): each micro-batch's
/// gradients are reduce-scattered as they come and summed into this
/// rank's shard, so a rank keeps `1/N` of the gradient between
/// micro-batches and drops the whole tree at once.
///
/// **Sums.** A transformation that needs a sum over all leaves
/// ([`clip_by_global_norm`](pytree_optim::clip_by_global_norm)) gets each
/// leaf's sum of squares through the reduction of the
/// [`Context`](pytree_optim::Context) the shard is stepped under
/// ([`Context::leaf_sums`](pytree_optim::Context::leaf_sums)), added in leaf
/// order. By whole leaves each sum comes from the leaf's owner: the
/// unsharded norm, bit for bit. By element a split leaf's sum is the sum
/// of the ranks' partial sums (in `f64`, summed by MPI), which adds the
/// same squares in another order: the order of the unsharded sum cannot
/// be kept without passing a running sum from rank to rank, one leaf
/// after another. For `n` squares (all non-negative) in `f64`, any order
/// is within `(n - 1) * 2^-53` of the exact sum, relatively, so the two
/// norms differ by at most `n * 2^-53` relatively (GPT-2 small: 1.4e-8,
/// under half an `f32` ulp), and the clip factor by as much. A test pins
/// it (`pytree-dist/tests/mpi`, scenario `zero1_rounding`).
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
    /// The element layout ([`Partition::Elements`]).
    split: Option<Split>,
    /// The averaged gradients summed by [`Zero1::accumulate`] (stage 2).
    accumulated: Option<Accumulated>,
    /// Flat shards kept for the next [`Zero1::accumulate`] (no allocation
    /// per micro-batch).
    spare: Option<Flats>,
    /// This rank's shards of the parameters and of the gradients, kept
    /// from step to step (by element: no allocation per step).
    shards: Option<(P, P)>,
    state: G::State,
}

/// What a rank needs of a [`Layout`]: the layout, its own runs, and by
/// leaf where its elements lie in its flat shards.
#[derive(Debug)]
pub(crate) struct Split {
    pub layout: Layout,
    pub pieces: Vec<Piece>,
    pub ranges: Vec<Range<usize>>,
    pub starts: Vec<usize>,
    /// The split leaves this rank holds elements of.
    pub slots: Vec<Slot>,
}

impl Split {
    fn new(layout: Layout, rank: usize, leaves: usize) -> Split {
        let ranges = layout.shard_ranges(rank, leaves);
        let slots = (0..leaves)
            .filter_map(|i| {
                let (dtype, _) = layout.leaf(i)?;
                let wire = layout.wire(i)?;
                (!ranges[i].is_empty()).then(|| Slot {
                    leaf: i,
                    wire,
                    dtype,
                    flat: ranges[i].clone(),
                })
            })
            .collect();
        Split {
            pieces: layout.pieces(rank),
            starts: layout.flat_starts(rank),
            ranges,
            slots,
            layout,
        }
    }

    /// Whether every split leaf of `shard` lends its memory (its bytes in
    /// C order), so that the collectives read and write it there.
    fn lends<L: ByteLeaf>(&self, shard: &mut [L::Mut<'_>]) -> bool {
        self.slots.iter().all(|s| {
            let size = s.dtype.size_in_bytes().unwrap_or(0);
            shard
                .get_mut(s.leaf)
                .and_then(|leaf| L::bytes_mut(leaf))
                .is_some_and(|mem| mem.len() == s.flat.len() * size)
        })
    }

    fn flats(&self, rank: usize) -> Flats {
        use crate::backend::Wire;
        Flats {
            f32: vec![0.0; self.layout.flat_len(rank, Wire::F32)],
            f64: vec![0.0; self.layout.flat_len(rank, Wire::F64)],
        }
    }
}

impl<G, P> std::fmt::Debug for Zero1<'_, G, P>
where
    G: GradientTransformation<P>,
    P: PyTree,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zero1")
            .field("rank", &self.dist.rank())
            .field("by_element", &self.split.is_some())
            .field("owners", &self.owners)
            .finish_non_exhaustive()
    }
}

/// A leaf of `leaf`'s dtype and rank with no elements, or `None` for a
/// leaf that cannot be emptied (a scalar, a 0-d array, not a float).
fn empty_like<L: ByteLeaf>(leaf: &L::Ref<'_>) -> Option<L> {
    let sig = <L as ByteLeaf>::signature(leaf).ok()?;
    if sig.shape().is_empty() || wire_of(sig.dtype()).is_none() {
        return None;
    }
    let shape = vec![0; sig.shape().len()];
    let view = ByteTensor::new(sig.dtype(), &shape, &[]).ok()?;
    L::from_bytes(&view, Some(leaf)).ok()
}

/// The gradients a step starts from.
enum Grads<'g, P> {
    /// This rank's, to be averaged (reduce-scattered).
    Raw(&'g mut P),
    /// Already the mean over the ranks, on every rank.
    Averaged(&'g P),
    /// Those summed by [`Zero1::accumulate`].
    Accumulated,
}

/// The gradients summed by [`Zero1::accumulate`]: this rank's elements
/// of the split leaves, and the scalars (by leaf; 0 for other leaves).
#[derive(Debug)]
struct Accumulated {
    flats: Flats,
    scalars: Vec<f64>,
}

impl<'d, G, P> Zero1<'d, G, P>
where
    G: GradientTransformation<P>,
    P: PyTree,
    P::Leaf: FloatLeaf + ByteLeaf,
{
    /// Shards `inner` for `params` over the ranks of `dist`, [by
    /// element](Partition::Elements): the layout (the same on every rank,
    /// checked), and the state of this rank's shard (`inner.init` on
    /// it). An error if the transformation's state is not element-wise
    /// (a state leaf of another shape than its parameter's shard).
    ///
    /// ```
    /// use pytree_dist::{Dist, Partition, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// assert_eq!(zero.partition(), Partition::Elements);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new(dist: &'d Dist, inner: G, params: &P) -> Result<Self, Error>
    where
        G::State: PyTree,
        <G::State as Flatten<Std>>::Leaf: ByteLeaf,
    {
        Self::with_partition(dist, inner, params, Partition::Elements)
    }

    /// The same, split as `partition` says.
    ///
    /// ```
    /// use pytree_dist::{Dist, Partition, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::with_partition(&dist, pytree_optim::adam(0.1), &params, Partition::Leaves)?;
    /// assert_eq!((zero.partition(), zero.owner(1)), (Partition::Leaves, Some(0)));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn with_partition(
        dist: &'d Dist,
        inner: G,
        params: &P,
        partition: Partition,
    ) -> Result<Self, Error>
    where
        G::State: PyTree,
        <G::State as Flatten<Std>>::Leaf: ByteLeaf,
    {
        let def = pytree_std::structure(params);
        let leaves = pytree_std::leaves(params);
        let signatures = leaves
            .iter()
            .map(<P::Leaf as ByteLeaf>::signature)
            .collect::<Result<Vec<_>, _>>()?;
        let (rank, ranks) = (dist.rank(), dist.size());
        let (owners, split) = match partition {
            Partition::Leaves => {
                let emptiable: Vec<bool> = leaves
                    .iter()
                    .map(|l| empty_like::<P::Leaf>(l).is_some())
                    .collect();
                (by_leaf(&signatures, &emptiable, ranks), None)
            }
            Partition::Elements => {
                let layout = Layout::new(&signatures, dist.sizes().bucket_bytes, ranks);
                let owners = signatures
                    .iter()
                    .enumerate()
                    .map(|(i, s)| match layout.splits(i) {
                        true => Owner::Split,
                        false => Owner::Every {
                            float: wire_of(s.dtype()).is_some(),
                        },
                    })
                    .collect();
                (owners, Some(Split::new(layout, rank, signatures.len())))
            }
        };
        drop(leaves);
        // The ranks agree on the tree (and so on the partition).
        dist.agree_on(
            Op::ZeroNew {
                by_element: partition == Partition::Elements,
            },
            params,
        )?;
        let shard = match &split {
            Some(split) => element_shard(params, split, None)?,
            None => shard_of(params, &owners, rank)?,
        };
        let state = inner.init(&shard)?;
        let zero = Zero1 {
            dist,
            inner,
            def,
            signatures,
            owners,
            split,
            accumulated: None,
            spare: None,
            shards: None,
            state,
        };
        if zero.split.is_some() {
            // Which parameter each state leaf follows (checkpoints need
            // it): an error here for a state that is not element-wise.
            zero.state_leaves()?;
        }
        Ok(zero)
    }

    /// How the state is split.
    ///
    /// ```
    /// use pytree_dist::{Dist, Partition, Zero1};
    /// let dist = Dist::local();
    /// let zero = Zero1::new(&dist, pytree_optim::sgd(0.1), &vec![1.0f32])?;
    /// assert_eq!(zero.partition(), Partition::Elements);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn partition(&self) -> Partition {
        match self.split {
            Some(_) => Partition::Elements,
            None => Partition::Leaves,
        }
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

    /// The rank that updates all of leaf `i` (in leaf order), or `None`
    /// for a leaf every rank updates (a scalar, or a leaf split by element
    /// over several ranks) or none does (an integer).
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
            Owner::Split => {
                let split = self.split.as_ref()?;
                let elements = self.signatures.get(i)?.num_elements();
                (0..split.layout.ranks).find(|&r| {
                    let mine: usize = split
                        .layout
                        .pieces(r)
                        .iter()
                        .filter(|p| p.leaf == i)
                        .map(|p| p.len)
                        .sum();
                    mine == elements && elements > 0
                })
            }
        }
    }

    /// How many elements of leaf `i` this rank updates (and holds the
    /// state of): all of a leaf it owns or every rank updates, its part of
    /// a split leaf, none of another rank's leaf.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let params = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let zero = Zero1::new(&dist, pytree_optim::adam(0.1), &params)?;
    /// assert_eq!(zero.elements_here(0), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn elements_here(&self, i: usize) -> usize {
        let rank = self.dist.rank();
        match (self.owners.get(i), &self.split) {
            (Some(Owner::Split), Some(split)) => split.ranges[i].len(),
            (Some(Owner::Rank(r)), _) if *r != rank => 0,
            (Some(_), _) => self.signatures[i].num_elements(),
            (None, _) => 0,
        }
    }

    /// This rank's shard of `tree`: its own elements of each leaf (a leaf
    /// it holds whole keeps its shape, a part of a split leaf is an array
    /// `[n, 1, ..]` of the leaf's rank), the others empty.
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
        match &self.split {
            Some(split) => element_shard(tree, split, None),
            None => shard_of(tree, &self.owners, self.dist.rank()),
        }
    }

    /// One step from this rank's gradients (of its share of the batch):
    /// the gradients averaged over the ranks (reduce-scattered, or
    /// all-reduced by whole leaves: see [`Zero1`]), the shard stepped by
    /// `inner`, the parameters gathered. `grads` is scratch space
    /// afterwards. Every rank must call it; on an error before the first
    /// collective (a tree of another structure than at
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
        if self.split.is_some() {
            return self.step_elements(params, Grads::Raw(grads));
        }
        let n = self.dist.size();
        let owners = &self.owners;
        let divisor = (n > 1).then_some(n);
        // An all-reduce, not a reduce to each leaf's owner: Open MPI
        // 4.1.4's MPI_Ireduce took 3.6 to 5.0 s for GPT-2 small's buckets
        // where MPI_Iallreduce took 1.7 s (BENCHMARKS.md, issue 26); the
        // other ranks' copies of a leaf's mean are scratch.
        let plan = self.dist.plan(
            Op::ZeroAllReduce,
            &*grads,
            |i| owners[i] != Owner::Every { float: false },
            |_| 0,
        )?;
        self.dist.run_plan(Flow::SumToAll, grads, &plan, divisor)?;
        self.step_leaves(params, grads)
    }

    /// One step from gradients already averaged over the ranks (equal on
    /// every rank, after [`Dist::all_reduce_mean`]): the shard stepped,
    /// the parameters gathered.
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
        match self.split {
            Some(_) => self.step_elements(params, Grads::Averaged(grads)),
            None => self.step_leaves(params, grads),
        }
    }

    /// ZeRO stage 2: adds this micro-batch's gradients, averaged over the
    /// ranks, to the sum this rank keeps of its own elements (a
    /// reduce-scatter; the scalars all-reduced), and drops `grads`, so
    /// that between micro-batches a rank holds `1/N` of the gradient.
    /// [`step_accumulated`](Zero1::step_accumulated) steps with the sum.
    /// Split [by element](Partition::Elements) only (an error by whole
    /// leaves). Every rank must call it.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// use pytree_std::ndarray::{array, Array1};
    /// let dist = Dist::local();
    /// let mut params = vec![array![1.0f32, 2.0]];
    /// let mut zero = Zero1::new(&dist, pytree_optim::sgd(0.5), &params)?;
    /// zero.accumulate(vec![array![1.0f32, -1.0]])?;
    /// zero.accumulate(vec![array![1.0f32, 3.0]])?;
    /// assert_eq!(zero.accumulated_elements(), 2); // 1/N of the gradient (N = 1)
    /// zero.step_accumulated(&mut params)?;
    /// assert_eq!(params[0], array![0.0f32, 1.0]); // the sum: [2, 2]
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn accumulate(&mut self, mut grads: P) -> Result<(), Error> {
        self.check(&grads)?;
        let Some(split) = &self.split else {
            return Err(Error::custom(
                "zero1 accumulate: needs the partition by element (ZeRO-2), not by whole leaves",
            ));
        };
        let rank = self.dist.rank();
        // Every element of the flats is written by the reduce-scatter.
        let mut flats = self.spare.take().unwrap_or_else(|| split.flats(rank));
        self.average(&mut grads, ShardSide::Flat(&mut flats))?;
        let scalars = self.scalar_values(&grads)?;
        drop(grads);
        match &mut self.accumulated {
            None => self.accumulated = Some(Accumulated { flats, scalars }),
            Some(acc) => {
                acc.flats
                    .f32
                    .iter_mut()
                    .zip(&flats.f32)
                    .for_each(|(a, g)| *a += g);
                acc.flats
                    .f64
                    .iter_mut()
                    .zip(&flats.f64)
                    .for_each(|(a, g)| *a += g);
                acc.scalars
                    .iter_mut()
                    .zip(&scalars)
                    .for_each(|(a, g)| *a += g);
                self.spare = Some(flats);
            }
        }
        Ok(())
    }

    /// How many gradient elements this rank holds between micro-batches
    /// (its elements of the split leaves, and the scalars): about `1/N` of
    /// the gradient's. 0 before the first [`accumulate`](Zero1::accumulate).
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// let dist = Dist::local();
    /// let zero = Zero1::new(&dist, pytree_optim::sgd(0.5), &vec![1.0f32, 2.0])?;
    /// assert_eq!(zero.accumulated_elements(), 0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn accumulated_elements(&self) -> usize {
        self.accumulated.as_ref().map_or(0, |a| {
            let scalars = self
                .owners
                .iter()
                .filter(|o| **o == Owner::Every { float: true })
                .count();
            a.flats.f32.len() + a.flats.f64.len() + scalars
        })
    }

    /// One step with the gradients summed by
    /// [`accumulate`](Zero1::accumulate) (the sum of the micro-batches'
    /// means: scale the loss by `1 / micro-batches` for their mean, as
    /// with torch's accumulation), which it then forgets. An error if
    /// nothing was accumulated.
    ///
    /// ```
    /// use pytree_dist::{Dist, Zero1};
    /// let dist = Dist::local();
    /// let mut params = vec![1.0f32, 2.0];
    /// let mut zero = Zero1::new(&dist, pytree_optim::sgd(1.0), &params)?;
    /// assert!(zero.step_accumulated(&mut params).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn step_accumulated(&mut self, params: &mut P) -> Result<(), Error> {
        self.check(params)?;
        if self.accumulated.is_none() {
            return Err(Error::custom(
                "zero1 step_accumulated: no gradients accumulated since the last step",
            ));
        }
        self.step_elements(params, Grads::Accumulated)
    }

    /// Averages `grads` over the ranks into this rank's shard side (a
    /// reduce-scatter) and its scalars in place (an all-reduce).
    fn average(&self, grads: &mut P, side: ShardSide<'_, P>) -> Result<(), Error> {
        let split = self
            .split
            .as_ref()
            .ok_or_else(|| Error::custom("zero1: not split"))?;
        let n = self.dist.size();
        let divisor = (n > 1).then_some(n);
        self.dist
            .agree_structure(Op::ZeroReduceScatter, &self.def)?;
        let rank = self.dist.rank();
        let mut buckets = ShardBuckets::new(Flow::SumScatter, grads, split, rank, side, divisor);
        self.dist.backend().run(Flow::SumScatter, &mut buckets)?;
        let owners = &self.owners;
        if owners.contains(&Owner::Every { float: true }) {
            let plan = self.dist.plan(
                Op::ZeroScalars,
                &*grads,
                |i| owners[i] == Owner::Every { float: true },
                |_| 0,
            )?;
            self.dist.run_plan(Flow::SumToAll, grads, &plan, divisor)?;
        }
        Ok(())
    }

    /// The values of the float scalars of `tree` (by leaf; 0 elsewhere).
    fn scalar_values(&self, tree: &P) -> Result<Vec<f64>, Error> {
        pytree_std::leaves(tree)
            .iter()
            .enumerate()
            .map(|(i, leaf)| {
                if self.owners[i] != (Owner::Every { float: true }) {
                    return Ok(0.0);
                }
                let dtype = self.signatures[i].dtype();
                let bytes = <P::Leaf as ByteLeaf>::bytes(leaf)?;
                Ok(match wire_of(dtype) {
                    Some(crate::backend::Wire::F64) => {
                        let mut v = [0.0f64];
                        load_f64(&bytes, &mut v);
                        v[0]
                    }
                    _ => {
                        let mut v = [0.0f32];
                        load_f32(dtype, &bytes, &mut v);
                        f64::from(v[0])
                    }
                })
            })
            .collect()
    }

    /// A step split by element.
    fn step_elements(&mut self, params: &mut P, grads: Grads<'_, P>) -> Result<(), Error> {
        let rank = self.dist.rank();
        let Some(split) = &self.split else {
            return Err(Error::custom("zero1: not split by element"));
        };
        // This rank's elements of the parameters, into the shard kept from
        // the last step where its leaves lend their memory.
        let (mut shard, kept_grads) = match self.shards.take() {
            Some((mut shard, g)) => match refresh(&mut shard, params, split)? {
                true => (shard, Some(g)),
                false => (element_shard(&*params, split, None)?, None),
            },
            None => (element_shard(&*params, split, None)?, None),
        };
        let mut shard_grads = match grads {
            Grads::Raw(grads) => {
                let mut into = match kept_grads {
                    Some(g) => g,
                    None => element_shard(&*grads, split, None)?,
                };
                let lends = split.lends::<P::Leaf>(&mut pytree_std::leaves_mut(&mut into));
                if lends {
                    let side = ShardSide::Leaves {
                        shard: &mut into,
                        slots: &split.slots,
                    };
                    self.average(grads, side)?;
                    // The scalars, averaged in place, into the shard.
                    copy_back(&mut into, grads, &self.signatures, |i| {
                        self.owners[i] == Owner::Every { float: true }
                    })?;
                    into
                } else {
                    let mut flats = split.flats(rank);
                    self.average(grads, ShardSide::Flat(&mut flats))?;
                    element_shard(&*grads, split, Some(&flats))?
                }
            }
            Grads::Averaged(grads) => element_shard(grads, split, None)?,
            Grads::Accumulated => {
                let acc = self
                    .accumulated
                    .take()
                    .ok_or_else(|| Error::custom("zero1: no gradients accumulated"))?;
                // Into the gradients' shard kept from the last step where
                // its leaves lend their memory, else a new one.
                let kept = match kept_grads {
                    Some(mut g) => flats_into_shard(&acc.flats, &mut g, split)?.then_some(g),
                    None => None,
                };
                let shard = match kept {
                    Some(g) => g,
                    None => element_shard(&*params, split, Some(&acc.flats))?,
                };
                self.spare = Some(acc.flats);
                with_scalars(shard, &self.owners, &self.signatures, &acc.scalars)?
            }
        };
        Self::step_shard(
            self.dist,
            &self.owners,
            &self.inner,
            &mut self.state,
            &mut shard,
            &mut shard_grads,
        )?;
        let owners = &self.owners;
        // The scalars, updated alike on every rank, back in place; the
        // split leaves gathered from their ranks.
        copy_back(params, &shard, &self.signatures, |i| {
            owners[i] == Owner::Every { float: true }
        })?;
        self.dist.watch(Op::ZeroAllGather);
        let lends = split.lends::<P::Leaf>(&mut pytree_std::leaves_mut(&mut shard));
        let mut flats;
        let side = if lends {
            ShardSide::Leaves {
                shard: &mut shard,
                slots: &split.slots,
            }
        } else {
            flats = split.flats(rank);
            shard_into_flats(&shard, split, &mut flats)?;
            ShardSide::Flat(&mut flats)
        };
        let mut buckets = ShardBuckets::new(Flow::Gather, params, split, rank, side, None);
        self.dist.backend().run(Flow::Gather, &mut buckets)?;
        if lends {
            self.shards = Some((shard, shard_grads));
        }
        Ok(())
    }

    /// The transformation's step on this rank's shard, a sum over leaves
    /// completed across the ranks: each leaf's sum from the ranks that
    /// hold it (the parts of a split leaf added, a whole leaf's from its
    /// owner, a scalar's from rank 0).
    fn step_shard(
        dist: &Dist,
        owners: &[Owner],
        inner: &G,
        state: &mut G::State,
        shard: &mut P,
        shard_grads: &mut P,
    ) -> Result<(), Error> {
        let rank = dist.rank();
        let complete = |sums: &mut [f64]| -> Result<(), Error> {
            let mut mine: Vec<f64> = sums
                .iter()
                .zip(owners)
                .map(|(&s, o)| match *o {
                    Owner::Split => s,
                    Owner::Rank(r) if r == rank => s,
                    Owner::Every { .. } if rank == 0 => s,
                    _ => 0.0,
                })
                .collect();
            dist.all_reduce_sum(&mut mine)?;
            sums.copy_from_slice(&mine);
            Ok(())
        };
        let cx = Context::default().leaf_sums(&complete);
        step_in(inner, &cx, shard, shard_grads, state)
    }

    /// A step by whole leaves, from averaged gradients.
    fn step_leaves(&mut self, params: &mut P, grads: &P) -> Result<(), Error> {
        let rank = self.dist.rank();
        let mut shard = shard_of(&*params, &self.owners, rank)?;
        let mut shard_grads = shard_of(grads, &self.owners, rank)?;
        Self::step_shard(
            self.dist,
            &self.owners,
            &self.inner,
            &mut self.state,
            &mut shard,
            &mut shard_grads,
        )?;
        let owners = &self.owners;
        // This rank's leaves back into the parameters (unless they are
        // the same memory: a candle variable is updated in place).
        copy_back(params, &shard, &self.signatures, |i| match owners[i] {
            Owner::Rank(r) => r == rank,
            Owner::Every { float } => float,
            Owner::Split => false,
        })?;
        let plan = self.dist.plan(
            Op::ZeroAllGather,
            &*params,
            |i| matches!(owners[i], Owner::Rank(_)),
            |i| match owners[i] {
                Owner::Rank(r) => r,
                _ => 0,
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
            let sig = <P::Leaf as ByteLeaf>::signature(leaf)?;
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

/// Copies the leaves of `shard` for which `which(i)` holds into `params`
/// (same signatures), unless they share memory already (a candle
/// variable updated in place): into the leaf's memory where it lends it,
/// else through a tensor view.
fn copy_back<P>(
    params: &mut P,
    shard: &P,
    signatures: &[Signature],
    which: impl Fn(usize) -> bool,
) -> Result<(), Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf + ByteLeaf,
{
    let same: Vec<bool> = pytree_std::leaves(&*params)
        .into_iter()
        .zip(pytree_std::leaves(shard))
        .map(|(p, s)| <P::Leaf as FloatLeaf>::shares_memory(p, s))
        .collect();
    let shard_leaves = pytree_std::leaves(shard);
    for (i, slot) in pytree_std::leaves_mut(params).into_iter().enumerate() {
        if !which(i) || same[i] {
            continue;
        }
        let sig = &signatures[i];
        let bytes = <P::Leaf as ByteLeaf>::bytes(&shard_leaves[i])?;
        let mut slot = slot;
        // One copy into the leaf's memory where it lends it.
        match <P::Leaf as ByteLeaf>::bytes_mut(&mut slot) {
            Some(mem) if mem.len() == bytes.len() => mem.copy_from_slice(&bytes),
            _ => {
                let view = ByteTensor::new(sig.dtype(), sig.shape(), &bytes)?;
                <P::Leaf as ByteLeaf>::write_bytes(slot, &view)?;
            }
        }
    }
    Ok(())
}

/// Copies this rank's elements of `params` into `shard` (kept from the
/// last step) where every split leaf of it lends its memory, and the
/// other float leaves whole; `false` (nothing written) where one does not.
fn refresh<P>(shard: &mut P, params: &P, split: &Split) -> Result<bool, Error>
where
    P: PyTree,
    P::Leaf: ByteLeaf,
{
    let mut slots = pytree_std::leaves_mut(shard);
    if !split.lends::<P::Leaf>(&mut slots) {
        return Ok(false);
    }
    let leaves = pytree_std::leaves(params);
    let mut pieces = split.pieces.iter().peekable();
    for (i, leaf) in leaves.iter().enumerate() {
        let Some((dtype, _)) = split.layout.leaf(i) else {
            // A scalar or an integer: the same on every rank, copied.
            let bytes = <P::Leaf as ByteLeaf>::bytes(leaf)?;
            match <P::Leaf as ByteLeaf>::bytes_mut(&mut slots[i]) {
                Some(mem) if mem.len() == bytes.len() => mem.copy_from_slice(&bytes),
                _ => return Ok(false),
            }
            continue;
        };
        if split.ranges[i].is_empty() {
            continue;
        }
        let size = dtype.size_in_bytes().unwrap_or(0);
        let src = <P::Leaf as ByteLeaf>::bytes(leaf)?;
        let Some(mem) = <P::Leaf as ByteLeaf>::bytes_mut(&mut slots[i]) else {
            return Ok(false);
        };
        let mut at = 0;
        while let Some(p) = pieces.next_if(|p| p.leaf == i) {
            let from = src
                .get(p.start * size..(p.start + p.len) * size)
                .ok_or_else(|| {
                    Error::custom(format!(
                        "zero1: leaf {i} has fewer bytes than its signature"
                    ))
                })?;
            mem[at..at + from.len()].copy_from_slice(from);
            at += from.len();
        }
    }
    Ok(true)
}

/// `shard` with its float scalars set to `values` (by leaf).
fn with_scalars<P>(
    shard: P,
    owners: &[Owner],
    signatures: &[Signature],
    values: &[f64],
) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: ByteLeaf,
{
    if !owners.contains(&Owner::Every { float: true }) {
        return Ok(shard);
    }
    let def = pytree_std::structure(&shard);
    let leaves = pytree_std::leaves(&shard)
        .iter()
        .enumerate()
        .map(|(i, leaf)| {
            if owners[i] != (Owner::Every { float: true }) {
                return Ok(<P::Leaf as ByteLeaf>::to_owned_leaf(leaf));
            }
            let sig = &signatures[i];
            let size = sig.dtype().size_in_bytes().unwrap_or(0);
            let mut bytes = vec![0u8; sig.num_elements() * size];
            match wire_of(sig.dtype()) {
                Some(crate::backend::Wire::F64) => store_f64(&[values[i]], None, &mut bytes),
                _ => store_f32(sig.dtype(), &[values[i] as f32], None, &mut bytes),
            }
            let view = ByteTensor::new(sig.dtype(), sig.shape(), &bytes)?;
            <P::Leaf as ByteLeaf>::from_bytes(&view, Some(leaf))
        })
        .collect::<Result<Vec<_>, _>>()?;
    pytree_std::generic::basic::unflatten_like::<pytree_std::Std, P>(&def, &shard, leaves)
}

/// This rank's shard of `tree` by element: each split leaf replaced by
/// this rank's elements of it, taken from `flats` when given (the
/// averaged gradients) and else from the leaf; a leaf it holds whole
/// keeps its shape, a part is `[n, 1, ..]`. The other leaves are copied.
fn element_shard<P>(tree: &P, split: &Split, flats: Option<&Flats>) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: ByteLeaf,
{
    let def = pytree_std::structure(tree);
    // Each leaf's runs: consecutive in `pieces`.
    let mut runs: Vec<Range<usize>> = vec![0..0; split.ranges.len()];
    for (j, p) in split.pieces.iter().enumerate() {
        if runs[p.leaf].is_empty() {
            runs[p.leaf] = j..j;
        }
        runs[p.leaf].end = j + 1;
    }
    let leaves = pytree_std::leaves(tree)
        .iter()
        .enumerate()
        .map(|(i, leaf)| {
            let Some((dtype, shape)) = split.layout.leaf(i) else {
                return Ok(<P::Leaf as ByteLeaf>::to_owned_leaf(leaf));
            };
            let size = dtype.size_in_bytes().unwrap_or(0);
            let range = split.ranges[i].clone();
            let n = range.len();
            let mut bytes = vec![0u8; n * size];
            match flats {
                Some(f) => match split.layout.wire(i) {
                    Some(crate::backend::Wire::F64) => store_f64(&f.f64[range], None, &mut bytes),
                    _ => store_f32(dtype, &f.f32[range], None, &mut bytes),
                },
                None => {
                    let src = <P::Leaf as ByteLeaf>::bytes(leaf)?;
                    let mut at = 0;
                    for p in &split.pieces[runs[i].clone()] {
                        let from = src
                            .get(p.start * size..(p.start + p.len) * size)
                            .ok_or_else(|| {
                                Error::custom(format!(
                                    "zero1: leaf {i} has {} bytes, fewer than its signature's",
                                    src.len()
                                ))
                            })?;
                        bytes[at..at + from.len()].copy_from_slice(from);
                        at += from.len();
                    }
                }
            }
            let elements: usize = shape.iter().product();
            let shape = if n == elements {
                shape.to_vec()
            } else {
                shard_shape(n, shape)
            };
            let view = ByteTensor::new(dtype, &shape, &bytes)?;
            <P::Leaf as ByteLeaf>::from_bytes(&view, Some(leaf))
        })
        .collect::<Result<Vec<_>, _>>()?;
    pytree_std::generic::basic::unflatten_like::<pytree_std::Std, P>(&def, tree, leaves)
}

/// Writes the split leaves of `shard` (this rank's elements, after a
/// step) into `flats`, ready for the all-gather.
fn shard_into_flats<P>(shard: &P, split: &Split, flats: &mut Flats) -> Result<(), Error>
where
    P: PyTree,
    P::Leaf: ByteLeaf,
{
    for (i, leaf) in pytree_std::leaves(shard).iter().enumerate() {
        let Some((dtype, _)) = split.layout.leaf(i) else {
            continue;
        };
        let range = split.ranges[i].clone();
        let size = dtype.size_in_bytes().unwrap_or(0);
        let bytes = <P::Leaf as ByteLeaf>::bytes(leaf)?;
        if bytes.len() != range.len() * size {
            return Err(Error::custom(format!(
                "zero1: the step left leaf {i} of this rank's shard with {} bytes, expected {}",
                bytes.len(),
                range.len() * size
            )));
        }
        match split.layout.wire(i) {
            Some(crate::backend::Wire::F64) => load_f64(&bytes, &mut flats.f64[range]),
            _ => load_f32(dtype, &bytes, &mut flats.f32[range]),
        }
    }
    Ok(())
}

/// Writes `flats` (this rank's elements, averaged) into the split leaves
/// of `shard` where every one lends its memory; `false` (nothing
/// written) where one does not.
fn flats_into_shard<P>(flats: &Flats, shard: &mut P, split: &Split) -> Result<bool, Error>
where
    P: PyTree,
    P::Leaf: ByteLeaf,
{
    let mut leaves = pytree_std::leaves_mut(shard);
    if !split.lends::<P::Leaf>(&mut leaves) {
        return Ok(false);
    }
    for slot in &split.slots {
        let mem = leaves
            .get_mut(slot.leaf)
            .and_then(|leaf| <P::Leaf as ByteLeaf>::bytes_mut(leaf))
            .ok_or_else(|| {
                Error::custom(format!(
                    "zero1: leaf {} of the shard lends no memory",
                    slot.leaf
                ))
            })?;
        let range = slot.flat.clone();
        match slot.wire {
            crate::backend::Wire::F64 => store_f64(&flats.f64[range], None, mem),
            crate::backend::Wire::F32 => store_f32(slot.dtype, &flats.f32[range], None, mem),
        }
    }
    Ok(true)
}

/// `tree` with the leaves other ranks own replaced by empty ones (new
/// ones each time: two shards never share a leaf's memory, which candle
/// variables would).
fn shard_of<P>(tree: &P, owners: &[Owner], rank: usize) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: ByteLeaf,
{
    let def = pytree_std::structure(tree);
    let leaves = pytree_std::leaves(tree)
        .iter()
        .enumerate()
        .map(|(i, leaf)| match owners[i] {
            Owner::Rank(r) if r != rank => empty_like::<P::Leaf>(leaf)
                .ok_or_else(|| Error::custom(format!("zero1: leaf {i} can no longer be emptied"))),
            _ => Ok(<P::Leaf as ByteLeaf>::to_owned_leaf(leaf)),
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
        let owners = by_leaf(&sigs, &[true, true, true, true, false], 2);
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
