//! A reduce-scatter or an all-gather in the memory where the elements lie
//! ([`Buckets::direct`](crate::Buckets::direct)): the point-to-point
//! messages of [`start_parts`](super::Mpi::start_parts), sent from and
//! received into the runs of [`Direct`] (the gradients' and parameters'
//! leaves, the shard's) instead of packed buffers, so that a ZeRO step
//! copies nothing it need not. One message per run and rank; the sums are
//! made in the same order as the packed path's ([`super::sum_parts`]), so
//! the bits are the same.
//!
//! Every rank must take this path or none: a rank whose buckets lend no
//! memory sends packed buffers, whose messages another rank's runs would
//! not match. The ranks agree first (one `MPI_Iallreduce` of an `int`).

use std::ops::Range;
use std::os::raw::c_int;

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::Equivalence;
use pytree_std::Error;

use super::{first_other, irecv, isend, request_null, scratch_index, Element, InFlight, Mpi};
use crate::backend::{Backend, Bucket, BufMut, Direct, Flow, Wire};

/// The tag of the direct path's messages (the packed path's are 0 and 1;
/// no run's messages outlive it, so this only keeps the two apart in a
/// trace).
const TAG: c_int = 2;

/// A run of elements lent by [`Direct`]: where it starts (in the bucket,
/// or in this rank's part of it), and its memory.
#[derive(Clone, Copy, Debug)]
struct Run {
    at: usize,
    ptr: *mut u8,
    len: usize,
}

/// Bucket `k`'s runs as raw memory: its wire, the whole bucket's runs,
/// this rank's part's runs.
struct Lent {
    wire: Wire,
    whole: Vec<Run>,
    part: Vec<Run>,
}

/// `runs` as [`Run`]s from their starts in order, if each is of `wire`.
fn raw_runs(runs: &mut [BufMut<'_>], wire: Wire) -> Option<Vec<Run>> {
    let mut at = 0;
    runs.iter_mut()
        .map(|run| {
            let (ptr, len) = match (run, wire) {
                (BufMut::F32(s), Wire::F32) => (s.as_mut_ptr().cast::<u8>(), s.len()),
                (BufMut::F64(s), Wire::F64) => (s.as_mut_ptr().cast::<u8>(), s.len()),
                _ => return None,
            };
            let run = Run { at, ptr, len };
            at += len;
            Some(run)
        })
        .collect()
}

/// The pieces of `whole` that lie in `range` (of the bucket): each the
/// run's memory cut to the range, with where it starts in the range.
fn pieces<'r>(
    whole: &'r [Run],
    range: Range<usize>,
    size: usize,
) -> impl Iterator<Item = Run> + 'r {
    whole.iter().filter_map(move |r| {
        let (lo, hi) = (r.at.max(range.start), (r.at + r.len).min(range.end));
        (lo < hi).then(|| Run {
            at: lo - range.start,
            // SAFETY (of the pointer arithmetic): `lo - r.at` is below the
            // run's length, so the result points into the run.
            ptr: r.ptr.wrapping_add((lo - r.at) * size),
            len: hi - lo,
        })
    })
}

/// Checks what `direct` lent against the buckets: as many buckets, each
/// bucket's runs of its wire and exactly its length, the part's runs
/// exactly the whole's pieces in this rank's part (so that the messages
/// other ranks send this one match its receives).
fn check(direct: &mut Direct<'_>, list: &[Bucket], rank: usize, size: usize) -> Option<Vec<Lent>> {
    if direct.whole.len() != list.len() || direct.part.len() != list.len() {
        return None;
    }
    let mut lent = Vec::with_capacity(list.len());
    for ((b, whole), part) in list.iter().zip(&mut direct.whole).zip(&mut direct.part) {
        let whole = raw_runs(whole, b.wire)?;
        let part = raw_runs(part, b.wire)?;
        let mine = b.part(rank, size);
        let sum = |runs: &[Run]| runs.iter().map(|r| r.len).sum::<usize>();
        let expected: Vec<(usize, usize)> = pieces(&whole, mine, b.wire.bytes())
            .map(|p| (p.at, p.len))
            .collect();
        let found: Vec<(usize, usize)> = part.iter().map(|p| (p.at, p.len)).collect();
        if sum(&whole) != b.len || expected != found {
            return None;
        }
        lent.push(Lent {
            wire: b.wire,
            whole,
            part,
        });
    }
    Some(lent)
}

