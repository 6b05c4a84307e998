//! [`Dist`]: the tree collectives of one job (all-reduce, broadcast, the
//! replication check) over a [`Backend`], with the bucket plans of the
//! trees it has seen.

use std::cell::{Cell, RefCell};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::rc::Rc;
use std::time::Duration;

use pytree_optim::Mask;
use pytree_std::checkpoint::{Load, Save, TensorLeaf, TensorView};
use pytree_std::{Error, Flatten, Signature, Std, TreeDef, Unflatten};

use crate::agree::{agree, Intent};
use crate::backend::{Backend, Flow, Watch};
use crate::local::Local;
use crate::plan::{wire_of, LeafSpec, Plan, TreeBuckets};
use crate::timeout::{timeout_from_env, DEFAULT_TIMEOUT};

/// The bucket size of [`Dist::new`]: 25 MiB, as PyTorch's DDP.
///
/// ```
/// assert_eq!(pytree_dist::DEFAULT_BUCKET_BYTES, 25 << 20);
/// ```
pub const DEFAULT_BUCKET_BYTES: usize = 25 << 20;

/// The in-place size of [`Dist::new`]: a float leaf of at least 1 MiB
/// whose elements are what the wire sends (`f32`, `f64`) is reduced in
/// its own memory, not packed ([`Dist::in_place_bytes`]).
///
/// ```
/// assert_eq!(pytree_dist::DEFAULT_IN_PLACE_BYTES, 1 << 20);
/// ```
pub const DEFAULT_IN_PLACE_BYTES: usize = 1 << 20;

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
    backend: Rc<dyn Backend>,
    bucket_bytes: usize,
    in_place_bytes: usize,
    timeout: Option<Duration>,
    /// The step [`Dist::set_step`] set, shared by every handle on the
    /// same backend.
    step: Rc<Cell<Option<u64>>>,
    plans: RefCell<Vec<Cached>>,
}

/// A structure seen before: the key it is recognized by, its hash and
/// its plan.
struct Cached {
    op: String,
    def: TreeDef,
    signatures: Vec<Signature>,
    sent: Vec<bool>,
    hash: u64,
    plan: Rc<Plan>,
}

/// At most this many structures are remembered (the oldest is dropped).
const MAX_CACHED: usize = 16;

impl std::fmt::Debug for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dist")
            .field("backend", &self.backend.name())
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("bucket_bytes", &self.bucket_bytes)
            .field("in_place_bytes", &self.in_place_bytes)
            .field("timeout", &self.timeout)
            .field("step", &self.step.get())
            .finish()
    }
}

impl Dist {
    /// The tree operations over `backend`, with buckets of
    /// [`DEFAULT_BUCKET_BYTES`], leaves of [`DEFAULT_IN_PLACE_BYTES`]
    /// or more reduced in place, and collectives that wait at most
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
            bucket_bytes: DEFAULT_BUCKET_BYTES,
            in_place_bytes: DEFAULT_IN_PLACE_BYTES,
            timeout: Some(DEFAULT_TIMEOUT),
            step: Rc::new(Cell::new(None)),
            plans: RefCell::new(Vec::new()),
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
        self.watch("between collectives");
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
    pub(crate) fn watch(&self, op: &str) {
        self.backend
            .watch(&Watch::new(op, self.timeout, self.step.get()));
    }

    /// The same with buckets of at most `bytes` bytes (at least one
    /// element); every rank must use the same size (it is part of what
    /// the ranks check).
    ///
    /// ```
    /// let dist = pytree_dist::Dist::local().bucket_bytes(1 << 20);
    /// assert_eq!(dist.bucket_size(), 1 << 20);
    /// ```
    pub fn bucket_bytes(self, bytes: usize) -> Dist {
        self.with_sizes(bytes, self.in_place_bytes)
    }

