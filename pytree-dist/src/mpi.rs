//! [`Mpi`]: the backend over MPI, through rsmpi (feature `mpi`). Started
//! by `mpirun -np N` (or `srun`), it is a world of `N`; started without a
//! launcher, Open MPI (and MPICH) initialize a *singleton*: a world of one,
//! through the same code.
//!
//! Packed buckets run through the non-blocking collectives
//! (`MPI_Iallreduce`, `MPI_Ireduce`, `MPI_Ibcast`), two in a pipeline:
//! bucket `k + 1` is packed and bucket `k - 1` unpacked while bucket `k`
//! is on the wire. rsmpi's safe `immediate_*` calls tie a request to a
//! scope for the buffers' whole lifetime, which does not let one pair of
//! buffers serve every other bucket, so those three calls are made
//! through `mpi::ffi`, each request waited before its buffers are touched
//! again (`InFlight`).
//!
//! In-place buckets (a leaf's own memory) run through the blocking
//! collectives with `MPI_IN_PLACE` (`MPI_Allreduce`, `MPI_Reduce`;
//! `MPI_Bcast` needs none), while the packed bucket before them stays on
//! the wire. Blocking, because there is nothing to pack meanwhile, and
//! because Open MPI 4.1's non-blocking all-reduce copies an in-place
//! buffer into a temporary one at 2 ranks (libnbc's binomial schedule,
//! `allred_sched_diss`): GPT-2 small's 498 MB took 2.2 s that way against
//! 1.2 s blocking (BENCHMARKS.md, issue 26). A blocking call also
//! progresses the packed bucket still in flight. `MPI_IN_PLACE` is a
//! macro whose value differs between MPI libraries and rsmpi 0.8 does not
//! export it: `src/mpi_in_place.c`, compiled by the build script against
//! the same `mpi.h`, returns it.
//!
//! A reduce-scatter (`Flow::SumScatter`) and an all-gather
//! (`Flow::Gather`) are point-to-point messages (`MPI_Isend`, `MPI_Irecv`)
//! on a duplicate of the world, not `MPI_Ireduce_scatter` and
//! `MPI_Iallgatherv`: each rank sends every other rank that rank's part
//! of the bucket and receives the others' contributions to its own part,
//! then sums them in rank order (`0, 1, ..., N-1`, its own in its place:
//! the same order on every run, and for 2 ranks the bits of `a + b`); an
//! all-gather sends its part to every other rank and receives theirs
//! straight into place. Per rank that is `(N-1)/N` of the bucket each way,
//! like a ring, and the pair moves the bytes of an all-reduce; Open MPI
//! 4.1's non-blocking collectives (libnbc) took twice an all-reduce's time
//! for the pair at 2 ranks on GPT-2 small, the messages about as long as
//! one (issue 38, `benches/examples/allreduce_gpt2.rs`). Where every
//! rank's buckets lend the memory their elements lie in
//! ([`Buckets::direct`]: ZeRO's gradients, parameters and shard), the
//! messages go from and into it, one per run, with nothing packed (module
//! `direct`).
//!
//! No collective waits for ever (module `watchdog`): the all-gathers and
//! broadcasts of bytes are non-blocking too, every request is waited by
//! `MPI_Test` in a loop bounded by the timeout, and the in-place buckets'
//! blocking calls run under an alarm thread.

use std::cell::RefCell;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use mpi::environment::Universe;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Equivalence};
use pytree_std::Error;

use crate::backend::{Backend, Bucket, Buckets, BufMut, BufRef, Flow, Watch, Wire};
use crate::plan::WireElement;
use crate::timeout::DEFAULT_TIMEOUT;
use crate::watchdog::{abort_world, Watchdog};

mod direct;

extern "C" {
    /// `MPI_IN_PLACE` of the MPI library this crate was built against
    /// (`src/mpi_in_place.c`).
    fn pytree_dist_mpi_in_place() -> *mut std::ffi::c_void;
}

/// Whether MPI is initialized and not finalized (the panic hook aborts
/// through it only then).
static LIVE: AtomicBool = AtomicBool::new(false);