impl Mpi {
    /// Runs `flow` (a [`SumScatter`](Flow::SumScatter) or a
    /// [`Gather`](Flow::Gather)) over `list` in the memory `direct`
    /// lends, if every rank lends it (agreed first); `false` (nothing
    /// sent) if one does not.
    pub(super) fn run_direct(
        &self,
        flow: Flow,
        list: &[Bucket],
        direct: Option<Direct<'_>>,
    ) -> Result<bool, Error> {
        let (rank, size) = (self.rank(), self.size());
        let mut direct = direct;
        let divisor = direct.as_ref().and_then(|d| d.divisor);
        let lent = direct.as_mut().and_then(|d| check(d, list, rank, size));
        if !self.all_agree(lent.is_some()) {
            return Ok(false);
        }
        let Some(lent) = lent else {
            return Ok(false);
        };
        // Two scratches per wire for a reduce-scatter at 3 ranks or more
        // (the contributions of the ranks but the first other, which lands
        // in the part itself); the bucket on the wire uses one, the next
        // the other.
        let mut scratch32: [Vec<f32>; 2] = Default::default();
        let mut scratch64: [Vec<f64>; 2] = Default::default();
        let start = |k: usize, scratch32: &mut [Vec<f32>; 2], scratch64: &mut [Vec<f64>; 2]| {
            let b = &list[k];
            let need = if flow == Flow::SumScatter {
                size.saturating_sub(2) * b.part(rank, size).len()
            } else {
                0
            };
            // SAFETY: the runs are memory `direct` lends for this whole
            // call, of `b.wire`'s elements and of their lengths (checked);
            // MPI writes only the receives' runs and this rank reads them
            // only after their requests are waited (`finish`); the scratch
            // of slot `k % 2` is grown here, while no request uses it (the
            // bucket two before this one was waited), and not touched again
            // until this bucket's requests are waited.
            unsafe {
                match b.wire {
                    Wire::F32 => {
                        let s = &mut scratch32[k % 2];
                        if s.len() < need {
                            s.resize(need, 0.0);
                        }
                        self.start_direct::<f32>(flow, b, &lent[k], s.as_mut_ptr())
                    }
                    Wire::F64 => {
                        let s = &mut scratch64[k % 2];
                        if s.len() < need {
                            s.resize(need, 0.0);
                        }
                        self.start_direct::<f64>(flow, b, &lent[k], s.as_mut_ptr())
                    }
                }
            }
        };
        let mut pending = (!list.is_empty()).then(|| start(0, &mut scratch32, &mut scratch64));
        for (k, b) in list.iter().enumerate() {
            let next = (k + 1 < list.len()).then(|| start(k + 1, &mut scratch32, &mut scratch64));
            if let Some(requests) = pending.take() {
                requests.wait(&self.watchdog);
            }
            pending = next;
            let s = k % 2;
            // SAFETY: bucket k's requests are waited, so MPI is done with
            // its runs and its scratch (slot `k % 2`; bucket k + 1, now on
            // the wire, uses the other slot and runs of other elements).
            unsafe {
                match b.wire {
                    Wire::F32 => finish(flow, b, &lent[k], &scratch32[s], (rank, size), divisor),
                    Wire::F64 => finish(flow, b, &lent[k], &scratch64[s], (rank, size), divisor),
                }
            }
        }
        Ok(true)
    }

    /// Whether `mine` holds on every rank (an `MPI_Iallreduce` of an
    /// `int` with `MPI_MIN`, waited under the watchdog).
    fn all_agree(&self, mine: bool) -> bool {
        let local = c_int::from(mine);
        let mut all: c_int = 0;
        let mut request = InFlight::one(request_null());
        // SAFETY: `local` and `all` (one c_int each) are neither moved nor
        // touched until the request is waited, right below; MPI is live
        // while an `Mpi` is.
        unsafe {
            ffi::MPI_Iallreduce(
                &local as *const c_int as *const _,
                &mut all as *mut c_int as *mut _,
                1,
                c_int::equivalent_datatype().as_raw(),
                mpi::collective::SystemOperation::min().as_raw(),
                self.world.as_raw(),
                &mut request.0[0],
            );
        }
        request.wait(&self.watchdog);
        all == 1
    }