    /// The same with float leaves of at least `bytes` bytes reduced in
    /// their own memory: a leaf whose elements are what the wire sends
    /// (`f32`, `f64`; not `f16` / `bf16`, which are summed in `f32`) is a
    /// bucket of its own, and the collective runs where it lies, with
    /// nothing copied in or out (on MPI: `MPI_IN_PLACE`). Smaller leaves
    /// are packed into buckets, where one collective serves many.
    /// `usize::MAX`: every leaf packed. A leaf whose memory is not
    /// contiguous in C order on some rank (an array in another order, a
    /// candle tensor) goes through a copy there, with the same collective.
    /// Every rank must use the same size (checked with the tree).
    ///
    /// ```
    /// use pytree_std::ndarray::array;
    /// let dist = pytree_dist::Dist::local().in_place_bytes(8);
    /// assert_eq!(dist.in_place_size(), 8);
    /// // the 12-byte array in place, the 4-byte one packed
    /// let mut g = (array![1.0f32, 2.0, 3.0], array![4.0f32]);
    /// dist.all_reduce_mean(&mut g)?;
    /// assert_eq!(g, (array![1.0f32, 2.0, 3.0], array![4.0]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn in_place_bytes(self, bytes: usize) -> Dist {
        self.with_sizes(self.bucket_bytes, bytes)
    }

    /// Another handle on the same processes (the same backend) with
    /// buckets of `bytes` bytes: a second bucket size in one program (MPI
    /// is initialized once per process).
    ///
    /// ```
    /// let dist = pytree_dist::Dist::local();
    /// let small = dist.with_bucket_bytes(64);
    /// assert_eq!((small.bucket_size(), small.size()), (64, 1));
    /// ```
    pub fn with_bucket_bytes(&self, bytes: usize) -> Dist {
        self.with_sizes(bytes, self.in_place_bytes)
    }

    /// Another handle on the same processes with bucket size
    /// `bucket_bytes` and in-place size `in_place_bytes`
    /// ([`in_place_bytes`](Dist::in_place_bytes)).
    ///
    /// ```
    /// let dist = pytree_dist::Dist::local();
    /// let packed = dist.with_sizes(64, usize::MAX); // every leaf through 64-byte buckets
    /// assert_eq!((packed.bucket_size(), packed.in_place_size()), (64, usize::MAX));
    /// ```
    pub fn with_sizes(&self, bucket_bytes: usize, in_place_bytes: usize) -> Dist {
        Dist {
            backend: self.backend.clone(),
            bucket_bytes,
            in_place_bytes,
            timeout: self.timeout,
            step: self.step.clone(),
            plans: RefCell::new(Vec::new()),
        }
    }

    /// The bucket size in bytes.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().bucket_size(), pytree_dist::DEFAULT_BUCKET_BYTES);
    /// ```
    pub fn bucket_size(&self) -> usize {
        self.bucket_bytes
    }

    /// The in-place size in bytes: float leaves of at least this many
    /// bytes are reduced in their own memory.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Dist::local().in_place_size(), pytree_dist::DEFAULT_IN_PLACE_BYTES);
    /// ```
    pub fn in_place_size(&self) -> usize {
        self.in_place_bytes
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
    fn ensure_rank(&self, root: usize, what: &str) -> Result<(), Error> {
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
        T::Leaf: TensorLeaf,
    {
        self.all_reduce(tree, None, false)
    }

    /// Averages the float leaves of `tree` over all ranks, in place: what a
    /// data-parallel step does to the gradients (each rank's gradient of its
    /// share of the batch) before the optimizer.
    ///
    /// The float leaves (`f32`, `f64`, `f16`, `bf16`: scalars, ndarray
    /// arrays, candle tensors and variables on the CPU) are summed in
    /// buckets of at most [`bucket_size`](Dist::bucket_size) bytes:
    /// - an `f32` or `f64` leaf of at least
    ///   [`in_place_size`](Dist::in_place_size) bytes (1 MiB: the weight
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
    /// pytree_dist::Dist::local().bucket_bytes(4).all_reduce_mean(&mut g)?; // three buckets
    /// assert_eq!(g, vec![array![1.0f32, 2.0], array![3.0f32]]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn all_reduce_mean<T>(&self, tree: &mut T) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
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
        T::Leaf: TensorLeaf,
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
        T::Leaf: TensorLeaf,
    {
        let size = self.size();
        self.ensure_rank(root, "reduce to")?;
        let op = format!("reduce_mean to rank {root}");
        let plan = self.agreed_plan(op, &*tree, true, |_| true, |_| root)?;
        let divisor = (size > 1).then_some(size);
        self.run_plan(Flow::SumToRoot, tree, &plan, divisor)
    }

    fn all_reduce<T>(&self, tree: &mut T, mask: Option<&Mask>, mean: bool) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let op = format!(
            "all_reduce_{}{}",
            if mean { "mean" } else { "sum" },
            if mask.is_some() { ", masked" } else { "" }
        );
        let bits = mask.map(|m| m.on(&*tree));
        let sent = |i: usize| bits.as_ref().is_none_or(|b| b.get(i));
        let plan = self.agreed_plan(op, &*tree, true, sent, |_| 0)?;
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
        T::Leaf: TensorLeaf,
    {
        let mut buckets = TreeBuckets::new(tree, plan, divisor);
        self.backend.run(flow, &mut buckets)
    }

    /// The plan of `op` on `tree` once every rank has agreed on it (from
    /// the cache when this structure was seen before): `sent(i)` says
    /// whether leaf `i` takes part, `root(i)` where it goes. The bucket
    /// and in-place sizes are part of what the ranks agree on (they make
    /// the plan).
    pub(crate) fn agreed_plan<T>(
        &self,
        op: String,
        tree: &T,
        with_def: bool,
        sent: impl Fn(usize) -> bool,
        root: impl Fn(usize) -> usize,
    ) -> Result<Rc<Plan>, Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        self.watch(&op);
        let op = format!(
            "{op} ({} byte buckets, {})",
            self.bucket_bytes,
            match self.in_place_bytes {
                usize::MAX => "none in place".to_string(),
                n => format!("in place from {n} bytes"),
            }
        );
        let def = pytree_std::structure(tree);
        let mut signatures = Vec::new();
        let mut failed = false;
        for leaf in pytree_std::leaves(tree) {
            match <T::Leaf as TensorLeaf>::tensor_signature(&leaf) {
                Ok(s) => signatures.push(s),
                Err(_) => failed = true,
            };
        }
        let flags: Vec<bool> = (0..signatures.len()).map(&sent).collect();
        let hit = (!failed)
            .then(|| {
                self.plans.borrow().iter().find_map(|c| {
                    (c.op == op && c.def == def && c.signatures == signatures && c.sent == flags)
                        .then(|| (c.hash, c.plan.clone()))
                })
            })
            .flatten();
        let describe = || Intent::of(op.clone(), tree, with_def, &sent);
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
                let plan = Rc::new(Plan::new(specs, self.bucket_bytes, self.in_place_bytes));
                let hash = intent.hash();
                let mut plans = self.plans.borrow_mut();
                if plans.len() == MAX_CACHED {
                    plans.remove(0);
                }
                plans.push(Cached {
                    op: op.clone(),
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

    /// Checks that every rank has the structure `def` (static data
    /// included) for `op`; an error on every rank otherwise.
    pub(crate) fn agree_structure(&self, op: &str, def: &TreeDef) -> Result<(), Error> {
        self.watch(op);
        let intent = Intent {
            op: op.to_string(),
            def: Some(def.clone()),
            leaves: Vec::new(),
            error: None,
        };
        agree(&*self.backend, intent.hash(), false, || intent)
    }

    /// Copies `tree` of rank `root` to every rank, in place: leaves (of any
    /// dtype, integers included) and static data (an optimizer state's
    /// step count), so that every rank starts from the same parameters and
    /// state. The leaves are written into the existing ones (a candle
    /// variable stays the same variable); the ranks' trees must have the
    /// same leaves (key paths, dtypes, shapes: checked, an error on every
    /// rank otherwise); their static data may differ and becomes the
    /// root's, when serde can write it (numbers, strings, bools: what a
    /// checkpoint's TreeDef holds); static data of other types (a user's
    /// enum) must be equal on every rank already, and is checked to be. A
    /// `#[pytree(skip)]` field of a receiving rank becomes its `Default`
    /// when the static data differed.
    ///
    /// The tree travels as one safetensors file in memory (the TreeDef,
    /// with its static data, in its metadata), the format
    /// `pytree_std::checkpoint` writes.
    ///
    /// ```
    /// use pytree_optim::{adam, GradientTransformation};
    /// let dist = pytree_dist::Dist::local();
    /// let mut params = vec![1.0f32, 2.0];
    /// let mut state = adam(0.1).init(&params)?;
    /// dist.broadcast(&mut params, 0)?;
    /// dist.broadcast(&mut state, 0)?;
    /// assert_eq!(params, [1.0, 2.0]);
    /// assert!(dist.broadcast(&mut params, 1).is_err()); // no rank 1 in a world of one
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn broadcast<T>(&self, tree: &mut T, root: usize) -> Result<(), Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        self.ensure_rank(root, "broadcast from")?;
        let rank = self.rank();
        let op = format!("broadcast from rank {root}");
        self.watch(&op);
        // Static data travels when serde can write it; otherwise it must
        // be equal on every rank already (checked with the rest).
        let def = pytree_std::structure(&*tree);
        let statics_travel = serde_json::to_string(&def).is_ok();
        let mut intent = Intent::of(op, &*tree, !statics_travel, |_| true);
        let mut bytes = Vec::new();
        if rank == root && intent.error.is_none() {
            match encode(&*tree, statics_travel) {
                Ok(b) => bytes = b,
                Err(e) => intent.error = Some(e.to_string()),
            }
        }
        agree(
            &*self.backend,
            intent.hash(),
            intent.error.is_some(),
            || intent,
        )?;
        self.backend.broadcast(&mut bytes, root)?;
        if rank == root {
            return Ok(());
        }
        decode_into(tree, bytes)
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
        T::Leaf: TensorLeaf,
    {
        self.watch("check_replicated");
        let mut hashes = Vec::new();
        let mut h = DefaultHasher::new();
        pytree_std::structure(tree).hash(&mut h);
        hashes.extend_from_slice(&h.finish().to_le_bytes());
        let mut error = None;
        for leaf in pytree_std::leaves(tree) {
            let mut h = DefaultHasher::new();
            match <T::Leaf as TensorLeaf>::tensor_bytes(&leaf) {
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

/// `tree` as the bytes of a safetensors file, with its TreeDef (and so the
/// static data) in the metadata if `with_statics`; a tree that is one
/// leaf (no name to give it, no static data) as that leaf's bytes.
fn encode<T>(tree: &T, with_statics: bool) -> Result<Vec<u8>, Error>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    if pytree_std::structure(tree).is_leaf() {
        let leaves = pytree_std::leaves(tree);
        return Ok(<T::Leaf as TensorLeaf>::tensor_bytes(&leaves[0])?.into_owned());
    }
    if with_statics {
        Save::new().require_treedef().to_bytes(tree)
    } else {
        Save::new().to_bytes(tree)
    }
}

/// Writes the file of [`encode`] into `tree`: its leaves in place, then
/// its static data (the tree rebuilt around the same leaves when the
/// TreeDef differs).
fn decode_into<T>(tree: &mut T, bytes: Vec<u8>) -> Result<(), Error>
where
    T: Unflatten<Std>,
    T::Leaf: TensorLeaf,
{
    if pytree_std::structure(&*tree).is_leaf() {
        let sig = <T::Leaf as TensorLeaf>::tensor_signature(&pytree_std::leaves(&*tree)[0])?;
        let view = TensorView::new("", sig.dtype(), sig.shape(), &bytes)?;
        let leaf = pytree_std::leaves_mut(tree)
            .pop()
            .ok_or_else(|| Error::custom("a tree that is a leaf has one leaf"))?;
        return <T::Leaf as TensorLeaf>::copy_from_tensor(leaf, &view);
    }
    let file = Load::new().from_bytes(bytes)?;
    let def = file.treedef()?;
    file.load_into(tree)?;
    if let Some(def) = def.filter(|d| *d != pytree_std::structure(&*tree)) {
        let leaves: Vec<T::Leaf> = pytree_std::leaves(&*tree)
            .iter()
            .map(<T::Leaf as TensorLeaf>::to_owned_leaf)
            .collect();
        *tree = pytree_std::unflatten(&def, leaves)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pytree_optim::{adam, GradientTransformation};
    use pytree_std::ndarray::{array, Array1};

    #[test]
    fn the_timeout_and_the_step_carry_over_to_other_handles_and_zero_is_an_error() {
        let d = Dist::local().timeout(Some(Duration::from_secs(5))).unwrap();
        let e = d.with_bucket_bytes(64);
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

    #[test]
    fn a_broadcast_file_writes_leaves_and_static_data_in_place() {
        let opt = adam(0.1);
        let mut p = array![1.0f32, 2.0];
        let mut sent = opt.init(&p).unwrap();
        for _ in 0..3 {
            opt.step(&mut p, &mut array![0.5, -0.5], &mut sent).unwrap();
        }
        let mut got = opt.init(&Array1::<f32>::zeros(2)).unwrap();
        decode_into(&mut got, encode(&sent, true).unwrap()).unwrap();
        assert_eq!(
            (got.0.count, &got.0.mu, &got.0.nu),
            (3, &sent.0.mu, &sent.0.nu)
        );
        // A leaf at the root has a name too.
        let mut x = Array1::<f32>::zeros(2);
        decode_into(&mut x, encode(&p, true).unwrap()).unwrap();
        assert_eq!(x, p);
        // Another shape: an error naming the path, nothing changed.
        let mut wrong = (Array1::<f32>::zeros(3),);
        let err = decode_into(&mut wrong, encode(&(p.clone(),), true).unwrap()).unwrap_err();
        assert!(
            err.to_string().contains("expected f32[3], found f32[2]"),
            "{err}"
        );
        assert_eq!(wrong.0, Array1::<f32>::zeros(3));
    }
}
