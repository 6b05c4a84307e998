//! The tree collectives of [`Dist`]: [`all_reduce_mean`](Dist::all_reduce_mean)
//! and its kin (sum, masked, reduce to one rank) through a bucket
//! [`Plan`], and [`check_replicated`](Dist::check_replicated).

use std::hash::{DefaultHasher, Hash, Hasher};

use pytree_optim::Mask;
use pytree_std::ByteLeaf;
use pytree_std::{Error, Flatten, Std};

use crate::agree::Op;
use crate::backend::Flow;
use crate::dist::Dist;
use crate::plan::{Plan, TreeBuckets};

impl Dist {
    /// Sums the float leaves of `tree` over all ranks, in place; see
    /// [`all_reduce_mean`](Dist::all_reduce_mean).
    ///
    /// ```
    /// use pytree_std::ndarray::array;
    /// use pytree_std::AnyArray;
    /// // f32 weights summed, an integer buffer left alone.
    /// let mut t = (AnyArray::from(array![1.0f32]), AnyArray::from(array![2u8]));
    /// pytree_dist::Dist::local().all_reduce_sum(&mut t)?;
    /// assert_eq!(t, (AnyArray::from(array![1.0f32]), AnyArray::from(array![2u8])));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn all_reduce_sum<T>(&self, tree: &mut T) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.all_reduce(tree, None, false)
    }

    /// Averages the float leaves of `tree` over all ranks, in place: what a
    /// data-parallel step does to the gradients (each rank's gradient of its
    /// share of the batch) before the optimizer.
    ///
    /// The float leaves (`f32`, `f64`, `f16`, `bf16`: scalars, ndarray
    /// arrays, candle tensors and variables on the CPU) are summed in
    /// buckets of at most [`Sizes::bucket_bytes`](crate::Sizes::bucket_bytes) bytes:
    /// - an `f32` or `f64` leaf of at least
    ///   [`Sizes::in_place_bytes`](crate::Sizes::in_place_bytes) bytes (1 MiB: the weight
    ///   matrices) in its own memory, piece by piece, with nothing copied
    ///   (on MPI, `MPI_Allreduce` with `MPI_IN_PLACE`), each piece divided
    ///   by the number of ranks right after its sum;
    /// - the others packed, in leaf order, into buckets (`f16` / `bf16`
    ///   summed in `f32` buckets, `f64` in `f64` ones), each bucket summed
    ///   by a non-blocking all-reduce while the next is packed, and the
    ///   sums divided and written back into the leaves.
    ///
    /// Integer and bool leaves are left alone (they are not gradients;
    /// [`broadcast`](Dist::broadcast) sends them).
    ///
    /// An error on every rank, before anything is sent, if the ranks'
    /// trees differ (structure, static data, a leaf's dtype or shape).
    ///
    /// ```
    /// use pytree_std::ndarray::{array, Array1};
    /// let mut g = vec![array![1.0f32, 2.0], array![3.0f32]];
    /// let four_bytes = pytree_dist::Sizes { bucket_bytes: 4, ..Default::default() };
    /// pytree_dist::Dist::local().with_sizes(four_bytes).all_reduce_mean(&mut g)?; // three buckets
    /// assert_eq!(g, vec![array![1.0f32, 2.0], array![3.0f32]]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn all_reduce_mean<T>(&self, tree: &mut T) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.all_reduce(tree, None, true)
    }

    /// [`all_reduce_mean`](Dist::all_reduce_mean) of the leaves where
    /// `mask` holds (pytree-optim's [`Mask`], a predicate on the key
    /// path); the others (frozen parameters' gradients) are not sent and
    /// keep their value. Every rank must use the same mask (checked).
    ///
    /// ```
    /// use pytree_optim::Mask;
    /// use pytree_std::{KeyPath, PyTree};
    /// #[derive(PyTree)]
    /// struct G { encoder: Vec<f32>, head: Vec<f32> }
    /// let mut g = G { encoder: vec![1.0], head: vec![2.0] };
    /// let trainable = Mask::new(|p: &KeyPath| p.to_string().starts_with(".head"));
    /// pytree_dist::Dist::local().all_reduce_mean_masked(&mut g, &trainable)?;
    /// assert_eq!((g.encoder[0], g.head[0]), (1.0, 2.0));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn all_reduce_mean_masked<T>(&self, tree: &mut T, mask: &Mask) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.all_reduce(tree, Some(mask), true)
    }

    /// Averages the float leaves of `tree` over all ranks onto rank
    /// `root` only (a reduce, MPI_Ireduce per bucket): the other ranks'
    /// trees are left as they were. Checked as
    /// [`all_reduce_mean`](Dist::all_reduce_mean) is.
    ///
    /// ```
    /// let mut g = vec![2.0f32, 4.0];
    /// pytree_dist::Dist::local().reduce_mean(&mut g, 0)?;
    /// assert_eq!(g, [2.0, 4.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn reduce_mean<T>(&self, tree: &mut T, root: usize) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        let size = self.size();
        self.ensure_rank(root, "reduce to")?;
        let plan = self.plan(Op::ReduceMean { root }, &*tree, |_| true, |_| root)?;
        let divisor = (size > 1).then_some(size);
        self.run_plan(Flow::SumToRoot, tree, &plan, divisor)
    }

    fn all_reduce<T>(&self, tree: &mut T, mask: Option<&Mask>, mean: bool) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        let op = Op::AllReduce {
            mean,
            masked: mask.is_some(),
        };
        let bits = mask.map(|m| m.on(&*tree));
        let sent = |i: usize| bits.as_ref().is_none_or(|b| b.get(i));
        let plan = self.plan(op, &*tree, sent, |_| 0)?;
        let divisor = (mean && self.size() > 1).then_some(self.size());
        self.run_plan(Flow::SumToAll, tree, &plan, divisor)
    }

    /// Runs the buckets of `plan` over `tree`.
    pub(crate) fn run_plan<T>(
        &self,
        flow: Flow,
        tree: &mut T,
        plan: &Plan,
        divisor: Option<usize>,
    ) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        let mut buckets = TreeBuckets::new(tree, plan, divisor);
        self.backend.run(flow, &mut buckets)
    }

    /// Checks that every rank holds the same values in `tree` (structure,
    /// static data and every leaf's bytes): what data-parallel training
    /// keeps true of the parameters after each step. An error on every
    /// rank naming the first leaf that differs and the ranks, otherwise.
    /// One all-gather of 8 bytes per leaf.
    ///
    /// ```
    /// let dist = pytree_dist::Dist::local();
    /// dist.check_replicated(&(vec![1.0f32], 2.0f32))?;
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn check_replicated<T>(&self, tree: &T) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.watch(Op::CheckReplicated);
        let mut hashes = Vec::new();
        let mut h = DefaultHasher::new();
        pytree_std::structure(tree).hash(&mut h);
        hashes.extend_from_slice(&h.finish().to_le_bytes());
        let mut error = None;
        for leaf in pytree_std::leaves(tree) {
            let mut h = DefaultHasher::new();
            match <T::Leaf as ByteLeaf>::bytes(&leaf) {
                Ok(b) => b.hash(&mut h),
                Err(e) => error = error.or(Some(e)),
            }
            hashes.extend_from_slice(&h.finish().to_le_bytes());
        }
        if let Some(e) = error {
            hashes.clear();
            hashes.extend_from_slice(e.to_string().as_bytes());
        }
        let all = self.backend.all_gather(&hashes)?;
        let mut problems = Vec::new();
        for (r, theirs) in all.iter().enumerate().skip(1) {
            if *theirs == all[0] {
                continue;
            }
            if theirs.len() != all[0].len() || theirs[..8] != all[0][..8] {
                problems.push(format!("rank {r}'s structure differs from rank 0's"));
                continue;
            }
            let leaf = (8..theirs.len())
                .step_by(8)
                .find(|&i| theirs[i..i + 8] != all[0][i..i + 8])
                .map_or(0, |i| i / 8 - 1);
            let path = pytree_std::structure(tree)
                .leaf_path(leaf)
                .map_or_else(|| format!("leaf {leaf}"), |p| p.to_string());
            problems.push(format!("rank {r} differs from rank 0 at {path}"));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::custom(format!(
                "the ranks' trees are not replicas: {}",
                problems.join("; ")
            )))
        }
    }
}
