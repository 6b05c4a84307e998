//! Issue 26's figures: GPT-2 small's gradient tree (148 f32 tensors,
//! 124,439,808 elements, 498 MB) summed and averaged across the ranks by
//! pytree-dist, against one raw `all_reduce_into` of a flat buffer of the
//! same bytes in the same run; the per-call cost of the agreement check on
//! a structure seen before; a data-parallel Adam step (all-reduce and
//! update, and ZeRO-1's reduce-scatter, half update and all-gather)
//! against one process's Adam step; ZeRO-1's state bytes per rank. Run:
//!
//! ```sh
//! cargo build --release -p pytree-benches --features mpi --example allreduce_gpt2
//! mpirun -np 2 target/release/examples/allreduce_gpt2 [ROUNDS=5] [allreduce]
//! ```
//!
//! `allreduce` as second argument: the all-reduce figures only (what
//! `benches/scripts/allreduce_gpt2.sh` runs beside torch's).
//!
//! Each round times, in turn, with every rank started by a barrier:
//! 1. `flat`: one raw `all_reduce_into` (a sum) of a flat `Vec<f32>` of
//!    the same length (the issue's baseline);
//! 2. `flat_pieces`: raw `all_reduce_into` calls over 25 MiB pieces of
//!    it (the pieces' effect alone: Open MPI's one call on 498 MB is not
//!    its fastest way);
//! 3. `flat_leaf`: `dist.all_reduce_sum` of one `Array1<f32>` leaf of
//!    that length (the MPI calls the tree makes, 25 MiB in place, without
//!    the tree: 148 leaves, small ones packed);
//! 4. `tree_sum`: `dist.all_reduce_sum` of the tree (its 50 leaves of
//!    1 MiB or more in place in pieces of at most 25 MiB, the 98 small
//!    ones packed into one bucket);
//! 5. `flat_mean`: the raw `all_reduce_into` and the division by the
//!    number of ranks (one pass over the flat result): what a mean costs
//!    at the least beside the flat call;
//! 6. `tree_mean`: `dist.all_reduce_mean` of the tree;
//! 7. `packed_mean`: `all_reduce_mean` with every leaf packed into 25 MiB
//!    buckets (`Sizes { in_place_bytes: usize::MAX, .. }`: the path
//!    before in-place buckets);
//! 8. `flat_rs_ag`: the raw reduce-scatter and all-gather ZeRO is made
//!    of, on the flat buffer: one blocking `MPI_Reduce_scatter_block`
//!    into a buffer of `1/N`, then one `MPI_Allgather` back (issue 38);
//! 9. `flat_rs_ag_pieces`: the same per 25 MiB piece (blocking); `Zero1`
//!    itself runs `Mpi`'s point-to-point reduce-scatter / all-gather per
//!    bucket (item 12's messages, since issue 38), sent from and received
//!    into the leaves' own memory (`Buckets::direct`), timed in its step
//!    below.
//! 10. `flat_irs_iag_pieces`: per 25 MiB piece, the non-blocking
//!     `MPI_Ireduce_scatter_block` then `MPI_Iallgather`, each waited (the
//!     collectives `Mpi` ran for ZeRO before issue 38, one bucket at a
//!     time);
//! 11. `flat_p2p_rs_ag`: the reduce-scatter and all-gather written with
//!     point-to-point calls (`MPI_Isend` / `MPI_Irecv`) on the flat
//!     buffer: each rank sends every other rank that rank's part and
//!     receives the others' contributions to its own part, sums them in
//!     rank order, then sends its part to every other rank and receives
//!     theirs in place ((N-1)/N of the buffer each way per rank, like a
//!     ring);
//! 12. `flat_p2p_rs_ag_pieces`: the same per 25 MiB piece, one piece at
//!     a time.
//!
//! The point-to-point results are checked against the all-reduce's once
//! (the values are small integers: every order of summation agrees).
//!
//! The steps (each round: the data-parallel step, ZeRO by element, ZeRO
//! by whole leaves, ZeRO-2 with one micro-batch, one after the other):
//! `ddp_adam_step` (`all_reduce_mean` + Adam), `zero1_step`
//! ([`Zero1::new`]: by element), `zero1_leaves_step` (by whole leaves),
//! `zero2_step` (`accumulate` then `step_accumulated`).
//!
//! A ratio is the median over ROUNDS of that round's ratio (each against
//! the flat time of its own round); every round's ratio is printed too.
//! Times are rank 0's, medians. Prints one JSON line.

