//! [`Dist`]: a handle on the processes of one job: its backend, its
//! [`Sizes`], its timeout and step, and [`Plans`], the bucket plans of
//! the trees it has seen, by structure. [`Dist::plan`] agrees with the
//! other ranks on an operation over a tree and returns its bucket
//! [`Plan`], built once per structure; [`Dist::agree_on`] and
//! [`Dist::agree_structure`] only agree, for operations that send no
//! buckets of their own (a checkpoint, ZeRO's set-up). The operations
//! live in their own modules: [`collectives`](crate::collectives),
//! [`broadcast`](crate::broadcast), [`zero`](crate::zero),
//! [`checkpoint`](crate::checkpoint).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use pytree_std::{ByteLeaf, Error, Flatten, Signature, Std, TreeDef};

use crate::agree::{agree, Intent, Op};
use crate::backend::{Backend, Watch};
use crate::local::Local;
use crate::plan::{wire_of, LeafSpec, Plan};
use crate::sizes::Sizes;
use crate::timeout::{timeout_from_env, DEFAULT_TIMEOUT};

/// The processes of one job and the tree operations between them:
/// [`all_reduce_mean`](Dist::all_reduce_mean) of a gradient tree,
/// [`broadcast`](Dist::broadcast) of parameters,
/// [`check_replicated`](Dist::check_replicated); ZeRO-1 and checkpoints
/// build on it ([`Zero1`](crate::Zero1), [`checkpoint::save`](crate::checkpoint::save)).
///
/// Every rank must call the same operations in the same order (as with
/// MPI). Before each one, the ranks check that they hold the same tree
/// (one all-gather of a 16-byte hash per rank; module `agree`): a rank
/// whose tree differs makes the operation an [`Error`] on every rank,
/// naming the ranks and the first key path that differs, and nothing is
/// sent.
///
/// ```
/// use pytree_dist::Dist;
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Grads { w: Vec<f32>, b: f32, #[pytree(static)] step: u32 }
///
/// let dist = Dist::local(); // a world of one; `Dist::init()` under mpirun
/// let mut g = Grads { w: vec![1.0, 2.0], b: 3.0, step: 7 };
/// dist.all_reduce_mean(&mut g)?; // the mean over one rank: unchanged
/// assert_eq!(g, Grads { w: vec![1.0, 2.0], b: 3.0, step: 7 });
/// assert_eq!((dist.rank(), dist.size()), (0, 1));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct Dist {
    pub(crate) backend: Rc<dyn Backend>,
    sizes: Sizes,
    timeout: Option<Duration>,
    /// The step [`Dist::set_step`] set, shared by every handle on the
    /// same backend.
    step: Rc<Cell<Option<u64>>>,
    pub(crate) plans: Plans,
}

impl std::fmt::Debug for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dist")
            .field("backend", &self.backend.name())
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("sizes", &self.sizes)
            .field("timeout", &self.timeout)
            .field("step", &self.step.get())
            .finish()
    }
}

impl Dist {
    /// The tree operations over `backend`, with the default [`Sizes`]
    /// and collectives that wait at most
    /// [`DEFAULT_TIMEOUT`](crate::DEFAULT_TIMEOUT) for the other ranks
    /// ([`TIMEOUT_ENV`](crate::TIMEOUT_ENV) is read by [`Dist::init`],
    /// not here).
    ///
    /// ```
    /// let dist = pytree_dist::Dist::new(pytree_dist::Local);
    /// assert_eq!(dist.size(), 1);
    /// ```
    pub fn new(backend: impl Backend + 'static) -> Dist {
        Dist {
            backend: Rc::new(backend),
            sizes: Sizes::default(),
            timeout: Some(DEFAULT_TIMEOUT),
            step: Rc::new(Cell::new(None)),
            plans: Plans::default(),
        }
    }

    /// The world of one process ([`Local`]), no MPI involved.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().rank(), 0);
    /// ```
    pub fn local() -> Dist {
        Dist::new(Local)
    }

