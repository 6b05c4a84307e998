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
use crate::timeout::DEFAULT_TIMEOUT;
use crate::watchdog::{abort_world, Watchdog};

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
    watchdog: Watchdog,
    /// Two pairs (send, receive) of each wire type, grown to the largest
    /// bucket seen and kept, so that a training step allocates nothing.
    buffers: RefCell<Slots>,
    /// Dropped last: `MPI_Finalize`.
    _universe: Universe,
}

#[derive(Default)]
struct Slots {
    f32s: [(Vec<f32>, Vec<f32>); 2],
    f64s: [(Vec<f64>, Vec<f64>); 2],
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
        let mpi = Mpi {
            world,
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

/// An element type MPI sends: its datatype handle.
trait Element: Equivalence + Copy + Default {
    fn datatype() -> ffi::MPI_Datatype {
        Self::equivalent_datatype().as_raw()
    }
}
impl Element for f32 {}
impl Element for f64 {}

/// A started non-blocking collective; waited (here or on drop) before its
/// buffers may be read or written again.
struct InFlight(ffi::MPI_Request);

impl InFlight {
    /// Waits under the watchdog (which ends the job rather than wait past
    /// the timeout).
    fn wait(mut self, watchdog: &Watchdog) {
        watchdog.wait(&mut self.0);
    }
    fn wait_now(&mut self) {
        // SAFETY: the request was returned by a non-blocking collective
        // (or is MPI_REQUEST_NULL after a wait, for which MPI_Wait returns
        // at once); MPI is live while an `Mpi` is.
        unsafe {
            ffi::MPI_Wait(&mut self.0, ffi::RSMPI_STATUS_IGNORE);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // SAFETY: MPI_REQUEST_NULL is a constant of the library.
        if self.0 != unsafe { ffi::RSMPI_REQUEST_NULL } {
            self.wait_now();
        }
    }
}

impl Mpi {
    /// Starts bucket `flow` over `send`/`recv` (of `len` elements each).
    ///
    /// # Safety
    /// `send` and `recv` must hold `len` elements each and be neither
    /// moved, freed, read (recv) nor written until the returned request is
    /// waited.
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
        InFlight(request)
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
            }
        };
        let what = match flow {
            Flow::SumToAll => "MPI_Allreduce (an in-place bucket)",
            Flow::SumToRoot => "MPI_Reduce (an in-place bucket)",
            Flow::FromRoot => "MPI_Bcast (an in-place bucket)",
        };
        self.watchdog.blocking(what, call);
        Ok(())
    }
}

/// Grows the slots' buffers to `len` elements (never shrinks, so that the
/// pointers taken for a run stay valid through it).
fn grow<T: Default + Clone>(pair: &mut (Vec<T>, Vec<T>), len: usize) {
    if pair.0.len() < len {
        pair.0.resize(len, T::default());
        pair.1.resize(len, T::default());
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
        let mut slots = self.buffers.borrow_mut();
        let slots = &mut *slots;
        for b in list.iter().filter(|b| !b.in_place) {
            match b.wire {
                Wire::F32 => slots.f32s.iter_mut().for_each(|p| grow(p, b.len)),
                Wire::F64 => slots.f64s.iter_mut().for_each(|p| grow(p, b.len)),
            }
        }
        // Raw pointers to the four pairs: the buffers are not resized
        // again in this run, and each is lent to safe code (fill / drain)
        // only while no request that uses it is in flight.
        let f32p: [(*mut f32, *mut f32); 2] =
            [0, 1].map(|s| (slots.f32s[s].0.as_mut_ptr(), slots.f32s[s].1.as_mut_ptr()));
        let f64p: [(*mut f64, *mut f64); 2] =
            [0, 1].map(|s| (slots.f64s[s].0.as_mut_ptr(), slots.f64s[s].1.as_mut_ptr()));

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
            // SAFETY: slot `s`'s send buffer holds at least `b.len`
            // elements (grown above), and the request that last used it
            // (the packed bucket two before this one) was waited, and
            // that bucket drained, before the packed bucket before this
            // one started (see the loop below).
            let buf = unsafe {
                match b.wire {
                    Wire::F32 => BufMut::F32(std::slice::from_raw_parts_mut(f32p[s].0, b.len)),
                    Wire::F64 => BufMut::F64(std::slice::from_raw_parts_mut(f64p[s].0, b.len)),
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
            let buf = unsafe {
                match b.wire {
                    Wire::F32 => BufRef::F32(std::slice::from_raw_parts(f32p[s].1, b.len)),
                    Wire::F64 => BufRef::F64(std::slice::from_raw_parts(f64p[s].1, b.len)),
                }
            };
            buckets.drain(k, buf)
        };
        let start = |k: usize| -> InFlight {
            let b = list[k];
            let s = slot[k];
            // SAFETY: slot `s`'s buffers hold `b.len` elements; bucket k's
            // send buffer was filled and is not written until this request
            // is waited, nor its receive buffer read (see `fill`, `drain`:
            // each touches a slot only when its request is done).
            unsafe {
                match b.wire {
                    Wire::F32 => self.start(flow, b.root, f32p[s].0, f32p[s].1, b.len),
                    Wire::F64 => self.start(flow, b.root, f64p[s].0, f64p[s].1, b.len),
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
            // And the one before unpacked while this one is on the wire.
            if let Some(j) = previous {
                drain(buckets, j).map_err(fail)?;
            }
        }
        if let Some((j, request)) = pending.take() {
            request.wait(&self.watchdog);
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
        let mut request = InFlight(request_null());
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
                &mut request.0,
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
        let mut request = InFlight(request_null());
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
                &mut request.0,
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
            let mut request = InFlight(request_null());
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
                    &mut request.0,
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