use std::time::Instant;

use std::os::raw::c_int;

use mpi::collective::SystemOperation;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Equivalence};
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_dist::{Dist, Mpi, Partition, Zero1};
use pytree_optim::{adam, GradientTransformation};
use pytree_std::ndarray::Array1;
use pytree_std::Error;

/// The median; NaN for no figures (a rank that timed nothing: only rank
/// 0 times the one-process Adam step, and only rank 0 prints).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

fn bytes(tree: &Gpt2) -> usize {
    pytree_std::leaves(tree).iter().map(|a| a.len() * 4).sum()
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let only_allreduce = args.get(2).is_some_and(|a| a == "allreduce");
    let mpi = Mpi::init()?;
    // A communicator of our own for the raw calls, freed before MPI is
    // finalized (when `dist` drops).
    let world = mpi.world().duplicate();
    let dist = Dist::new(mpi);
    let mut grads = Gpt2::new(Dims::SMALL, dist.rank() as u64, 1.0);
    let result = all_reduce_figures(&dist, &world, rounds, &mut grads).and_then(|mut fields| {
        if !only_allreduce {
            fields.extend(step_figures(&dist, &world, rounds, &mut grads)?);
        }
        if dist.rank() == 0 {
            println!("{{{}}}", fields.join(", "));
        }
        Ok(())
    });
    drop(world);
    result
}

