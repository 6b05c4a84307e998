//! [`Backend`]: the few collectives the tree operations are written with,
//! so that another transport (NCCL through cudarc, say) is one more impl of
//! this trait and no change to the tree code. Two impls: [`Local`], the
//! world of one, and `Mpi` (feature `mpi`).
//!
//! [`Local`]: crate::Local

use std::time::Duration;

use pytree_std::Error;

/// The element type a bucket travels as: `f32` for `f32`, `f16` and
/// `bf16` leaves (16-bit floats are summed in `f32`), `f64` for `f64`
/// leaves.
///
/// ```
/// assert_eq!(pytree_dist::Wire::F32.bytes(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wire {
    /// 32-bit floats.
    F32,
    /// 64-bit floats.
    F64,
}

impl Wire {
    /// The size of one element, in bytes.
    ///
    /// ```
    /// assert_eq!(pytree_dist::Wire::F64.bytes(), 8);
    /// ```
    pub fn bytes(self) -> usize {
        match self {
            Wire::F32 => 4,
            Wire::F64 => 8,
        }
    }
}

/// A bucket's buffer lent for packing ([`Buckets::fill`]).
///
/// ```
/// let mut xs = [0.0f32; 2];
/// if let pytree_dist::BufMut::F32(b) = pytree_dist::BufMut::F32(&mut xs) { b[0] = 1.0 }
/// assert_eq!(xs, [1.0, 0.0]);
/// ```
#[derive(Debug)]
pub enum BufMut<'a> {
    /// An `f32` bucket.
    F32(&'a mut [f32]),
    /// An `f64` bucket.
    F64(&'a mut [f64]),
}

/// A bucket's buffer lent for unpacking ([`Buckets::drain`]).
///
/// ```
/// let b = pytree_dist::BufRef::F64(&[2.0]);
/// assert!(matches!(b, pytree_dist::BufRef::F64([x]) if *x == 2.0));
/// ```
#[derive(Clone, Copy, Debug)]
pub enum BufRef<'a> {
    /// An `f32` bucket.
    F32(&'a [f32]),
    /// An `f64` bucket.
    F64(&'a [f64]),
}

/// What a run of buckets does across the ranks.
///
/// | flow | `fill` runs on | `drain` runs on, with |
/// | --- | --- | --- |
/// | `SumToAll` (all-reduce) | every rank | every rank, the sum |
/// | `SumToRoot` (reduce) | every rank | the bucket's root, the sum |
/// | `FromRoot` (broadcast) | the bucket's root | every other rank, the root's bucket |
/// | `SumScatter` (reduce-scatter) | every rank, the whole bucket | every rank, the sum of its [part](Bucket::part) |
/// | `Gather` (all-gather) | every rank, its part | every rank, the whole bucket |
///
/// Every bucket of the last two is packed (`in_place: false`): a backend
/// refuses an in-place one.
///
/// ```
/// assert_ne!(pytree_dist::Flow::SumToAll, pytree_dist::Flow::FromRoot);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Every rank's bucket summed; the sum on every rank.
    SumToAll,
    /// Every rank's bucket summed onto the bucket's root.
    SumToRoot,
    /// The root's bucket copied to every other rank.
    FromRoot,
    /// Every rank's bucket summed; each rank receives its
    /// [part](Bucket::part) of the sum only (ZeRO's reduce-scatter: half
    /// the traffic of an all-reduce).
    SumScatter,
    /// Each rank's [part](Bucket::part) of the bucket; the whole bucket on
    /// every rank (the all-gather that completes a reduce-scatter).
    Gather,
}

impl Flow {
    /// Whether `rank` packs bucket `root`'s data in this flow.
    ///
    /// ```
    /// use pytree_dist::Flow;
    /// assert!(Flow::SumToRoot.fills(1, 0) && !Flow::FromRoot.fills(1, 0));
    /// ```
    pub fn fills(self, rank: usize, root: usize) -> bool {
        self != Flow::FromRoot || rank == root
    }

    /// Whether `rank` sends or receives only its [part](Bucket::part) of
    /// each bucket: its fill in [`Gather`](Flow::Gather), its drain in
    /// [`SumScatter`](Flow::SumScatter).
    ///
    /// ```
    /// use pytree_dist::Flow;
    /// assert!(Flow::Gather.scatters() && !Flow::SumToAll.scatters());
    /// ```
    pub fn scatters(self) -> bool {
        matches!(self, Flow::SumScatter | Flow::Gather)
    }

    /// Whether `rank` receives the result of a bucket with root `root`.
    ///
    /// ```
    /// use pytree_dist::Flow;
    /// assert!(Flow::SumToAll.drains(1, 0) && !Flow::SumToRoot.drains(1, 0) && Flow::FromRoot.drains(1, 0));
    /// ```
    pub fn drains(self, rank: usize, root: usize) -> bool {
        match self {
            Flow::SumToAll | Flow::SumScatter | Flow::Gather => true,
            Flow::SumToRoot => rank == root,
            Flow::FromRoot => rank != root,
        }
    }
}

/// One bucket of a run: its element type, its length, its root (the
/// rank that receives a [`Flow::SumToRoot`] sum or sends a
/// [`Flow::FromRoot`] copy; ignored by [`Flow::SumToAll`]) and whether it
/// is reduced where it lies.
///
/// A packed bucket (`in_place: false`) travels through a buffer of the
/// backend's: [`Buckets::fill`] packs it, [`Buckets::drain`] unpacks the
/// result. An in-place bucket is a piece of one leaf whose memory already
/// holds the elements as the wire has them (a contiguous `f32` or `f64`
/// array): [`Buckets::in_place`] lends that memory to the collective,
/// which leaves its result there, so nothing is copied.
///
/// ```
/// let b = pytree_dist::Bucket { wire: pytree_dist::Wire::F32, len: 10, root: 0, in_place: false };
/// assert_eq!(b.len * b.wire.bytes(), 40);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bucket {
    /// The element type.
    pub wire: Wire,
    /// The number of elements.
    pub len: usize,
    /// The root rank.
    pub root: usize,
    /// Reduced in the memory [`Buckets::in_place`] lends, not packed.
    pub in_place: bool,
}