    /// The job this process was started in: with feature `mpi`, MPI's
    /// world (`mpirun -np N` gives `N` ranks; a program started without
    /// a launcher is a world of one, through MPI all the same); without
    /// it, [`Dist::local`]. The collectives' timeout is
    /// [`TIMEOUT_ENV`](crate::TIMEOUT_ENV)'s (`PYTREE_DIST_TIMEOUT=30`:
    /// seconds, or `none`) where it is set, else
    /// [`DEFAULT_TIMEOUT`](crate::DEFAULT_TIMEOUT); a value that is not
    /// one is an error naming the variable (checked before MPI starts).
    ///
    /// ```
    /// # #[cfg(not(feature = "mpi"))]
    /// assert_eq!(pytree_dist::Dist::init()?.size(), 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn init() -> Result<Dist, Error> {
        let timeout = timeout_from_env()?;
        #[cfg(feature = "mpi")]
        let dist = Dist::new(crate::mpi::Mpi::init()?);
        #[cfg(not(feature = "mpi"))]
        let dist = Dist::local();
        Ok(Dist { timeout, ..dist })
    }

    /// The same with collectives that wait at most `timeout` for the other
    /// ranks (`None`: for ever). When one waits longer (a rank stalled,
    /// stopped, or gone), the job ends (non-zero, MPI_Abort) with a
    /// message naming the operation, the step ([`set_step`](Dist::set_step))
    /// and the ranks that did not arrive; a rank that leaves
    /// [`run`](crate::run) while others still call collectives ends it at
    /// once, without waiting. Every rank should use the same timeout.
    /// Zero is an error.
    ///
    /// ```
    /// use std::time::Duration;
    /// let dist = pytree_dist::Dist::local().timeout(Some(Duration::from_secs(30)))?;
    /// assert_eq!(dist.collective_timeout(), Some(Duration::from_secs(30)));
    /// assert!(pytree_dist::Dist::local().timeout(Some(Duration::ZERO)).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn timeout(self, timeout: Option<Duration>) -> Result<Dist, Error> {
        if timeout == Some(Duration::ZERO) {
            return Err(Error::custom(
                "a timeout: expected a duration greater than zero (or None: no timeout), found 0 s",
            ));
        }
        Ok(Dist { timeout, ..self })
    }

    /// How long a collective waits for the other ranks (`None`: for ever).
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().collective_timeout(), Some(pytree_dist::DEFAULT_TIMEOUT));
    /// ```
    pub fn collective_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Says which training step the program is at, for the messages of a
    /// timeout or of a rank that left early ("all_reduce_mean (step
    /// 41)"); every handle on the same processes sees it. Without it, a
    /// message counts the collectives instead.
    ///
    /// ```
    /// let dist = pytree_dist::Dist::local();
    /// for step in 0..3 {
    ///     dist.set_step(step);
    ///     // ... the step's collectives
    /// }
    /// assert_eq!(dist.step(), Some(2));
    /// ```
    pub fn set_step(&self, step: u64) {
        self.step.set(Some(step));
        // The backend hears of it now, not only at the next operation: a
        // rank that leaves before it says at which step.
        self.watch_between();
    }

    /// The step [`set_step`](Dist::set_step) set last, if any.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().step(), None);
    /// ```
    pub fn step(&self) -> Option<u64> {
        self.step.get()
    }

    /// Tells the backend's watchdog what the collectives that follow are
    /// for ([`Backend::watch`]).
    pub(crate) fn watch(&self, op: Op) {
        self.backend
            .watch(&Watch::new(op.to_string(), self.timeout, self.step.get()));
    }

    /// [`watch`](Dist::watch) between operations (after
    /// [`set_step`](Dist::set_step)).
    fn watch_between(&self) {
        self.backend.watch(&Watch::new(
            "between collectives",
            self.timeout,
            self.step.get(),
        ));
    }

    /// The same with `sizes` (see [`Sizes`]): the one way to set the
    /// bucket and in-place sizes. For a second set of sizes in one
    /// program (MPI is initialized once per process), clone the handle
    /// first: a clone works on the same processes.
    ///
    /// ```
    /// use pytree_dist::{Dist, Sizes};
    /// use pytree_std::ndarray::array;
    /// let dist = Dist::local();
    /// // the 12-byte array in place, the 4-byte one packed
    /// let small = dist.clone().with_sizes(Sizes { bucket_bytes: 64, in_place_bytes: 8 });
    /// let mut g = (array![1.0f32, 2.0, 3.0], array![4.0f32]);
    /// small.all_reduce_mean(&mut g)?;
    /// assert_eq!(g, (array![1.0f32, 2.0, 3.0], array![4.0]));
    /// assert_eq!((dist.sizes(), small.size()), (Sizes::default(), 1));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn with_sizes(self, sizes: Sizes) -> Dist {
        Dist {
            sizes,
            plans: Plans::default(),
            ..self
        }
    }

    /// The bucket and in-place sizes.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().sizes().bucket_bytes, pytree_dist::DEFAULT_BUCKET_BYTES);
    /// ```
    pub fn sizes(&self) -> Sizes {
        self.sizes
    }

    /// This process's rank.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().rank(), 0);
    /// ```
    pub fn rank(&self) -> usize {
        self.backend.rank()
    }

    /// The number of processes.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().size(), 1);
    /// ```
    pub fn size(&self) -> usize {
        self.backend.size()
    }

    /// An error unless `root` is a rank of this world (`what`: the
    /// operation, as "broadcast from").
    pub(crate) fn ensure_rank(&self, root: usize, what: &str) -> Result<(), Error> {
        let size = self.size();
        if root >= size {
            return Err(Error::custom(format!(
                "{what} rank {root}, but the world has {size} ranks"
            )));
        }
        Ok(())
    }

    /// The backend.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().backend().name(), "local");
    /// ```
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// Ends every process of the job with `message` (MPI_Abort): what a
    /// rank that cannot go on does, so that no other rank waits for it.
    /// In a world of one: prints it and exits with status 1.
    ///
    /// ```no_run
    /// pytree_dist::Dist::local().abort("rank 0: the data is missing");
    /// ```
    pub fn abort(&self, message: &str) -> ! {
        self.backend.abort(message)
    }
}