/// The MPI backend: `MPI_COMM_WORLD` of the job this process belongs to.
///
/// Creating it initializes MPI (`MPI_Init_thread`, funneled: only the
/// thread that created it calls MPI, other threads may compute), and
/// dropping it finalizes MPI (after telling the other ranks that this
/// one leaves, as [`run`](crate::run) does); a process may do that once. In a world of
/// more than one rank, it installs a panic hook that prints the panic with
/// the rank and ends the whole job (`MPI_Abort`), so that the other ranks
/// are not left waiting in a collective.
///
/// Every collective waits at most the timeout of the last
/// [`Backend::watch`] ([`DEFAULT_TIMEOUT`](crate::DEFAULT_TIMEOUT) before
/// the first; [`Dist`](crate::Dist) passes its own); then the job ends,
/// with a message naming the operation, the step and the ranks that did
/// not arrive. Collectives of one's own on [`world`](Mpi::world) are not
/// watched.
///
/// ```no_run
/// use pytree_dist::{Backend, Mpi};
/// let mpi = Mpi::init()?;
/// println!("rank {} of {}", mpi.rank(), mpi.size());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct Mpi {
    world: SimpleCommunicator,
    /// A duplicate of the world for the point-to-point messages of a
    /// reduce-scatter or an all-gather, so that they never match a
    /// program's own messages on [`world`](Mpi::world) (nor the
    /// watchdog's notices, on a duplicate of their own). Freed before MPI
    /// is finalized (fields drop in order).
    peers: SimpleCommunicator,
    watchdog: Watchdog,
    /// Two pairs (send, receive) of each wire type, grown to the largest
    /// bucket seen and kept, with the scratch a reduce-scatter receives
    /// into, so that a training step allocates no buffer.
    buffers: RefCell<Slots>,
    /// Dropped last: `MPI_Finalize`.
    _universe: Universe,
}

#[derive(Default)]
struct Slots {
    f32s: [(Vec<f32>, Vec<f32>); 2],
    f64s: [(Vec<f64>, Vec<f64>); 2],
    /// Each slot's scratch for a reduce-scatter at more than 2 ranks: the
    /// contributions to this rank's part from every other rank but the
    /// lowest (whose lands in the receive buffer), `N - 2` parts.
    f32_scratch: [Vec<f32>; 2],
    f64_scratch: [Vec<f64>; 2],
}

impl Mpi {
    /// Initializes MPI and returns `MPI_COMM_WORLD`; an error if MPI was
    /// initialized already in this process.
    ///
    /// ```no_run
    /// let world = pytree_dist::Mpi::init()?;
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn init() -> Result<Mpi, Error> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| Error::custom("MPI was initialized already in this process"))?;
        let world = universe.world();
        LIVE.store(true, Ordering::SeqCst);
        let watchdog = Watchdog::new(&world, Some(DEFAULT_TIMEOUT));
        let peers = world.duplicate();
        let mpi = Mpi {
            world,
            peers,
            watchdog,
            buffers: RefCell::new(Slots::default()),
            _universe: universe,
        };
        if mpi.size() > 1 {
            install_panic_hook(mpi.rank());
        }
        Ok(mpi)
    }
}

impl Mpi {
    /// `MPI_COMM_WORLD` as rsmpi's communicator, for collectives of one's
    /// own beside the tree operations (the same processes; MPI's rule
    /// holds: every rank makes the same calls in the same order).
    ///
    /// ```no_run
    /// use mpi::traits::Communicator;
    /// let mpi = pytree_dist::Mpi::init()?;
    /// assert!(mpi.world().size() >= 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        // A program that made its `Dist` itself (not through `run`) leaves
        // here, before MPI_Finalize: the ranks still calling collectives
        // hear of it instead of waiting.
        if !self.watchdog.has_left() && !std::thread::panicking() {
            let _ = self.watchdog.leave();
        }
        LIVE.store(false, Ordering::SeqCst);
    }
}

/// Prints a panic with the rank, then ends the job (`MPI_Abort` on
/// `MPI_COMM_WORLD`) while MPI is live.
fn install_panic_hook(rank: usize) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!("pytree-dist: rank {rank} panicked; ending the job (MPI_Abort)");
        previous(info);
        if LIVE.load(Ordering::SeqCst) {
            abort_world(1);
        }
    }));
}