/// The all-reduce of the tree against the flat buffer (see the module's
/// comment): JSON fields.
fn all_reduce_figures(
    dist: &Dist,
    world: &mpi::topology::SimpleCommunicator,
    rounds: usize,
    grads: &mut Gpt2,
) -> Result<Vec<String>, Error> {
    let ranks = dist.size();
    let n = Dims::SMALL.parameters();
    let flat: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut flat_sum = vec![0.0f32; n];
    let packed = dist.clone().with_sizes(pytree_dist::Sizes {
        in_place_bytes: usize::MAX,
        ..dist.sizes()
    });
    let mut leaf = Array1::from_shape_fn(n, |i| (i % 5) as f32);
    let piece = pytree_dist::DEFAULT_BUCKET_BYTES / 4;
    let names = [
        "flat",
        "flat_pieces",
        "flat_leaf",
        "tree_sum",
        "flat_mean",
        "tree_mean",
        "packed_mean",
        "flat_rs_ag",
        "flat_rs_ag_pieces",
        "flat_irs_iag_pieces",
        "flat_p2p_rs_ag",
        "flat_p2p_rs_ag_pieces",
    ];
    let part = n / ranks;
    let mut mine = vec![0.0f32; part];
    let piece_part = piece / ranks;
    let mut mine_piece = vec![0.0f32; piece_part];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    // The point-to-point variants' scratch (the others' contributions to
    // this rank's part) and result.
    let mut scratch: Vec<f32> = Vec::new();
    let mut p2p_sum = vec![0.0f32; n];
    for round in 0..=rounds {
        let mut took = vec![0.0f64; names.len()];
        for (i, t_i) in took.iter_mut().enumerate() {
            world.barrier();
            let t = Instant::now();
            match i {
                0 => world.all_reduce_into(&flat[..], &mut flat_sum[..], SystemOperation::sum()),
                1 => {
                    for (send, recv) in flat.chunks(piece).zip(flat_sum.chunks_mut(piece)) {
                        world.all_reduce_into(send, recv, SystemOperation::sum());
                    }
                }
                2 => dist.all_reduce_sum(&mut leaf)?,
                3 => dist.all_reduce_sum(grads)?,
                4 => {
                    world.all_reduce_into(&flat[..], &mut flat_sum[..], SystemOperation::sum());
                    let d = ranks as f32;
                    flat_sum.iter_mut().for_each(|x| *x /= d);
                }
                5 => dist.all_reduce_mean(grads)?,
                6 => packed.all_reduce_mean(grads)?,
                7 => {
                    let whole = &flat[..part * ranks];
                    world.reduce_scatter_block_into(whole, &mut mine[..], SystemOperation::sum());
                    world.all_gather_into(&mine[..], &mut flat_sum[..part * ranks]);
                }
                8 => {
                    let step = piece_part * ranks;
                    for (send, recv) in flat.chunks_exact(step).zip(flat_sum.chunks_exact_mut(step))
                    {
                        world.reduce_scatter_block_into(
                            send,
                            &mut mine_piece[..],
                            SystemOperation::sum(),
                        );
                        world.all_gather_into(&mine_piece[..], recv);
                    }
                }
                9 => {
                    let step = piece_part * ranks;
                    for (send, recv) in flat.chunks_exact(step).zip(flat_sum.chunks_exact_mut(step))
                    {
                        immediate_rs_ag(world, send, &mut mine_piece, recv);
                    }
                }
                10 => p2p_rs_ag(world, &flat, &mut p2p_sum, &mut scratch),
                _ => {
                    for (send, recv) in flat.chunks(piece).zip(p2p_sum.chunks_mut(piece)) {
                        p2p_rs_ag(world, send, recv, &mut scratch);
                    }
                }
            }
            *t_i = ms(t);
        }
        if round > 0 {
            for (series, t) in times.iter_mut().zip(took) {
                series.push(t);
            }
        }
        if round == 0 {
            // The point-to-point sum (its last piecewise run) against the
            // all-reduce's.
            world.all_reduce_into(&flat[..], &mut flat_sum[..], SystemOperation::sum());
            if p2p_sum != flat_sum {
                return Err(Error::custom(
                    "the point-to-point reduce-scatter + all-gather differs from the all-reduce",
                ));
            }
        }
        // Sums double the values each time: keep them small.
        leaf.fill(1.0);
        pytree_std::for_each_mut(grads, |mut a| a.fill(0.5));
    }
    let ratios = |i: usize, base: usize| -> Vec<f64> {
        times[i]
            .iter()
            .zip(&times[base])
            .map(|(t, b)| t / b)
            .collect()
    };
    let mut fields = vec![
        format!("\"ranks\": {ranks}"),
        format!("\"rounds\": {rounds}"),
        format!("\"elements\": {n}"),
    ];
    for (name, t) in names.iter().zip(&times) {
        fields.push(format!("\"{name}_ms\": {:.1}", median(t.clone())));
    }
    for (name, (i, base)) in [
        ("tree_sum_over_flat", (3, 0)),
        ("flat_pieces_over_flat", (1, 0)),
        ("tree_sum_over_flat_leaf", (3, 2)),
        ("tree_mean_over_flat_mean", (5, 4)),
        ("tree_mean_over_flat", (5, 0)),
        ("packed_mean_over_flat", (6, 0)),
        ("flat_rs_ag_over_flat", (7, 0)),
        ("flat_rs_ag_pieces_over_flat_pieces", (8, 1)),
        ("flat_irs_iag_pieces_over_flat_pieces", (9, 1)),
        ("flat_p2p_rs_ag_over_flat", (10, 0)),
        ("flat_p2p_rs_ag_pieces_over_flat_pieces", (11, 1)),
        ("flat_p2p_rs_ag_pieces_over_flat", (11, 0)),
    ] {
        let r = ratios(i, base);
        let each: Vec<String> = r.iter().map(|x| format!("{x:.3}")).collect();
        fields.push(format!("\"{name}\": {:.3}", median(r.clone())));
        fields.push(format!("\"rounds_{name}\": [{}]", each.join(", ")));
    }
    Ok(fields)
}