impl Clone for Dist {
    /// Another handle on the same processes (the same backend, timeout
    /// and step), with an empty plan cache.
    ///
    /// ```
    /// let dist = pytree_dist::Dist::local();
    /// dist.set_step(3);
    /// assert_eq!(dist.clone().step(), Some(3));
    /// ```
    fn clone(&self) -> Dist {
        Dist {
            backend: self.backend.clone(),
            sizes: self.sizes,
            timeout: self.timeout,
            step: self.step.clone(),
            plans: Plans::default(),
        }
    }
}

/// The structures a handle has seen, most recent last.
#[derive(Default)]
pub(crate) struct Plans(RefCell<Vec<Cached>>);

/// A structure seen before: what it is recognized by, its hash and its
/// plan.
pub(crate) struct Cached {
    pub op: Op,
    pub def: TreeDef,
    pub signatures: Vec<Signature>,
    pub sent: Vec<bool>,
    pub hash: u64,
    pub plan: Rc<Plan>,
}

/// At most this many structures are remembered (the oldest is dropped).
const MAX_CACHED: usize = 16;

impl Plans {
    /// The hash and plan of a structure seen before.
    pub(crate) fn find(
        &self,
        op: Op,
        def: &TreeDef,
        signatures: &[Signature],
        sent: &[bool],
    ) -> Option<(u64, Rc<Plan>)> {
        self.0.borrow().iter().find_map(|c| {
            (c.op == op && c.def == *def && c.signatures == signatures && c.sent == sent)
                .then(|| (c.hash, c.plan.clone()))
        })
    }

    pub(crate) fn remember(&self, cached: Cached) {
        let mut plans = self.0.borrow_mut();
        if plans.len() == MAX_CACHED {
            plans.remove(0);
        }
        plans.push(cached);
    }
}