/// `MPI_REQUEST_NULL`.
fn request_null() -> ffi::MPI_Request {
    // SAFETY: a constant of the library, defined by rsmpi's C shim.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// An element type MPI sends: its datatype handle (and the sum a
/// reduce-scatter makes of the parts it receives).
trait Element: Equivalence + WireElement + std::ops::AddAssign {
    fn datatype() -> ffi::MPI_Datatype {
        Self::equivalent_datatype().as_raw()
    }
}
impl Element for f32 {}
impl Element for f64 {}

/// A started non-blocking collective, or the point-to-point messages of
/// one bucket's reduce-scatter or all-gather; every request waited (here
/// or on drop) before its buffers may be read or written again.
struct InFlight(Vec<ffi::MPI_Request>);

impl InFlight {
    /// One request.
    fn one(request: ffi::MPI_Request) -> InFlight {
        InFlight(vec![request])
    }
    /// Waits for every request under the watchdog (which ends the job
    /// rather than wait past the timeout; each request waits at most the
    /// timeout, and all of them are of one collective, so the first
    /// waits for the late rank and the rest find theirs done or nearly).
    fn wait(mut self, watchdog: &Watchdog) {
        for request in &mut self.0 {
            watchdog.wait(request);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        for request in &mut self.0 {
            // SAFETY: the request was returned by a non-blocking call of
            // this process, or is MPI_REQUEST_NULL after a wait, for
            // which MPI_Wait returns at once (the constant is the
            // library's); MPI is live while an `Mpi` is.
            unsafe {
                if *request != ffi::RSMPI_REQUEST_NULL {
                    ffi::MPI_Wait(request, ffi::RSMPI_STATUS_IGNORE);
                }
            }
        }
    }
}

/// Whose contribution to this rank's part a reduce-scatter receives into
/// the receive buffer (the others' land in the scratch): the lowest rank
/// other than `me`. At a world of one, none.
fn first_other(me: usize, size: usize) -> Option<usize> {
    (0..size).find(|&r| r != me)
}

/// Where in the scratch (in parts) a reduce-scatter receives rank `r`'s
/// contribution to rank `me`'s part: the ranks other than `me` and
/// [`first_other`], in rank order.
fn scratch_index(me: usize, r: usize) -> usize {
    // `first_other` is below `r` (it is the lowest other rank), and so is
    // `me` when `me < r`.
    r - 1 - usize::from(me < r)
}

/// The sum of a reduce-scatter once its messages are in: `part` (this
/// rank's part of the receive buffer) holds [`first_other`]'s
/// contribution, `own` this rank's, `scratch` the rest's
/// ([`scratch_index`]); leaves in `part` the contributions of ranks
/// `0, 1, ..., size - 1` added in that order, left to right (the first
/// two by commutativity: `a + b` and `b + a` are the same bits).
fn sum_parts<T: Element>(me: usize, size: usize, own: &[T], part: &mut [T], scratch: &[T]) {
    let m = part.len();
    let Some(first) = first_other(me, size) else {
        part.copy_from_slice(own);
        return;
    };
    for r in (0..size).filter(|&r| r != first) {
        let c = if r == me {
            own
        } else {
            let j = scratch_index(me, r);
            &scratch[j * m..(j + 1) * m]
        };
        part.iter_mut().zip(c).for_each(|(x, y)| *x += *y);
    }
}

/// Posts a receive of `n` elements from rank `from` into `at`, with `tag`
/// on `comm` (`n` and `from` fit a c_int: the callers' buckets were
/// checked, and a rank is below the world's size).
///
/// # Safety
/// `at` must hold `n` elements, neither moved, freed, read nor written
/// until the returned request is waited.
unsafe fn irecv<T: Element>(
    at: *mut T,
    n: usize,
    from: usize,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> ffi::MPI_Request {
    let mut request = ffi::RSMPI_REQUEST_NULL;
    let count = c_int::try_from(n).unwrap_or(c_int::MAX);
    ffi::MPI_Irecv(
        at.cast(),
        count,
        T::datatype(),
        from as c_int,
        tag,
        comm,
        &mut request,
    );
    request
}

/// Posts a send of the `n` elements at `at` to rank `to`, with `tag` on
/// `comm` (as [`irecv`]).
///
/// # Safety
/// `at` must hold `n` elements, neither moved, freed nor written until
/// the returned request is waited.
unsafe fn isend<T: Element>(
    at: *const T,
    n: usize,
    to: usize,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> ffi::MPI_Request {
    let mut request = ffi::RSMPI_REQUEST_NULL;
    let count = c_int::try_from(n).unwrap_or(c_int::MAX);
    ffi::MPI_Isend(
        at.cast(),
        count,
        T::datatype(),
        to as c_int,
        tag,
        comm,
        &mut request,
    );
    request
}

impl Mpi {
    /// Starts bucket `flow` over `send`/`recv` (of `len` elements each).
    ///
    /// # Safety
    /// `send` and `recv` must hold `len` elements each and be neither
    /// moved, freed, read (recv) nor written until the returned request is
    /// waited.
    /// [`Flow::SumScatter`] and [`Flow::Gather`] go to
    /// [`start_parts`](Mpi::start_parts).
    unsafe fn start<T: Element>(
        &self,
        flow: Flow,
        root: usize,
        send: *mut T,
        recv: *mut T,
        len: usize,
    ) -> InFlight {
        // Both fit: `run` checked the lengths, and a rank is below the
        // world's size, a c_int.
        let count = c_int::try_from(len).unwrap_or(c_int::MAX);
        let root = c_int::try_from(root).unwrap_or(0);
        let comm = self.world.as_raw();
        let sum = mpi::collective::SystemOperation::sum().as_raw();
        let mut request = ffi::RSMPI_REQUEST_NULL;
        match flow {
            Flow::SumToAll => {
                ffi::MPI_Iallreduce(
                    send as *const _,
                    recv as *mut _,
                    count,
                    T::datatype(),
                    sum,
                    comm,
                    &mut request,
                );
            }
            Flow::SumToRoot => {
                ffi::MPI_Ireduce(
                    send as *const _,
                    recv as *mut _,
                    count,
                    T::datatype(),
                    sum,
                    root,
                    comm,
                    &mut request,
                );
            }
            // Point to point (`start_parts`): `run` never comes here
            // with them.
            Flow::SumScatter | Flow::Gather => {}
            Flow::FromRoot => {
                let buf = if self.rank() == root as usize {
                    send
                } else {
                    recv
                };
                ffi::MPI_Ibcast(
                    buf as *mut _,
                    count,
                    T::datatype(),
                    root,
                    comm,
                    &mut request,
                );
            }
        }
        InFlight::one(request)
    }

    /// Starts the point-to-point messages of bucket `b`'s reduce-scatter
    /// or all-gather, with tag `tag` (the bucket's slot, which alternates
    /// between consecutive packed buckets: a rank whose requests of bucket
    /// `k` are done may send bucket `k + 1` while another still receives
    /// bucket `k`, and the tags keep a message of one from matching a
    /// receive of the other). Messages of no
    /// elements are not sent (both ends know every part's length, so
    /// both skip them).
    ///
    /// - [`Flow::SumScatter`]: sends every other rank `r` its part of
    ///   `send` (the whole bucket); receives [`first_other`]'s
    ///   contribution to this rank's part into `recv[..m]` (`m` the
    ///   part's length) and every other's into `scratch`
    ///   ([`scratch_index`]); [`sum_parts`] adds them up once done.
    /// - [`Flow::Gather`]: sends this rank's part, already in its place
    ///   in `recv` (`fill` packed it there), to every other rank;
    ///   receives each other rank's part into its place in `recv`. `send`
    ///   is not used.
    ///
    /// # Safety
    /// `send` and `recv` must hold `b.len` elements each and `scratch`
    /// `(size - 2) * m` (none below 3 ranks); none may be moved, freed,
    /// read (`recv`, `scratch`: but the part a Gather sends) nor written
    /// until the returned requests are waited.
    unsafe fn start_parts<T: Element>(
        &self,
        flow: Flow,
        b: &Bucket,
        tag: c_int,
        send: *mut T,
        recv: *mut T,
        scratch: *mut T,
    ) -> InFlight {
        let (me, size) = (self.rank(), self.size());
        let comm = self.peers.as_raw();
        let part = |r: usize| b.part(r, size);
        let mine = part(me);
        let m = mine.len();
        let mut requests = Vec::with_capacity(2 * size.saturating_sub(1));
        let others = (0..size).filter(|&r| r != me);
        // Every receive is posted before any send.
        let mut recv_from = |at: *mut T, n: usize, r: usize| {
            if n > 0 {
                requests.push(irecv(at, n, r, tag, comm));
            }
        };
        match flow {
            Flow::SumScatter => {
                let first = first_other(me, size);
                for r in others.clone() {
                    let at = if Some(r) == first {
                        recv
                    } else {
                        scratch.add(scratch_index(me, r) * m)
                    };
                    recv_from(at, m, r);
                }
            }
            _ => {
                for r in others.clone() {
                    let p = part(r);
                    recv_from(recv.add(p.start), p.len(), r);
                }
            }
        }
        for r in others {
            let (at, n) = match flow {
                Flow::SumScatter => {
                    let p = part(r);
                    (send.add(p.start), p.len())
                }
                _ => (recv.add(mine.start), m),
            };
            if n > 0 {
                requests.push(isend(at, n, r, tag, comm));
            }
        }
        InFlight(requests)
    }

    /// Runs in-place bucket `b` through `flow` over `data` (its memory on
    /// this rank), blocking: an all-reduce or a reduce with
    /// `MPI_IN_PLACE`, or a broadcast.
    fn in_place(&self, flow: Flow, b: Bucket, data: BufMut<'_>) -> Result<(), Error> {
        let (ptr, len, datatype) = match data {
            BufMut::F32(xs) => (xs.as_mut_ptr().cast(), xs.len(), f32::datatype()),
            BufMut::F64(xs) => (xs.as_mut_ptr().cast(), xs.len(), f64::datatype()),
        };
        if len != b.len {
            return Err(Error::custom(format!(
                "an in-place bucket of {} elements lent {len}",
                b.len
            )));
        }
        // Both fit: `run` checked the length and the root.
        let count = c_int::try_from(len).unwrap_or(c_int::MAX);
        let root = c_int::try_from(b.root).unwrap_or(0);
        let is_root = self.rank() == b.root;
        let comm = self.world.as_raw();
        let sum = mpi::collective::SystemOperation::sum().as_raw();
        // SAFETY: `ptr` points to `len` elements of `datatype` (the slice
        // lent above, mutably borrowed for this whole call, so nothing
        // else reads or writes it), and each call below is blocking: MPI
        // is done with the memory when it returns. MPI is live while an
        // `Mpi` is. `pytree_dist_mpi_in_place` returns the `MPI_IN_PLACE`
        // of the `mpi.h` rsmpi was built with (build.rs: the same probe),
        // which MPI takes as the send buffer of an all-reduce and of the
        // root's reduce, the data then taken from and left in the receive
        // buffer; a non-root's receive buffer of a reduce is not used
        // (null).
        let call = || unsafe {
            let in_place = pytree_dist_mpi_in_place();
            match flow {
                Flow::SumToAll => {
                    ffi::MPI_Allreduce(in_place, ptr, count, datatype, sum, comm);
                }
                Flow::SumToRoot if is_root => {
                    ffi::MPI_Reduce(in_place, ptr, count, datatype, sum, root, comm);
                }
                Flow::SumToRoot => {
                    ffi::MPI_Reduce(ptr, std::ptr::null_mut(), count, datatype, sum, root, comm);
                }
                Flow::FromRoot => {
                    ffi::MPI_Bcast(ptr, count, datatype, root, comm);
                }
                // Refused by `run` before any bucket starts.
                Flow::SumScatter | Flow::Gather => {}
            }
        };
        let what = match flow {
            Flow::SumToAll => "MPI_Allreduce (an in-place bucket)",
            Flow::SumToRoot => "MPI_Reduce (an in-place bucket)",
            Flow::FromRoot => "MPI_Bcast (an in-place bucket)",
            Flow::SumScatter | Flow::Gather => "(no in-place reduce-scatter or all-gather)",
        };
        self.watchdog.blocking(what, call);
        Ok(())
    }
}

/// Grows the slots' buffers to `len` elements (never shrinks, so that the
/// pointers taken for a run stay valid through it).
fn grow<T: Default + Clone>(pair: &mut (Vec<T>, Vec<T>), len: usize) {
    grow_one(&mut pair.0, len);
    grow_one(&mut pair.1, len);
}

/// Grows one buffer to `len` elements (never shrinks).
fn grow_one<T: Default + Clone>(buf: &mut Vec<T>, len: usize) {
    if buf.len() < len {
        buf.resize(len, T::default());
    }
}

impl Backend for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn name(&self) -> &'static str {
        "mpi"
    }

    fn run(&self, flow: Flow, buckets: &mut dyn Buckets) -> Result<(), Error> {
        self.watchdog.enter();
        let list = buckets.buckets();
        let rank = self.rank();
        let size = self.size();
        if let Some(b) = list.iter().find(|b| b.root >= size) {
            return Err(Error::custom(format!(
                "a bucket has root {}, but the world has {size} ranks",
                b.root
            )));
        }
        if let Some(b) = list.iter().find(|b| c_int::try_from(b.len).is_err()) {
            return Err(Error::custom(format!(
                "a bucket of {} elements: MPI counts stop at {} (use smaller buckets)",
                b.len,
                c_int::MAX
            )));
        }
        if let Some(k) = list.iter().position(|b| b.in_place && flow.scatters()) {
            return Err(Error::custom(format!(
                "bucket {k} is in place, but a {flow:?} takes packed buckets only"
            )));
        }
        // A reduce-scatter or an all-gather in the memory where the
        // elements lie, if every rank's buckets lend it.
        if flow.scatters() && buckets.direct(&mut |lent| self.run_direct(flow, &list, lent))? {
            return Ok(());
        }
        // Where in the send buffer this rank fills bucket `b`, and how
        // much: an all-gather's part is packed straight into its place in
        // the receive buffer (see `fill`).
        let fill_len = |b: &Bucket| {
            if flow == Flow::Gather {
                b.part(rank, size).len()
            } else {
                b.len
            }
        };
        let drain_len = |b: &Bucket| {
            if flow == Flow::SumScatter {
                b.part(rank, size).len()
            } else {
                b.len
            }
        };
        let mut slots = self.buffers.borrow_mut();
        let slots = &mut *slots;
        for b in list.iter().filter(|b| !b.in_place) {
            // A reduce-scatter's scratch: `N - 2` parts of this rank's.
            let scratch = if flow == Flow::SumScatter {
                size.saturating_sub(2) * b.part(rank, size).len()
            } else {
                0
            };
            match b.wire {
                Wire::F32 => {
                    slots.f32s.iter_mut().for_each(|p| grow(p, b.len));
                    slots
                        .f32_scratch
                        .iter_mut()
                        .for_each(|x| grow_one(x, scratch));
                }
                Wire::F64 => {
                    slots.f64s.iter_mut().for_each(|p| grow(p, b.len));
                    slots
                        .f64_scratch
                        .iter_mut()
                        .for_each(|x| grow_one(x, scratch));
                }
            }
        }
        // Raw pointers to the four pairs and the four scratches: the
        // buffers are not resized again in this run, and each is lent to
        // safe code (fill / sum / drain) only while no request that uses
        // it is in flight.
        let f32p: [(*mut f32, *mut f32); 2] =
            [0, 1].map(|s| (slots.f32s[s].0.as_mut_ptr(), slots.f32s[s].1.as_mut_ptr()));
        let f64p: [(*mut f64, *mut f64); 2] =
            [0, 1].map(|s| (slots.f64s[s].0.as_mut_ptr(), slots.f64s[s].1.as_mut_ptr()));
        let f32x: [(*mut f32, usize); 2] = [0, 1].map(|s| {
            (
                slots.f32_scratch[s].as_mut_ptr(),
                slots.f32_scratch[s].len(),
            )
        });
        let f64x: [(*mut f64, usize); 2] = [0, 1].map(|s| {
            (
                slots.f64_scratch[s].as_mut_ptr(),
                slots.f64_scratch[s].len(),
            )
        });

        // Each packed bucket's pair of buffers: the packed buckets take
        // the two pairs in turn.
        let slot: Vec<usize> = list
            .iter()
            .scan(0usize, |packed, b| {
                let s = *packed % 2;
                *packed += usize::from(!b.in_place);
                Some(s)
            })
            .collect();

        // Fails the job with `e` if other ranks may be inside a collective.
        let fail = |e: Error| -> Error {
            if size > 1 {
                self.abort(&format!(
                    "pytree-dist: rank {rank}: error inside a collective, which cannot be taken back: {e}"
                ));
            }
            e
        };
        let fill = |buckets: &mut dyn Buckets, k: usize| -> Result<(), Error> {
            let b = list[k];
            if !flow.fills(rank, b.root) {
                return Ok(());
            }
            let s = slot[k];
            // An all-gather's part is packed into its place in the
            // receive buffer, whence it is sent (no copy); the rest into
            // the send buffer.
            let (at, len) = if flow == Flow::Gather {
                let p = b.part(rank, size);
                (p.start, p.len())
            } else {
                (0, fill_len(&b))
            };
            // SAFETY: slot `s`'s send and receive buffers hold at least
            // `b.len` elements (grown above), and `at + len` is at most
            // that (this rank's part lies in the bucket); the requests
            // that last used them (the packed bucket two before this one)
            // were waited, and that bucket drained, before the packed
            // bucket before this one started (see the loop below).
            let buf = unsafe {
                match (b.wire, flow) {
                    (Wire::F32, Flow::Gather) => {
                        BufMut::F32(std::slice::from_raw_parts_mut(f32p[s].1.add(at), len))
                    }
                    (Wire::F64, Flow::Gather) => {
                        BufMut::F64(std::slice::from_raw_parts_mut(f64p[s].1.add(at), len))
                    }
                    (Wire::F32, _) => BufMut::F32(std::slice::from_raw_parts_mut(f32p[s].0, len)),
                    (Wire::F64, _) => BufMut::F64(std::slice::from_raw_parts_mut(f64p[s].0, len)),
                }
            };
            buckets.fill(k, buf)
        };
        let drain = |buckets: &mut dyn Buckets, k: usize| -> Result<(), Error> {
            let b = list[k];
            if !flow.drains(rank, b.root) {
                return Ok(());
            }
            let s = slot[k];
            // SAFETY: bucket k's request was waited, so slot `s`'s
            // receive buffer (at least `b.len` elements) is complete and
            // no collective writes it until the packed bucket two after
            // this one starts, which is after this drain.
            // (What this rank drains is never longer than the bucket.)
            let len = drain_len(&b);
            let buf = unsafe {
                match b.wire {
                    Wire::F32 => BufRef::F32(std::slice::from_raw_parts(f32p[s].1, len)),
                    Wire::F64 => BufRef::F64(std::slice::from_raw_parts(f64p[s].1, len)),
                }
            };
            buckets.drain(k, buf)
        };
        // A reduce-scatter's sum, once bucket k's messages are in: this
        // rank's part of the receive buffer, from its contributions.
        let sum = |k: usize| {
            let b = list[k];
            if flow != Flow::SumScatter {
                return;
            }
            let s = slot[k];
            let p = b.part(rank, size);
            let n = size.saturating_sub(2) * p.len();
            // SAFETY: bucket k's requests were waited, so MPI is done with
            // slot `s`'s buffers, and the packed bucket now on the wire
            // uses the other slot; the send buffer (`b.len` elements)
            // holds this rank's part at `p`, the receive buffer (as long)
            // its first `p.len()`, and the scratch (grown above to `n`,
            // its length `f32x[s].1` at least that) the rest; the three
            // are distinct allocations.
            unsafe {
                match b.wire {
                    Wire::F32 => sum_parts(
                        rank,
                        size,
                        std::slice::from_raw_parts(f32p[s].0.add(p.start), p.len()),
                        std::slice::from_raw_parts_mut(f32p[s].1, p.len()),
                        std::slice::from_raw_parts(f32x[s].0, n.min(f32x[s].1)),
                    ),
                    Wire::F64 => sum_parts(
                        rank,
                        size,
                        std::slice::from_raw_parts(f64p[s].0.add(p.start), p.len()),
                        std::slice::from_raw_parts_mut(f64p[s].1, p.len()),
                        std::slice::from_raw_parts(f64x[s].0, n.min(f64x[s].1)),
                    ),
                }
            }
        };
        let start = |k: usize| -> InFlight {
            let b = list[k];
            let s = slot[k];
            // The tag of a reduce-scatter's or all-gather's messages: the
            // slot, which alternates between consecutive packed buckets.
            let tag = s as c_int;
            // SAFETY: slot `s`'s buffers hold `b.len` elements (a part is
            // shorter) and its scratch `(size - 2)` parts of this rank's
            // (grown above); bucket k's send buffer (an all-gather's part
            // in the receive buffer) was filled and is not written until
            // these requests are waited, nor the receive buffer and the
            // scratch read (see `fill`, `sum`, `drain`: each touches a
            // slot only when its requests are done).
            unsafe {
                match (b.wire, flow.scatters()) {
                    (Wire::F32, true) => {
                        self.start_parts(flow, &b, tag, f32p[s].0, f32p[s].1, f32x[s].0)
                    }
                    (Wire::F64, true) => {
                        self.start_parts(flow, &b, tag, f64p[s].0, f64p[s].1, f64x[s].0)
                    }
                    (Wire::F32, false) => self.start(flow, b.root, f32p[s].0, f32p[s].1, b.len),
                    (Wire::F64, false) => self.start(flow, b.root, f64p[s].0, f64p[s].1, b.len),
                }
            }
        };

        // The packed bucket on the wire, if any.
        let mut pending: Option<(usize, InFlight)> = None;
        for (k, b) in list.iter().enumerate() {
            if b.in_place {
                // Blocking, in the leaf's memory; the packed bucket before
                // it stays on the wire (and progresses in this call).
                let result = flow.drains(rank, b.root);
                buckets
                    .in_place(k, result, &mut |data| self.in_place(flow, *b, data))
                    .map_err(fail)?;
                continue;
            }
            // Packed while the packed bucket before it is on the wire.
            fill(buckets, k).map_err(fail)?;
            let previous = pending.take().map(|(j, request)| {
                request.wait(&self.watchdog);
                j
            });
            pending = Some((k, start(k)));
            // And the one before summed (a reduce-scatter) and unpacked
            // while this one is on the wire.
            if let Some(j) = previous {
                sum(j);
                drain(buckets, j).map_err(fail)?;
            }
        }
        if let Some((j, request)) = pending.take() {
            request.wait(&self.watchdog);
            sum(j);
            drain(buckets, j).map_err(fail)?;
        }
        Ok(())
    }

    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
        self.watchdog.enter();
        let size = self.size();
        let len = c_int::try_from(mine.len())
            .map_err(|_| Error::custom("all_gather: more than 2^31 bytes from one rank"))?;
        let mut lens = vec![0 as c_int; size];
        let int = c_int::equivalent_datatype().as_raw();
        let byte = u8::equivalent_datatype().as_raw();
        let comm = self.world.as_raw();
        let mut request = InFlight::one(request_null());
        // SAFETY: `len` (one c_int) and `lens` (`size` of them, one per
        // rank) are neither moved nor touched until the request is waited,
        // right below; MPI is live while an `Mpi` is.
        unsafe {
            ffi::MPI_Iallgather(
                &len as *const c_int as *const _,
                1,
                int,
                lens.as_mut_ptr() as *mut _,
                1,
                int,
                comm,
                &mut request.0[0],
            );
        }
        request.wait(&self.watchdog);
        let total: usize = lens.iter().map(|&n| n as usize).sum();
        let displs: Vec<c_int> = lens
            .iter()
            .scan(0 as c_int, |at, &n| {
                let d = *at;
                *at = at.saturating_add(n);
                Some(d)
            })
            .collect();
        c_int::try_from(total)
            .map_err(|_| Error::custom("all_gather: more than 2^31 bytes in all"))?;
        let mut all = vec![0u8; total];
        let mut request = InFlight::one(request_null());
        // SAFETY: `mine` holds `len` bytes; `all` holds `total`, the sum of
        // `lens`, and `displs` are their running sums, so every rank's
        // part lies inside it; none of the four is moved or touched until
        // the request is waited, right below.
        unsafe {
            ffi::MPI_Iallgatherv(
                mine.as_ptr() as *const _,
                len,
                byte,
                all.as_mut_ptr() as *mut _,
                lens.as_ptr(),
                displs.as_ptr(),
                byte,
                comm,
                &mut request.0[0],
            );
        }
        request.wait(&self.watchdog);
        Ok(lens
            .iter()
            .zip(&displs)
            .map(|(&n, &d)| all[d as usize..(d + n) as usize].to_vec())
            .collect())
    }

    fn broadcast(&self, bytes: &mut Vec<u8>, root: usize) -> Result<(), Error> {
        let size = self.size();
        if root >= size {
            return Err(Error::custom(format!(
                "broadcast from rank {root}, but the world has {size} ranks"
            )));
        }
        self.watchdog.enter();
        let comm = self.world.as_raw();
        let ibcast = |ptr: *mut u8, count: usize, datatype: ffi::MPI_Datatype| {
            let mut request = InFlight::one(request_null());
            // SAFETY: the callers lend `count` elements of `datatype` at
            // `ptr` (at most 1 GiB: a c_int count), not touched until the
            // request is waited, right below; `root` is below the world's
            // size (checked above).
            unsafe {
                ffi::MPI_Ibcast(
                    ptr as *mut _,
                    count as c_int,
                    datatype,
                    root as c_int,
                    comm,
                    &mut request.0[0],
                );
            }
            request.wait(&self.watchdog);
        };
        let mut len = bytes.len() as u64;
        ibcast(
            (&mut len as *mut u64).cast(),
            1,
            u64::equivalent_datatype().as_raw(),
        );
        let len = usize::try_from(len)
            .map_err(|_| Error::custom("broadcast: more bytes than this machine can address"))?;
        bytes.resize(len, 0);
        // MPI counts are c_int: send in pieces of at most 1 GiB.
        let byte = u8::equivalent_datatype().as_raw();
        for piece in bytes.chunks_mut(1 << 30) {
            ibcast(piece.as_mut_ptr(), piece.len(), byte);
        }
        Ok(())
    }

    fn watch(&self, watch: &Watch) {
        self.watchdog.watch(watch);
    }

    fn leave(&self) -> Result<(), Error> {
        self.watchdog.leave()
    }

    fn abort(&self, message: &str) -> ! {
        eprintln!("{message}");
        abort_world(1)
    }
}

#[cfg(test)]
mod tests {
    use super::{first_other, scratch_index, sum_parts};

    /// Each other rank but the first gets its own scratch slot, `0..N-2`,
    /// in rank order.
    #[test]
    fn the_scratch_slots_are_the_other_ranks_in_order() {
        for size in 1..7 {
            for me in 0..size {
                let first = first_other(me, size);
                let slots: Vec<usize> = (0..size)
                    .filter(|&r| r != me && Some(r) != first)
                    .map(|r| scratch_index(me, r))
                    .collect();
                assert_eq!(slots, (0..size.saturating_sub(2)).collect::<Vec<_>>());
            }
        }
    }

    /// The sum is the contributions added in rank order, left to right,
    /// whichever rank sums: values chosen so that another order rounds
    /// differently.
    #[test]
    fn the_parts_are_summed_in_rank_order() {
        let c = [1.0f32, 1e8, -1e8, 0.75];
        for size in 1..=4 {
            let want = c[..size].iter().skip(1).fold(c[0], |a, &x| a + x);
            for me in 0..size {
                let first = first_other(me, size);
                let mut part = vec![first.map_or(f32::NAN, |f| c[f]); 1];
                let scratch: Vec<f32> = (0..size)
                    .filter(|&r| r != me && Some(r) != first)
                    .map(|r| c[r])
                    .collect();
                sum_parts(me, size, &[c[me]], &mut part, &scratch);
                assert_eq!(part[0].to_bits(), want.to_bits(), "rank {me} of {size}");
            }
        }
        // A part of no elements.
        let mut empty: [f64; 0] = [];
        sum_parts(1, 3, &[], &mut empty, &[]);
    }
}