impl Bucket {
    /// The elements of `rank`'s part of the bucket in a
    /// [`SumScatter`](Flow::SumScatter) or [`Gather`](Flow::Gather) over
    /// `ranks` ranks: `len * rank / ranks .. len * (rank + 1) / ranks`, so
    /// that the parts are consecutive and differ in length by one element
    /// at most.
    ///
    /// ```
    /// let b = pytree_dist::Bucket { wire: pytree_dist::Wire::F32, len: 10, root: 0, in_place: false };
    /// assert_eq!([b.part(0, 3), b.part(1, 3), b.part(2, 3)], [0..3, 3..6, 6..10]);
    /// ```
    pub fn part(&self, rank: usize, ranks: usize) -> std::ops::Range<usize> {
        let at = |r: usize| (self.len as u128 * r as u128 / ranks.max(1) as u128) as usize;
        at(rank)..at(rank + 1)
    }
}

/// The buckets of one collective, packed and unpacked on demand, so that a
/// backend fills bucket `k + 1` (and drains bucket `k - 1`) while bucket
/// `k` is on the wire. Every rank's run must list the same buckets (the
/// tree operations agree on them first).
///
/// A backend calls [`fill`](Buckets::fill) and [`drain`](Buckets::drain)
/// for packed buckets only, and [`in_place`](Buckets::in_place) for
/// in-place ones only ([`Bucket::in_place`]).
///
/// ```
/// use pytree_dist::{Backend, BufMut, BufRef, Bucket, Buckets, Flow, Local, Wire};
/// struct Two { data: Vec<f32>, big: Vec<f32> }
/// impl Buckets for Two {
///     fn buckets(&self) -> Vec<Bucket> {
///         let packed = Bucket { wire: Wire::F32, len: 1, root: 0, in_place: false };
///         let big = Bucket { len: self.big.len(), in_place: true, ..packed };
///         vec![packed, packed, big]
///     }
///     fn fill(&mut self, k: usize, buf: BufMut<'_>) -> Result<(), pytree_std::Error> {
///         if let BufMut::F32(b) = buf { b[0] = self.data[k] }
///         Ok(())
///     }
///     fn drain(&mut self, k: usize, buf: BufRef<'_>) -> Result<(), pytree_std::Error> {
///         if let BufRef::F32(b) = buf { self.data[k] = b[0] * 10.0 }
///         Ok(())
///     }
///     fn in_place(
///         &mut self,
///         _k: usize,
///         result: bool,
///         collective: &mut dyn FnMut(BufMut<'_>) -> Result<(), pytree_std::Error>,
///     ) -> Result<(), pytree_std::Error> {
///         collective(BufMut::F32(&mut self.big))?;
///         if result {
///             self.big.iter_mut().for_each(|x| *x += 0.5);
///         }
///         Ok(())
///     }
/// }
/// let mut two = Two { data: vec![1.0, 2.0], big: vec![3.0; 4] };
/// Local.run(Flow::SumToAll, &mut two)?;
/// assert_eq!((two.data, two.big), (vec![10.0, 20.0], vec![3.5; 4]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait Buckets {
    /// The buckets, in the order they are sent.
    fn buckets(&self) -> Vec<Bucket>;
    /// Packs bucket `k` into `buf` (exactly its length; in a
    /// [`Gather`](Flow::Gather), exactly this rank's [part](Bucket::part)
    /// of it).
    fn fill(&mut self, k: usize, buf: BufMut<'_>) -> Result<(), Error>;
    /// Unpacks the result of bucket `k` from `buf` (exactly its length; in
    /// a [`SumScatter`](Flow::SumScatter), this rank's part of it).
    fn drain(&mut self, k: usize, buf: BufRef<'_>) -> Result<(), Error>;
    /// Runs in-place bucket `k`: calls `collective` once with the
    /// bucket's memory (exactly its length, holding this rank's
    /// elements), which does the collective there; then, if `result`
    /// (this rank receives the result: where [`Flow::drains`] holds),
    /// takes what `collective` left in it as the bucket's result. An
    /// implementation that cannot lend the leaf's own memory (a leaf
    /// that is not contiguous) lends a copy and writes the result back.
    ///
    /// The default: an error (a `Buckets` that lists no in-place bucket
    /// need not implement it).
    ///
    /// ```
    /// use pytree_dist::{BufMut, BufRef, Bucket, Buckets};
    /// struct None_;
    /// impl Buckets for None_ {
    ///     fn buckets(&self) -> Vec<Bucket> { Vec::new() }
    ///     fn fill(&mut self, _: usize, _: BufMut<'_>) -> Result<(), pytree_std::Error> { Ok(()) }
    ///     fn drain(&mut self, _: usize, _: BufRef<'_>) -> Result<(), pytree_std::Error> { Ok(()) }
    /// }
    /// assert!(None_.in_place(0, true, &mut |_| Ok(())).is_err());
    /// ```
    fn in_place(
        &mut self,
        k: usize,
        result: bool,
        collective: &mut dyn FnMut(BufMut<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let _ = (result, collective);
        Err(Error::custom(format!(
            "bucket {k} is in place, but these buckets lend no memory"
        )))
    }
    /// For a [`SumScatter`](Flow::SumScatter) or a [`Gather`](Flow::Gather):
    /// calls `collective` once, with the memory where the buckets' elements
    /// lie ([`Direct`]) if every one of them lies in memory of its wire
    /// type, else with `None`; returns what `collective` returns: `true`
    /// if it ran the flow in that memory (then [`fill`](Buckets::fill) and
    /// [`drain`](Buckets::drain) are not called), `false` if the backend
    /// runs it through its buffers instead (every rank must choose alike,
    /// so a backend agrees on it first: one rank's `None` sends all
    /// through the buffers).
    ///
    /// The default lends nothing: `collective(None)`.
    ///
    /// ```
    /// use pytree_dist::{BufMut, BufRef, Bucket, Buckets};
    /// struct Nothing;
    /// impl Buckets for Nothing {
    ///     fn buckets(&self) -> Vec<Bucket> { Vec::new() }
    ///     fn fill(&mut self, _: usize, _: BufMut<'_>) -> Result<(), pytree_std::Error> { Ok(()) }
    ///     fn drain(&mut self, _: usize, _: BufRef<'_>) -> Result<(), pytree_std::Error> { Ok(()) }
    /// }
    /// assert!(!Nothing.direct(&mut |lent| Ok(lent.is_some()))?);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn direct(
        &mut self,
        collective: &mut dyn FnMut(Option<Direct<'_>>) -> Result<bool, Error>,
    ) -> Result<bool, Error> {
        collective(None)
    }
}

/// The memory of a [`SumScatter`](Flow::SumScatter)'s or a
/// [`Gather`](Flow::Gather)'s buckets where their elements lie
/// ([`Buckets::direct`]), so that a backend sends from it and receives
/// into it with nothing packed: for a ZeRO step, the gradients' and the
/// parameters' own leaves and the shard's.
///
/// `whole[k]` is bucket `k`'s elements in order, as runs of its wire type
/// (one per piece of a leaf, say) that together are exactly the bucket;
/// `part[k]` is this rank's [part](Bucket::part) of it, as the runs of
/// `whole[k]` cut at the part's ends (the same cuts on every rank, so
/// that one rank's message is another's receive). In a `SumScatter`,
/// `whole` is read and `part` receives the sum, divided by `divisor`; in a
/// `Gather`, `part` is sent and `whole` receives every part (this rank's
/// copied from `part`).
///
/// ```
/// use pytree_dist::{BufMut, Direct};
/// let (mut a, mut b) = ([1.0f32, 2.0], [0.0f32]);
/// let d = Direct { whole: vec![vec![BufMut::F32(&mut a)]], part: vec![vec![BufMut::F32(&mut b)]], divisor: None };
/// assert_eq!((d.whole.len(), d.part[0].len()), (1, 1));
/// ```
#[derive(Debug)]
pub struct Direct<'m> {
    /// By bucket, its elements as runs in order.
    pub whole: Vec<Vec<BufMut<'m>>>,
    /// By bucket, this rank's part as runs in order.
    pub part: Vec<Vec<BufMut<'m>>>,
    /// A `SumScatter`'s sums are divided by this (a mean).
    pub divisor: Option<usize>,
}

/// The collectives the tree operations use: a transport between the
/// processes of one job, each of which has a rank in `0..size`.
///
/// Every rank must make the same calls in the same order, as with MPI;
/// [`Dist`](crate::Dist) checks that the trees agree before it calls
/// [`run`](Backend::run), so that a rank that would send other buckets
/// gets an error instead of a hang.
///
/// ```
/// use pytree_dist::{Backend, Local};
/// assert_eq!((Local.rank(), Local.size()), (0, 1));
/// assert_eq!(Local.all_gather(b"hi")?, [b"hi".to_vec()]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait Backend {
    /// This process's rank, in `0..size()`.
    fn rank(&self) -> usize;
    /// The number of processes.
    fn size(&self) -> usize;
    /// A name for messages (`"mpi"`, `"local"`).
    fn name(&self) -> &'static str;
    /// Runs the buckets through `flow`, in their order on every rank:
    /// packed buckets pipelined (a bucket is packed while the one before
    /// it is on the wire), in-place buckets in the memory
    /// [`Buckets::in_place`] lends. An error of `fill`, `drain` or
    /// `in_place` cannot be taken back once other ranks are inside the
    /// collective: a backend with more than one rank ends the job
    /// ([`abort`](Backend::abort)) with it.
    fn run(&self, flow: Flow, buckets: &mut dyn Buckets) -> Result<(), Error>;
    /// Every rank's bytes (of any length), in rank order.
    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, Error>;
    /// `bytes` of rank `root` on every rank (resized to it).
    fn broadcast(&self, bytes: &mut Vec<u8>, root: usize) -> Result<(), Error>;
    /// Ends every process of the job at once with `message` printed
    /// (MPI_Abort): what a failed rank does so that the others are not left
    /// waiting in a collective.
    fn abort(&self, message: &str) -> !;
    /// Says what the collectives that follow are for and how long each may
    /// wait for the other ranks: [`Dist`](crate::Dist) calls it before
    /// each operation. A backend with a watchdog (`Mpi`) ends the job when
    /// a collective waits longer than [`Watch::timeout`], with a message
    /// naming [`Watch::op`], [`Watch::step`] and the ranks that did not
    /// arrive. The default does nothing (a world of one waits for nobody).
    ///
    /// ```
    /// use pytree_dist::{Backend, Local, Watch};
    /// Local.watch(&Watch::new("all_reduce_mean", None, Some(3)));
    /// ```
    fn watch(&self, watch: &Watch) {
        let _ = watch;
    }
    /// This rank leaves the job ([`run`](crate::run) calls it when its
    /// `main` returns `Ok`): it tells the other ranks, so that a rank still
    /// calling collectives learns that this one will not come and ends the
    /// job instead of waiting, then waits (at most the timeout of the last
    /// [`watch`](Backend::watch)) for every other rank to leave. The
    /// default does nothing.
    ///
    /// ```
    /// use pytree_dist::{Backend, Local};
    /// Local.leave()?;
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn leave(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// What a backend's watchdog knows of the collectives that follow
/// ([`Backend::watch`]): the operation, how long a collective may wait for
/// the other ranks, and the training step when the program said it
/// ([`Dist::set_step`](crate::Dist::set_step)).
///
/// ```
/// use std::time::Duration;
/// let w = pytree_dist::Watch::new("broadcast from rank 0", Some(Duration::from_secs(5)), Some(2));
/// assert_eq!(w.to_string(), "broadcast from rank 0 (step 2)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watch {
    /// The operation (`"all_reduce_mean"`, `"broadcast from rank 0"`).
    pub op: String,
    /// How long one collective may wait for the other ranks; `None`: for
    /// ever.
    pub timeout: Option<Duration>,
    /// The training step, if the program set one.
    pub step: Option<u64>,
}

impl Watch {
    /// A watch of `op` with `timeout` at `step`.
    ///
    /// ```
    /// let w = pytree_dist::Watch::new("check_replicated", None, None);
    /// assert_eq!((w.timeout, w.step), (None, None));
    /// ```
    pub fn new(op: impl Into<String>, timeout: Option<Duration>, step: Option<u64>) -> Watch {
        Watch {
            op: op.into(),
            timeout,
            step,
        }
    }
}

impl std::fmt::Display for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.op)?;
        if let Some(step) = self.step {
            write!(f, " (step {step})")?;
        }
        Ok(())
    }
}
