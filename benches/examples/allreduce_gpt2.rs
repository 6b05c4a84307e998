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
//!    buckets (`with_sizes(DEFAULT_BUCKET_BYTES, usize::MAX)`: the path
//!    before in-place buckets).
//!
//! A ratio is the median over ROUNDS of that round's ratio (each against
//! the flat time of its own round); every round's ratio is printed too.
//! Times are rank 0's, medians. Prints one JSON line.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_dist::{Dist, Mpi, Zero1};
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
    let packed = dist.with_sizes(pytree_dist::DEFAULT_BUCKET_BYTES, usize::MAX);
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
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for round in 0..=rounds {
        let mut took = [0.0f64; 7];
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
                _ => packed.all_reduce_mean(grads)?,
            }
            *t_i = ms(t);
        }
        if round > 0 {
            for (series, t) in times.iter_mut().zip(took) {
                series.push(t);
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
    ] {
        let r = ratios(i, base);
        let each: Vec<String> = r.iter().map(|x| format!("{x:.3}")).collect();
        fields.push(format!("\"{name}\": {:.3}", median(r.clone())));
        fields.push(format!("\"rounds_{name}\": [{}]", each.join(", ")));
    }
    Ok(fields)
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
    let (mut alone_ms, mut ddp_ms, mut zero_ms) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..=rounds {
        world.barrier();
        if rank == 0 {
            let t = Instant::now();
            opt.step(&mut params, grads, &mut state)?;
            if round > 0 {
                alone_ms.push(ms(t));
            }
        }
        world.barrier();
        let t = Instant::now();
        dist.all_reduce_mean(grads)?;
        opt.step(&mut params, grads, &mut state)?;
        if round > 0 {
            ddp_ms.push(ms(t));
        }
    }
    let unsharded_state = bytes(&state.0.mu) + bytes(&state.0.nu);
    drop(state);
    dist.broadcast(&mut params, 0)?;
    let mut zero = Zero1::new(dist, opt.clone(), &params)?;
    for round in 0..=rounds {
        world.barrier();
        let t = Instant::now();
        zero.step(&mut params, grads)?;
        if round > 0 {
            zero_ms.push(ms(t));
        }
    }
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
        format!("\"state_bytes_unsharded\": {unsharded_state}"),
        format!("\"state_bytes_rank0\": {mine}"),
        format!("\"state_bytes_largest_rank\": {largest}"),
        format!("\"state_bytes_all_ranks\": {}", per_rank[0]),
    ])
}
