//! Issue 26's figures: GPT-2 small's gradient tree (148 f32 tensors,
//! 124,439,808 elements, 498 MB) averaged across the ranks by pytree-dist,
//! against one raw `all_reduce_into` of a flat buffer of the same bytes in
//! the same run; the per-call cost of the agreement check on a structure
//! seen before; a data-parallel Adam step (all-reduce and update, and
//! ZeRO-1's reduce-scatter, half update and all-gather) against one
//! process's Adam step; ZeRO-1's state bytes per rank. Run:
//!
//! ```sh
//! cargo build --release -p pytree-benches --features mpi --example allreduce_gpt2
//! mpirun -np 2 target/release/examples/allreduce_gpt2 [ROUNDS=5]
//! ```
//!
//! Each figure is the median over ROUNDS of rank 0's time, the ranks
//! started together by a barrier before each timed call; the tree and the
//! flat buffer are timed in turn (A B A B ...), and their ratio is the
//! median of the rounds' ratios. Prints one JSON line.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_dist::{Dist, Mpi, Zero1};
use pytree_optim::{adam, GradientTransformation};
use pytree_std::Error;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn bytes(tree: &Gpt2) -> usize {
    pytree_std::leaves(tree).iter().map(|a| a.len() * 4).sum()
}

fn main() -> Result<(), Error> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let mpi = Mpi::init()?;
    // A communicator of our own for the raw calls, freed before MPI is
    // finalized (when `dist` drops).
    let world = mpi.world().duplicate();
    let dist = Dist::new(mpi);
    let result = figures(&dist, &world, rounds);
    drop(world);
    result
}

fn figures(
    dist: &Dist,
    world: &mpi::topology::SimpleCommunicator,
    rounds: usize,
) -> Result<(), Error> {
    let (rank, ranks) = (dist.rank(), dist.size());
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;

    let mut grads = Gpt2::new(Dims::SMALL, rank as u64, 1.0);
    let n = Dims::SMALL.parameters();
    let flat: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut flat_sum = vec![0.0f32; n];

    // The tree (all_reduce_mean, 25 MiB buckets) and the flat buffer, in turn.
    let (mut tree_ms, mut flat_ms, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..=rounds {
        world.barrier();
        let t = Instant::now();
        world.all_reduce_into(&flat[..], &mut flat_sum[..], SystemOperation::sum());
        let f = ms(t);
        world.barrier();
        let t = Instant::now();
        dist.all_reduce_mean(&mut grads)?;
        let g = ms(t);
        if round > 0 {
            flat_ms.push(f);
            tree_ms.push(g);
            ratios.push(g / f);
        }
    }
    drop(flat_sum);
    drop(flat);

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
            opt.step(&mut params, &mut grads, &mut state)?;
            if round > 0 {
                alone_ms.push(ms(t));
            }
        }
        world.barrier();
        let t = Instant::now();
        dist.all_reduce_mean(&mut grads)?;
        opt.step(&mut params, &mut grads, &mut state)?;
        if round > 0 {
            ddp_ms.push(ms(t));
        }
    }
    let unsharded_state = bytes(&state.mu) + bytes(&state.nu);
    drop(state);
    dist.broadcast(&mut params, 0)?;
    let mut zero = Zero1::new(dist, opt.clone(), &params)?;
    for round in 0..=rounds {
        world.barrier();
        let t = Instant::now();
        zero.step(&mut params, &mut grads)?;
        if round > 0 {
            zero_ms.push(ms(t));
        }
    }
    let mut per_rank = vec![(bytes(&zero.state().mu) + bytes(&zero.state().nu)) as f64];
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

    if rank == 0 {
        println!(
            "{{\"ranks\": {ranks}, \"rounds\": {rounds}, \"elements\": {n}, \
             \"tree_all_reduce_mean_ms\": {:.1}, \"flat_all_reduce_ms\": {:.1}, \"tree_over_flat\": {:.3}, \
             \"agreement_small_ms\": {:.4}, \"raw_small_ms\": {:.4}, \
             \"adam_step_alone_ms\": {:.1}, \"ddp_adam_step_ms\": {:.1}, \"zero1_step_ms\": {:.1}, \
             \"state_bytes_unsharded\": {unsharded_state}, \"state_bytes_rank0\": {mine}, \"state_bytes_largest_rank\": {largest}, \"state_bytes_all_ranks\": {}}}",
            median(tree_ms),
            median(flat_ms),
            median(ratios),
            median(small_ms),
            median(raw_small_ms),
            median(alone_ms),
            median(ddp_ms),
            median(zero_ms),
            per_rank[0]
        );
    }
    Ok(())
}