/// `MPI_REQUEST_NULL`.
fn request_null() -> ffi::MPI_Request {
    // SAFETY: a constant of the library, defined by rsmpi's C shim.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// `MPI_Waitall` on `requests`.
fn wait_all(requests: &mut [ffi::MPI_Request]) {
    // SAFETY: each request was returned by a non-blocking call of this
    // process, whose buffers the caller keeps until this returns.
    unsafe {
        ffi::MPI_Waitall(
            requests.len() as c_int,
            requests.as_mut_ptr(),
            ffi::RSMPI_STATUSES_IGNORE,
        );
    }
}

/// The non-blocking `MPI_Ireduce_scatter_block` of `send` into `mine`
/// (`1/N` of it), waited, then `MPI_Iallgather` of `mine` into `recv`,
/// waited.
fn immediate_rs_ag(world: &SimpleCommunicator, send: &[f32], mine: &mut [f32], recv: &mut [f32]) {
    let f32t = f32::equivalent_datatype().as_raw();
    let count = mine.len() as c_int;
    let mut request = [request_null(); 1];
    // SAFETY: `send` holds N * count elements and `recv` as many, `mine`
    // count; all three are borrowed (unmoved, untouched) until each
    // request is waited, right after it starts.
    unsafe {
        ffi::MPI_Ireduce_scatter_block(
            send.as_ptr() as *const _,
            mine.as_mut_ptr() as *mut _,
            count,
            f32t,
            SystemOperation::sum().as_raw(),
            world.as_raw(),
            &mut request[0],
        );
        wait_all(&mut request);
        ffi::MPI_Iallgather(
            mine.as_ptr() as *const _,
            count,
            f32t,
            recv.as_mut_ptr() as *mut _,
            count,
            f32t,
            world.as_raw(),
            &mut request[0],
        );
        wait_all(&mut request);
    }
}

/// A reduce-scatter and an all-gather of `send` into `recv` (of the same
/// length) with point-to-point calls: rank `r`'s part is
/// `len * r / N .. len * (r + 1) / N` (as `Bucket::part`). Each rank
/// sends every other rank that rank's part of `send` and receives their
/// contributions to its own part into `scratch`, sums them in rank order
/// into its part of `recv`, then sends that part to every other rank and
/// receives theirs straight into place.
fn p2p_rs_ag(world: &SimpleCommunicator, send: &[f32], recv: &mut [f32], scratch: &mut Vec<f32>) {
    let (me, size) = (world.rank() as usize, world.size() as usize);
    let len = send.len();
    assert_eq!(recv.len(), len);
    let at = |r: usize| len * r / size;
    let part = |r: usize| at(r)..at(r + 1);
    let mine = part(me);
    let m = mine.len();
    // The others' contributions, in rank order (this rank's skipped).
    let need = m * (size - 1);
    if scratch.len() < need {
        scratch.resize(need, 0.0);
    }
    let mut requests = vec![request_null(); 2 * (size - 1)];
    let slots = scratch.as_mut_ptr();
    // SAFETY: every receive lands in its own range of `scratch` (the
    // others' slots, `m` each, within its length) and every send reads a
    // range of `send`; `exchange` waits for them before it returns.
    unsafe {
        exchange(
            world,
            0,
            &mut requests,
            |j, _| (slots.add(j * m), m),
            |r| (send.as_ptr().add(part(r).start), part(r).len()),
        )
    };
    // The sum in rank order.
    let out = &mut recv[mine.clone()];
    let own = &send[mine];
    let contribution = |r: usize| -> &[f32] {
        if r == me {
            own
        } else {
            let j = if r < me { r } else { r - 1 };
            &scratch[j * m..(j + 1) * m]
        }
    };
    out.copy_from_slice(contribution(0));
    for r in 1..size {
        for (o, c) in out.iter_mut().zip(contribution(r)) {
            *o += c;
        }
    }
    let base = recv.as_mut_ptr();
    let mine = part(me);
    // SAFETY: each receive lands in another rank's part of `recv`, the
    // sends read this rank's part: disjoint ranges of it, which is
    // borrowed, untouched, until `exchange` has waited for them.
    unsafe {
        exchange(
            world,
            1,
            &mut requests,
            |_, r| (base.add(part(r).start), part(r).len()),
            |_| (base.add(mine.start).cast_const(), mine.len()),
        )
    };
}

/// One message each way between this rank and every other rank `r` (the
/// `j`-th of the others, in rank order), with tag `tag`: the `len`
/// elements at `recv(j, r)` received from `r` and those at `send(r)` sent
/// to it, all posted at once (non-blocking), then waited for. `requests`
/// has room for two per other rank.
///
/// # Safety
///
/// Every range is valid for its length; the receiving ones are disjoint
/// from each other and from the sending ones.
unsafe fn exchange(
    world: &SimpleCommunicator,
    tag: c_int,
    requests: &mut [ffi::MPI_Request],
    recv: impl Fn(usize, usize) -> (*mut f32, usize),
    send: impl Fn(usize) -> (*const f32, usize),
) {
    let (me, size) = (world.rank() as usize, world.size() as usize);
    let f32t = f32::equivalent_datatype().as_raw();
    let comm = world.as_raw();
    let others = || (0..size).filter(|&r| r != me);
    for (j, r) in others().enumerate() {
        let (at, len) = recv(j, r);
        ffi::MPI_Irecv(
            at.cast(),
            len as c_int,
            f32t,
            r as c_int,
            tag,
            comm,
            &mut requests[j],
        );
    }
    for (j, r) in others().enumerate() {
        let (at, len) = send(r);
        ffi::MPI_Isend(
            at.cast(),
            len as c_int,
            f32t,
            r as c_int,
            tag,
            comm,
            &mut requests[size - 1 + j],
        );
    }
    wait_all(requests);
}

/// The agreement's cost per call, the Adam steps and ZeRO-1's state:
/// JSON fields.
fn step_figures(
    dist: &Dist,
    world: &mpi::topology::SimpleCommunicator,
    rounds: usize,
    grads: &mut Gpt2,
) -> Result<Vec<String>, Error> {
    let rank = dist.rank();
    // The agreement check alone: a one-leaf tree (its plan cached) against
    // a raw all-reduce of one f32.
    let (mut small_ms, mut raw_small_ms) = (Vec::new(), Vec::new());
    let mut one = vec![1.0f32];
    let mut out = [0.0f32];
    for _ in 0..200 {
        world.barrier();
        let t = Instant::now();
        dist.all_reduce_sum(&mut one)?;
        small_ms.push(ms(t));
        world.barrier();
        let t = Instant::now();
        world.all_reduce_into(&one[..], &mut out[..], SystemOperation::sum());
        raw_small_ms.push(ms(t));
    }

    // Adam: one process's step (rank 0 alone, the others waiting at the
    // barrier), the data-parallel step (all-reduce + the same update on
    // every rank), and ZeRO-1's step.
    let opt = adam(1e-3);
    let mut params = Gpt2::new(Dims::SMALL, 100, 0.02);
    let mut state = opt.init(&params)?;
    let mut zero_params = params.clone();
    let mut leaves_params = params.clone();
    let mut zero2_params = params.clone();
    let mut zero = Zero1::new(dist, opt.clone(), &zero_params)?;
    let mut by_leaf = Zero1::with_partition(dist, opt.clone(), &leaves_params, Partition::Leaves)?;
    let mut zero2 = Zero1::new(dist, opt.clone(), &zero2_params)?;
    let (mut alone_ms, mut ddp_ms, mut zero_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut leaves_ms, mut zero2_ms) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        world.barrier();
        if rank == 0 {
            let t = Instant::now();
            opt.step(&mut params, grads, &mut state)?;
            if round > 0 {
                alone_ms.push(ms(t));
            }
        }
        let fresh = grads.clone();
        world.barrier();
        let t = Instant::now();
        dist.all_reduce_mean(grads)?;
        opt.step(&mut params, grads, &mut state)?;
        if round > 0 {
            ddp_ms.push(ms(t));
        }
        *grads = fresh.clone();
        world.barrier();
        let t = Instant::now();
        zero.step(&mut zero_params, grads)?;
        if round > 0 {
            zero_ms.push(ms(t));
        }
        *grads = fresh.clone();
        world.barrier();
        let t = Instant::now();
        by_leaf.step(&mut leaves_params, grads)?;
        if round > 0 {
            leaves_ms.push(ms(t));
        }
        *grads = fresh.clone();
        world.barrier();
        let t = Instant::now();
        zero2.accumulate(fresh)?;
        zero2.step_accumulated(&mut zero2_params)?;
        if round > 0 {
            zero2_ms.push(ms(t));
        }
    }
    let ratio = |xs: &[f64]| -> Vec<f64> { xs.iter().zip(&ddp_ms).map(|(z, d)| z / d).collect() };
    let (zero_over_ddp, leaves_over_ddp, zero2_over_ddp) =
        (ratio(&zero_ms), ratio(&leaves_ms), ratio(&zero2_ms));
    let unsharded_state = bytes(&state.0.mu) + bytes(&state.0.nu);
    drop(state);
    let mut per_rank = vec![(bytes(&zero.state().0.mu) + bytes(&zero.state().0.nu)) as f64];
    let mine = per_rank[0];
    dist.all_reduce_sum(&mut per_rank)?;
    let largest = {
        let mut m = vec![mine];
        // The largest shard: each rank's bytes gathered.
        let all = dist.backend().all_gather(&mine.to_le_bytes())?;
        m.extend(
            all.iter()
                .map(|b| f64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]))),
        );
        m.into_iter().fold(0.0, f64::max)
    };

    Ok(vec![
        format!("\"agreement_small_ms\": {:.4}", median(small_ms)),
        format!("\"raw_small_ms\": {:.4}", median(raw_small_ms)),
        format!("\"adam_step_alone_ms\": {:.1}", median(alone_ms)),
        format!("\"ddp_adam_step_ms\": {:.1}", median(ddp_ms)),
        format!("\"zero1_step_ms\": {:.1}", median(zero_ms)),
        format!("\"zero1_leaves_step_ms\": {:.1}", median(leaves_ms)),
        format!("\"zero2_step_ms\": {:.1}", median(zero2_ms)),
        format!("\"zero1_over_ddp\": {:.3}", median(zero_over_ddp.clone())),
        format!("\"rounds_zero1_over_ddp\": {:?}", zero_over_ddp),
        format!("\"zero1_leaves_over_ddp\": {:.3}", median(leaves_over_ddp)),
        format!("\"zero2_over_ddp\": {:.3}", median(zero2_over_ddp)),
        format!(
            "\"zero1_leaves_state_bytes_rank0\": {}",
            bytes(&by_leaf.state().0.mu) + bytes(&by_leaf.state().0.nu)
        ),
        format!("\"state_bytes_unsharded\": {unsharded_state}"),
        format!("\"state_bytes_rank0\": {mine}"),
        format!("\"state_bytes_largest_rank\": {largest}"),
        format!("\"state_bytes_all_ranks\": {}", per_rank[0]),
    ])
}