impl Dist {
    /// The plan of `op` on `tree` once every rank has agreed on it (from
    /// the cache when this structure was seen before): `sent(i)` says
    /// whether leaf `i` takes part, `root(i)` where it goes. The
    /// [`Sizes`](crate::Sizes) are part of what the ranks agree on (they
    /// make the plan). One all-gather of a hash for a structure seen
    /// before.
    pub(crate) fn plan<T>(
        &self,
        op: Op,
        tree: &T,
        sent: impl Fn(usize) -> bool,
        root: impl Fn(usize) -> usize,
    ) -> Result<Rc<Plan>, Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.watch(op);
        let sizes = self.sizes();
        let def = pytree_std::structure(tree);
        let mut signatures = Vec::new();
        let mut failed = false;
        for leaf in pytree_std::leaves(tree) {
            match <T::Leaf as ByteLeaf>::signature(&leaf) {
                Ok(s) => signatures.push(s),
                Err(_) => failed = true,
            };
        }
        let flags: Vec<bool> = (0..signatures.len()).map(&sent).collect();
        let hit = (!failed)
            .then(|| self.plans.find(op, &def, &signatures, &flags))
            .flatten();
        let describe = || Intent::of(op, Some(sizes), tree, true, &sent);
        let (hash, plan) = match hit {
            Some(found) => found,
            None => {
                let intent = describe();
                if let Some(e) = intent.error.clone() {
                    // Fails on every rank (this one says it failed).
                    agree(&*self.backend, intent.hash(), true, || intent)?;
                    return Err(Error::custom(e));
                }
                let specs = signatures
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        let wire = wire_of(s.dtype()).filter(|_| flags[i])?;
                        Some(LeafSpec {
                            dtype: s.dtype(),
                            shape: s.shape().to_vec(),
                            elements: s.num_elements(),
                            wire,
                            root: root(i),
                        })
                    })
                    .collect();
                let plan = Rc::new(Plan::new(specs, sizes.bucket_bytes, sizes.in_place_bytes));
                let hash = intent.hash();
                self.plans.remember(Cached {
                    op,
                    def,
                    signatures,
                    sent: flags,
                    hash,
                    plan: plan.clone(),
                });
                (hash, plan)
            }
        };
        // The one collective of a structure seen before: the hashes.
        agree(&*self.backend, hash, false, describe)?;
        Ok(plan)
    }

    /// Checks that every rank calls `op` on the same tree (structure,
    /// static data, key paths, dtypes and shapes): an error on every rank
    /// otherwise, naming the first difference. For operations that send
    /// no buckets ([`plan`](Dist::plan) agrees for those that do).
    pub(crate) fn agree_on<T>(&self, op: Op, tree: &T) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.watch(op);
        let intent = Intent::of(op, None, tree, true, |_| false);
        // A rank that failed (a leaf with no signature) makes it an error
        // on every rank, itself included.
        agree(
            &*self.backend,
            intent.hash(),
            intent.error.is_some(),
            || intent,
        )
    }

    /// Checks that every rank has the structure `def` (static data
    /// included) for `op`; an error on every rank otherwise.
    pub(crate) fn agree_structure(&self, op: Op, def: &TreeDef) -> Result<(), Error> {
        self.watch(op);
        let intent = Intent {
            op,
            sizes: None,
            def: Some(def.clone()),
            leaves: Vec::new(),
            error: None,
        };
        agree(&*self.backend, intent.hash(), false, || intent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_and_the_step_carry_over_to_other_handles_and_zero_is_an_error() {
        let d = Dist::local().timeout(Some(Duration::from_secs(5))).unwrap();
        let e = d.clone().with_sizes(Sizes {
            bucket_bytes: 64,
            ..d.sizes()
        });
        assert_eq!(e.collective_timeout(), Some(Duration::from_secs(5)));
        assert_eq!(e.step(), None);
        d.set_step(4);
        assert_eq!((d.step(), e.step()), (Some(4), Some(4)));
        assert_eq!(
            Dist::local().timeout(None).unwrap().collective_timeout(),
            None
        );
        let err = Dist::local()
            .timeout(Some(Duration::ZERO))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("expected a duration greater than zero") && err.contains("found 0 s"),
            "{err}"
        );
    }
}
