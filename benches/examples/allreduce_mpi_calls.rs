//! The MPI calls behind pytree-dist's in-place buckets (issue 26), raw,
//! on GPT-2 small's gradients (148 f32 arrays, 498 MB per rank) and on a
//! flat buffer of the same length: which call, blocking or not, in place
//! or not, whole leaves or pieces. Run:
//!
//! ```sh
//! cargo build --release -p pytree-benches --features mpi --example allreduce_mpi_calls
//! mpirun -np 2 target/release/examples/allreduce_mpi_calls [ROUNDS=5]
//! ```
//!
//! Each round times every variant in turn (a barrier before each), rank
//! 0's clock; printed: each variant's median and every round's ratio to
//! the first variant of the same round (one blocking `MPI_Allreduce` of
//! the flat buffer into another, what rsmpi's `all_reduce_into` calls).
//! `MPI_IN_PLACE` is the value pytree-dist's build compiled from the MPI
//! library's `mpi.h` (its C shim's function, linked in with pytree-dist).

use std::ffi::c_void;
use std::os::raw::c_int;
use std::time::Instant;

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::{Communicator, CommunicatorCollectives};
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_dist::{Dist, Mpi};

extern "C" {
    /// pytree-dist's `src/mpi_in_place.c`: `MPI_IN_PLACE`.
    fn pytree_dist_mpi_in_place() -> *mut c_void;
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// What one variant does to the memory it is given.
#[derive(Clone, Copy)]
enum Call {
    /// `MPI_Allreduce` of the flat buffer into another one.
    FlatInto,
    /// `MPI_Allreduce(MPI_IN_PLACE)` of the flat buffer.
    FlatInPlace,
    /// `MPI_Iallreduce` of the flat buffer into another one, waited.
    FlatNonBlocking,
    /// `MPI_Iallreduce(MPI_IN_PLACE)` of the flat buffer, waited.
    FlatNonBlockingInPlace,
    /// `MPI_Allreduce(MPI_IN_PLACE)` of each leaf in pieces of at most
    /// `piece` elements, each piece divided by the ranks after its call
    /// if `mean`.
    Leaves { piece: usize, mean: bool },
    /// `MPI_Iallreduce(MPI_IN_PLACE)` of each leaf in pieces, two in
    /// flight.
    LeavesNonBlocking { piece: usize },
}

fn main() -> Result<(), pytree_std::Error> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let mpi = Mpi::init()?;
    let world = mpi.world().duplicate();
    let dist = Dist::new(mpi);
    let (rank, ranks) = (dist.rank(), dist.size());
    let n = Dims::SMALL.parameters();
    let mut grads = Gpt2::new(Dims::SMALL, rank as u64, 1.0);
    let flat: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut other = vec![0.0f32; n];
    let mut data = flat.clone();
    let piece = pytree_dist::DEFAULT_BUCKET_BYTES / 4;
    let variants: [(&str, Call); 9] = [
        ("flat, blocking, into another buffer", Call::FlatInto),
        ("flat, blocking, in place", Call::FlatInPlace),
        ("flat, non-blocking, into another", Call::FlatNonBlocking),
        ("flat, non-blocking, in place", Call::FlatNonBlockingInPlace),
        (
            "leaves whole, blocking, in place",
            Call::Leaves {
                piece: usize::MAX,
                mean: false,
            },
        ),
        (
            "leaves in 25 MiB, blocking, in place",
            Call::Leaves { piece, mean: false },
        ),
        (
            "leaves in 25 MiB, non-blocking, in place",
            Call::LeavesNonBlocking { piece },
        ),
        (
            "leaves whole, in place, divided",
            Call::Leaves {
                piece: usize::MAX,
                mean: true,
            },
        ),
        (
            "leaves in 25 MiB, in place, divided",
            Call::Leaves { piece, mean: true },
        ),
    ];
    let comm = world.as_raw();
    // SAFETY: constants of the MPI library, read after MPI_Init.
    let (float, sum, in_place) =
        unsafe { (ffi::RSMPI_FLOAT, ffi::RSMPI_SUM, pytree_dist_mpi_in_place()) };
    let count = |len: usize| c_int::try_from(len).expect("fewer than 2^31 elements");
    // The blocking all-reduce (a sum) of a buffer in place.
    let sum_in_place = |buf: &mut [f32]| {
        // SAFETY: `buf` is live, of the count given, and borrowed until
        // the call returns; `in_place` is MPI_IN_PLACE.
        unsafe {
            ffi::MPI_Allreduce(
                in_place,
                buf.as_mut_ptr().cast(),
                count(buf.len()),
                float,
                sum,
                comm,
            )
        };
    };
    let mut times = vec![Vec::new(); variants.len()];
    for round in 0..=rounds {
        for (v, &(_, call)) in variants.iter().enumerate() {
            data.copy_from_slice(&flat);
            pytree_std::for_each_mut(&mut grads, |mut a| a.fill(0.5));
            world.barrier();
            let t = Instant::now();
            // SAFETY: every pointer is to a live buffer of the count given
            // (`data`, `other`, `flat`, or a piece of a leaf borrowed for
            // the call), not touched by anything else until the call (or
            // its wait) returns; the requests are waited before the
            // buffers are used again; `in_place` is MPI_IN_PLACE.
            unsafe {
                match call {
                    Call::FlatInto => {
                        ffi::MPI_Allreduce(
                            flat.as_ptr().cast(),
                            other.as_mut_ptr().cast(),
                            count(n),
                            float,
                            sum,
                            comm,
                        );
                    }
                    Call::FlatInPlace => sum_in_place(&mut data),
                    Call::FlatNonBlocking | Call::FlatNonBlockingInPlace => {
                        let mut request = ffi::RSMPI_REQUEST_NULL;
                        let (send, recv) = match call {
                            Call::FlatNonBlocking => {
                                (flat.as_ptr().cast(), other.as_mut_ptr().cast())
                            }
                            _ => (in_place as *const c_void, data.as_mut_ptr().cast()),
                        };
                        ffi::MPI_Iallreduce(send, recv, count(n), float, sum, comm, &mut request);
                        ffi::MPI_Wait(&mut request, ffi::RSMPI_STATUS_IGNORE);
                    }
                    Call::Leaves { piece, mean } => {
                        pytree_std::for_each_mut(&mut grads, |mut a| {
                            let xs = a.as_slice_mut().expect("contiguous");
                            for p in xs.chunks_mut(piece) {
                                sum_in_place(p);
                                if mean {
                                    let d = ranks as f32;
                                    p.iter_mut().for_each(|x| *x /= d);
                                }
                            }
                        });
                    }
                    Call::LeavesNonBlocking { piece } => {
                        let mut pieces: Vec<&mut [f32]> = Vec::new();
                        for a in pytree_std::leaves_mut(&mut grads) {
                            pieces.extend(a.into_slice().expect("contiguous").chunks_mut(piece));
                        }
                        let mut in_flight = std::collections::VecDeque::new();
                        for p in &mut pieces {
                            let mut request = ffi::RSMPI_REQUEST_NULL;
                            ffi::MPI_Iallreduce(
                                in_place,
                                p.as_mut_ptr().cast(),
                                count(p.len()),
                                float,
                                sum,
                                comm,
                                &mut request,
                            );
                            in_flight.push_back(request);
                            if in_flight.len() == 2 {
                                let mut r = in_flight.pop_front().expect("two");
                                ffi::MPI_Wait(&mut r, ffi::RSMPI_STATUS_IGNORE);
                            }
                        }
                        for mut r in in_flight {
                            ffi::MPI_Wait(&mut r, ffi::RSMPI_STATUS_IGNORE);
                        }
                    }
                }
            }
            if round > 0 {
                times[v].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    if rank == 0 {
        println!("{ranks} ranks, {n} f32 ({} MB), medians of {rounds} rounds; ratio: to the first line, each round", n * 4 / 1_000_000);
        for ((name, _), t) in variants.iter().zip(&times) {
            let ratios: Vec<String> = t
                .iter()
                .zip(&times[0])
                .map(|(a, b)| format!("{:.2}", a / b))
                .collect();
            println!(
                "{name:42} {:8.1} ms  [{}]",
                median(t.clone()),
                ratios.join(", ")
            );
        }
    }
    drop(world);
    Ok(())
}
