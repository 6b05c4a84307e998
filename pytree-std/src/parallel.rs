//! Parallel forms of the in-place update and of `map` (feature `rayon`):
//! [`par_zip_mut`] (the parallel [`zip_mut`](crate::walk::zip_mut), with its
//! arguments: `par_zip_mut([&mut t], [], |[x], []| ..)` is the parallel
//! `for_each_mut`) and [`par_map`]. The leaves are lent all at once
//! (they are disjoint), cut into contiguous runs of about equal work, and
//! the runs go to rayon's threads. Work is counted in elements for leaves
//! that have shapes (an `Array2` of 1M elements weighs 1M scalars), else
//! one per leaf. A leaf is never split: one leaf larger than a thread's
//! share keeps that thread busy alone.
//!
//! The results are those of the sequential forms for any `f` that updates
//! each leaf from its own inputs only (every optimizer step): the same
//! calls happen, in another order.

use rayon::prelude::*;

use pytree_core::{Error, Flatten, Leaf, LeafMut, LeafRef, Unflatten};

use crate::std_namespace::Std;
use crate::walk::LeafFnOutput;

/// Runs per thread: a few, so that work stealing evens out leaves of
/// different costs.
const RUNS_PER_THREAD: usize = 4;

/// How much work each leaf is: its element count if it has a shape, else 1.
fn weights<'a, L: Leaf<Std>>(leaves: impl Iterator<Item = LeafRef<'a, Std, L>>) -> Vec<usize> {
    leaves
        .map(|x| {
            if L::HAS_SHAPE {
                L::signature(&x).map_or(1, |s| s.num_elements().max(1))
            } else {
                1
            }
        })
        .collect()
}

/// Cuts `items` into contiguous runs of about equal total weight (at most
/// `threads * RUNS_PER_THREAD` runs; a run never splits an item).
fn balanced_runs<I>(mut items: Vec<I>, weights: &[usize]) -> Vec<Vec<I>> {
    let runs = (rayon::current_num_threads() * RUNS_PER_THREAD)
        .min(items.len())
        .max(1);
    let total: usize = weights.iter().fold(0usize, |a, &w| a.saturating_add(w));
    let share = total.div_ceil(runs).max(1);
    // Where each run ends, walking the weights once.
    let mut ends = Vec::with_capacity(runs);
    let mut acc = 0usize;
    for (i, &w) in weights.iter().enumerate().take(items.len()) {
        acc = acc.saturating_add(w);
        if acc >= share {
            ends.push(i + 1);
            acc = 0;
        }
    }
    if ends.last() != Some(&items.len()) {
        ends.push(items.len());
    }
    // Split from the back so each `split_off` moves only its own run.
    let mut out = Vec::with_capacity(ends.len());
    let mut starts: Vec<usize> = ends.iter().rev().skip(1).copied().collect();
    starts.push(0);
    for start in starts {
        out.push(items.split_off(start));
    }
    out.reverse();
    out
}