    /// Starts bucket `b`'s messages over its runs `lent`: a reduce-scatter
    /// receives the first other rank's contribution to this rank's part
    /// into the part's runs and the others' into `scratch`
    /// ([`scratch_index`], parts of this rank's length), and sends each
    /// other rank its part's pieces of the whole; an all-gather receives
    /// each other rank's part into the whole's pieces, sends its part's
    /// runs to every other rank, and copies them into its own piece of
    /// the whole. Every receive is posted before any send.
    ///
    /// # Safety
    /// The runs of `lent` must be live memory of `T`s, of their lengths,
    /// and `scratch` hold `(size - 2)` parts of this rank's (none below 3
    /// ranks); none may be moved or freed, nor the receives' memory read
    /// or written, until the returned requests are waited.
    unsafe fn start_direct<T: Element>(
        &self,
        flow: Flow,
        b: &Bucket,
        lent: &Lent,
        scratch: *mut T,
    ) -> InFlight {
        let (me, size) = (self.rank(), self.size());
        let comm = self.peers.as_raw();
        let bytes = lent.wire.bytes();
        let m = b.part(me, size).len();
        let first = first_other(me, size);
        let others = || (0..size).filter(move |&r| r != me);
        let mut requests = Vec::new();
        let mut recv = |at: *mut T, n: usize, r: usize| requests.push(irecv(at, n, r, TAG, comm));
        match flow {
            Flow::SumScatter => {
                for r in others() {
                    for run in &lent.part {
                        let at = if Some(r) == first {
                            run.ptr.cast::<T>()
                        } else {
                            scratch.add(scratch_index(me, r) * m + run.at)
                        };
                        recv(at, run.len, r);
                    }
                }
            }
            _ => {
                for r in others() {
                    for p in pieces(&lent.whole, b.part(r, size), bytes) {
                        recv(p.ptr.cast(), p.len, r);
                    }
                }
            }
        }
        let mut send = |at: *const T, n: usize, r: usize| requests.push(isend(at, n, r, TAG, comm));
        for r in others() {
            match flow {
                Flow::SumScatter => {
                    for p in pieces(&lent.whole, b.part(r, size), bytes) {
                        send(p.ptr.cast(), p.len, r);
                    }
                }
                _ => {
                    for run in &lent.part {
                        send(run.ptr.cast(), run.len, r);
                    }
                }
            }
        }
        if flow == Flow::Gather {
            // This rank's part into its place in the whole (`copy`: the
            // shard may be the same memory as the tree, a candle variable).
            for (run, p) in lent
                .part
                .iter()
                .zip(pieces(&lent.whole, b.part(me, size), bytes))
            {
                if run.ptr != p.ptr {
                    std::ptr::copy(run.ptr.cast::<T>(), p.ptr.cast::<T>(), run.len);
                }
            }
        }
        InFlight(requests)
    }
}

/// Bucket `b`'s sum once its messages are in (a reduce-scatter; an
/// all-gather has nothing left to do): each run of this rank's part holds
/// the first other rank's contribution; the others' are added in rank
/// order (this rank's from its piece of the whole, the rest from
/// `scratch`), as [`super::sum_parts`] adds them, then divided by
/// `divisor`.
///
/// # Safety
/// `lent`'s runs must be live memory of `T`s of their lengths, not in use
/// by MPI (the bucket's requests waited), the part's distinct from the
/// whole's, and `scratch` hold `(size - 2)` parts of this rank's.
unsafe fn finish<T: Element>(
    flow: Flow,
    b: &Bucket,
    lent: &Lent,
    scratch: &[T],
    (me, size): (usize, usize),
    divisor: Option<usize>,
) {
    if flow != Flow::SumScatter {
        return;
    }
    let m = b.part(me, size).len();
    let first = first_other(me, size);
    let own = pieces(&lent.whole, b.part(me, size), lent.wire.bytes());
    for (run, mine) in lent.part.iter().zip(own) {
        let part = std::slice::from_raw_parts_mut(run.ptr.cast::<T>(), run.len);
        let mine = std::slice::from_raw_parts(mine.ptr.cast::<T>().cast_const(), mine.len);
        match first {
            None => part.copy_from_slice(mine),
            Some(first) => {
                for r in (0..size).filter(|&r| r != first) {
                    let c = if r == me {
                        mine
                    } else {
                        let at = scratch_index(me, r) * m + run.at;
                        &scratch[at..at + run.len]
                    };
                    part.iter_mut().zip(c).for_each(|(x, y)| *x += *y);
                }
            }
        }
        // The division of a mean, as the packed path's drain makes it.
        if let Some(d) = divisor.map(T::from_count) {
            part.iter_mut().for_each(|x| *x /= d);
        }
    }
}
