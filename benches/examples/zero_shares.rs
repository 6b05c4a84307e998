//! Issue 38's state-per-rank figures: how much of Adam's state each rank
//! holds under `Zero1`, split by element (`Partition::Elements`, the
//! default) and by whole leaves (`Partition::Leaves`), for GPT-2 small's
//! 148 tensors, a one-leaf model and a model whose embedding is 99% of
//! it.
//!
//! ```text
//! cargo build --release -p pytree-benches --features mpi --example zero_shares
//! for n in 2 3 4 8; do mpirun -np $n target/release/examples/zero_shares; done
//! ```
//!
//! Each rank builds the real `Zero1` (its shard of the parameters and
//! the state `adam` initializes on it) and reports the bytes of its first
//! moment; rank 0 prints one Markdown row per model and partition: the
//! largest and smallest rank's share of the unsharded state, against
//! `1/N`. About 1.5 GB per rank for GPT-2 (its parameters, the shard,
//! the state): 8 ranks fit in 24 GiB.

use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_dist::{Dist, Partition, Zero1};
use pytree_optim::adam;
use pytree_std::ndarray::ArrayD;
use pytree_std::{Error, Flatten, Std};

/// This rank's share of the unsharded first moment under `partition`.
fn share<P>(dist: &Dist, params: &P, partition: Partition) -> Result<f64, Error>
where
    P: pytree_std::Unflatten<Std> + Clone + 'static,
    <P as Flatten<Std>>::Leaf: pytree_optim::FloatLeaf + pytree_std::ByteLeaf,
{
    let total = state_bytes(params);
    let zero = Zero1::with_partition(dist, adam(1e-3), params, partition)?;
    Ok(state_bytes(&zero.state().0.mu) as f64 / total as f64)
}

/// The bytes of a tree's leaves.
fn state_bytes<T>(tree: &T) -> usize
where
    T: Flatten<Std>,
    T::Leaf: pytree_std::ByteLeaf,
{
    pytree_std::leaves(tree)
        .iter()
        .map(|l| {
            <T::Leaf as pytree_std::ByteLeaf>::signature(l)
                .ok()
                .and_then(|s| s.size_in_bytes())
                .unwrap_or(0)
        })
        .sum()
}

/// Every rank's value, on every rank.
fn gather(dist: &Dist, mine: f64) -> Result<Vec<f64>, Error> {
    let mut all = vec![0.0f64; dist.size()];
    all[dist.rank()] = mine;
    dist.all_reduce_sum(&mut all)?;
    Ok(all)
}

fn row(dist: &Dist, model: &str, partition: Partition, mine: f64) -> Result<(), Error> {
    let all = gather(dist, mine)?;
    let most = all.iter().copied().fold(f64::MIN, f64::max);
    let least = all.iter().copied().fold(f64::MAX, f64::min);
    let n = dist.size();
    if dist.rank() == 0 {
        println!(
            "| {model} | {partition:?} | {n} | {most:.4} | {least:.4} | {:.4} | {:.2}x |",
            1.0 / n as f64,
            most * n as f64
        );
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    pytree_dist::run(|dist| {
        let gpt2 = Gpt2::new(Dims::SMALL, 0, 1.0);
        let one_leaf = vec![ArrayD::<f32>::zeros(vec![1000, 1000])];
        let embedding = vec![
            ArrayD::<f32>::zeros(vec![50_000, 200]),
            ArrayD::<f32>::zeros(vec![200, 200]),
            ArrayD::<f32>::zeros(vec![200]),
        ];
        for partition in [Partition::Elements, Partition::Leaves] {
            row(
                dist,
                "GPT-2 small",
                partition,
                share(dist, &gpt2, partition)?,
            )?;
            row(
                dist,
                "one leaf (1M)",
                partition,
                share(dist, &one_leaf, partition)?,
            )?;
            row(
                dist,
                "embedding 99.6%",
                partition,
                share(dist, &embedding, partition)?,
            )?;
        }
        Ok::<(), Error>(())
    })
}