/// Updates `N` trees in place in one parallel pass while reading `M` more:
/// the parallel [`zip_mut`](crate::walk::zip_mut), with its arguments and its
/// checks (every tree against the first before anything changes). `f`
/// may fail ([`LeafFnOutput`]): after an
/// error, the threads stop taking new leaves; the error returned is that
/// of the failing leaf that comes first in leaf order, at its path. Which
/// other leaves were updated depends on the threads' timing: only leaves
/// before the first failing run and the leaves of runs that finished are
/// sure to be.
///
/// ```
/// let (mut p, mut m) = (vec![1.0f32; 64], vec![0.0f32; 64]);
/// let g = vec![1.0f32; 64];
/// pytree_std::parallel::par_zip_mut([&mut p, &mut m], [&g], |[p, m], [g]| {
///     *m = 0.9 * *m + g;
///     *p -= 0.1 * *m;
/// })?;
/// assert!(p.iter().all(|&x| x == 0.9));
/// assert!(pytree_std::parallel::par_zip_mut([&mut p], [&vec![0.0f32]], |[p], [g]| *p -= g).is_err());
///
/// // One tree, no others: the parallel `for_each_mut`.
/// let mut t = (vec![1.0f32; 1000], 2.0f32);
/// pytree_std::parallel::par_zip_mut([&mut t], [], |[x], []| *x *= 3.0)?;
/// assert!(t.0.iter().all(|&x| x == 3.0));
///
/// let mut p = vec![1.0f64, 4.0, -1.0, 9.0];
/// let err = pytree_std::parallel::par_zip_mut([&mut p], [], |[x], []| {
///     *x = x.sqrt();
///     if x.is_nan() { Err("negative") } else { Ok(()) }
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [2]: the function failed: negative");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn par_zip_mut<T, const N: usize, const M: usize, R>(
    mut muts: [&mut T; N],
    refs: [&T; M],
    f: impl for<'x> Fn([LeafMut<'x, Std, T::Leaf>; N], [LeafRef<'x, Std, T::Leaf>; M]) -> R + Sync,
) -> Result<(), Error>
where
    T: Flatten<Std>,
    R: LeafFnOutput<()>,
    R::Err: Send,
    for<'x> LeafMut<'x, Std, T::Leaf>: Send,
    for<'x> LeafRef<'x, Std, T::Leaf>: Send,
{
    // The check of the sequential form: every tree against the first.
    crate::paths::check_in_step(&muts, &refs)?;
    let failed = {
        let first: Option<&T> = muts.first().map(|t| &**t).or(refs.first().copied());
        let w = match first {
            Some(t) => weights::<T::Leaf>(crate::walk::leaves(t).into_iter()),
            None => Vec::new(),
        };
        let mut ms = muts
            .each_mut()
            .map(|t| crate::walk::leaves_mut(&mut **t).into_iter());
        let mut rs = refs.map(|t| crate::walk::leaves(t).into_iter());
        let mut items = Vec::with_capacity(w.len());
        while let (Some(m), Some(r)) = (
            pytree_core::__private::all_some(ms.each_mut().map(Iterator::next)),
            pytree_core::__private::all_some(rs.each_mut().map(Iterator::next)),
        ) {
            items.push((items.len(), m, r));
        }
        // The smallest index that failed so far: a run stops at a leaf past
        // it (that leaf cannot be the first failure) but goes on below it,
        // so the first failure in leaf order is always found.
        let first_failed = std::sync::atomic::AtomicUsize::new(usize::MAX);
        balanced_runs(items, &w)
            .into_par_iter()
            .filter_map(|run| {
                for (i, m, r) in run {
                    if i > first_failed.load(std::sync::atomic::Ordering::Relaxed) {
                        return None;
                    }
                    if let Err(e) = f(m, r).into_result() {
                        first_failed.fetch_min(i, std::sync::atomic::Ordering::Relaxed);
                        return Some((i, e));
                    }
                }
                None
            })
            .min_by_key(|(i, _)| *i)
    };
    match failed {
        None => Ok(()),
        Some((i, e)) => {
            let first = muts.first().map(|t| &**t).or(refs.first().copied());
            Err(pytree_core::ops::multi::leaf_fn_failed::<Std, T, R::Err>(
                first, i, e,
            ))
        }
    }
}

/// Applies `f` to every leaf by value, in parallel, and rebuilds the tree
/// (the parallel [`map`](crate::map); the tree is rebuilt through its
/// TreeDef, so an array of another rank in a rank-typed field is an
/// error, not a panic).
///
/// ```
/// let t = pytree_std::parallel::par_map((vec![1i64; 100], 5i64), |x| x * 2)?;
/// assert_eq!(t.1, 10);
/// assert!(t.0.iter().all(|&x| x == 2));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn par_map<T>(tree: T, f: impl Fn(T::Leaf) -> T::Leaf + Sync) -> Result<T, Error>
where
    T: Unflatten<Std>,
    T::Leaf: Send,
{
    let (leaves, def) = crate::walk::flatten(tree);
    let w = weights::<T::Leaf>(leaves.iter().map(Leaf::lend));
    let out: Vec<T::Leaf> = balanced_runs(leaves, &w)
        .into_par_iter()
        .flat_map_iter(|run| run.into_iter().map(&f))
        .collect();
    crate::walk::unflatten(&def, out)
}

#[cfg(test)]
mod tests {
    use super::balanced_runs;

    #[test]
    fn runs_are_contiguous_cover_every_item_and_balance_weight() {
        let items: Vec<usize> = (0..10).collect();
        let weights = [100, 1, 1, 1, 1, 1, 1, 1, 1, 100];
        let runs = balanced_runs(items, &weights);
        let flat: Vec<usize> = runs.iter().flatten().copied().collect();
        assert_eq!(flat, (0..10).collect::<Vec<_>>());
        assert!(runs.iter().all(|r| !r.is_empty()));
        // The heavy first and last items are not in the same run.
        assert!(!runs.iter().any(|r| r.contains(&0) && r.contains(&9)));
    }

    #[test]
    fn no_items_make_no_work() {
        let runs = balanced_runs(Vec::<u8>::new(), &[]);
        assert!(runs.iter().all(Vec::is_empty));
    }
}
