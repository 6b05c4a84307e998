//! The element loops every leaf type ends in: `N` mutable and `M` shared
//! slices of one length walked in lockstep with a closure over elements
//! ([`zip_slices`]), and a sum over one slice ([`sum_slice`]). With
//! [`Exec::Parallel`] (feature `rayon`) a long slice is cut in halves,
//! recursively, down to [`GRAIN`] elements, and the halves run on rayon's
//! threads; the cuts are the same in both modes, so a sum gives the same
//! bits sequentially and in parallel.

use crate::element::FloatElement;

/// How a transformation runs its element loops.
///
/// ```
/// use pytree_optim::Exec;
/// assert_eq!(Exec::default(), Exec::Sequential);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Exec {
    /// On the calling thread.
    #[default]
    Sequential,
    /// Leaves longer than [`GRAIN`] elements are split across rayon's
    /// threads (feature `rayon`).
    #[cfg(feature = "rayon")]
    Parallel,
}

/// The length below which a slice is not split further: 32 Ki elements
/// (128 KiB of `f32` per slice), long enough that a fork costs well under
/// 1 % of the work it hands out.
pub const GRAIN: usize = 1 << 15;

/// Runs `f` over the elements of `N` mutable and `M` shared slices of the
/// same length, in lockstep (callers check the lengths; a longer slice's
/// tail is left alone). For `f32` / `f64` the loads and stores are plain
/// moves, and the loop is the one a human writes over `zip`ped slices.
///
/// ```
/// let (mut p, g) = (vec![1.0f32, 2.0], vec![0.5f32, 0.5]);
/// pytree_optim::zip_slices([&mut p[..]], [&g[..]], pytree_optim::Exec::Sequential,
///     &|[p], [g]| *p -= g);
/// assert_eq!(p, [0.5, 1.5]);
/// ```
#[inline]
pub fn zip_slices<E, const N: usize, const M: usize, F>(
    muts: [&mut [E]; N],
    refs: [&[E]; M],
    exec: Exec,
    f: &F,
) where
    E: FloatElement,
    F: Fn([&mut E::Compute; N], [E::Compute; M]) + Sync,
{
    let len = common_len(&muts, &refs);
    let muts = muts.map(|s| &mut s[..len]);
    let refs = refs.map(|s| &s[..len]);
    match exec {
        Exec::Sequential => zip_seq(muts, refs, f),
        #[cfg(feature = "rayon")]
        Exec::Parallel => zip_par(muts, refs, f),
    }
}

/// The shortest length among the slices (0 for none).
#[inline(always)]
fn common_len<E, const N: usize, const M: usize>(muts: &[&mut [E]; N], refs: &[&[E]; M]) -> usize {
    let a = muts.iter().map(|s| s.len()).min();
    let b = refs.iter().map(|s| s.len()).min();
    match (a, b) {
        (Some(a), Some(b)) => a.min(b),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => 0,
    }
}

/// The sequential loop. All slices have the same length `len` here, so the
/// index checks fold away and the loop vectorizes.
#[inline(always)]
fn zip_seq<E, const N: usize, const M: usize, F>(muts: [&mut [E]; N], refs: [&[E]; M], f: &F)
where
    E: FloatElement,
    F: Fn([&mut E::Compute; N], [E::Compute; M]),
{
    E::zip_run(muts, refs, f)
}

/// Splits an array of pairs into a pair of arrays.
#[cfg(feature = "rayon")]
fn unzip<A, B, const N: usize>(pairs: [(A, B); N]) -> ([A; N], [B; N]) {
    let mut seconds: [Option<B>; N] = [const { None }; N];
    let firsts = {
        let mut slots = seconds.iter_mut();
        pairs.map(|(a, b)| {
            if let Some(slot) = slots.next() {
                *slot = Some(b);
            }
            a
        })
    };
    let mut out = seconds.into_iter().flatten();
    // Every slot was filled above: N pairs, N slots.
    let seconds = core::array::from_fn(|_| out.next().expect("one second per pair"));
    (firsts, seconds)
}

#[cfg(feature = "rayon")]
fn zip_par<E, const N: usize, const M: usize, F>(muts: [&mut [E]; N], refs: [&[E]; M], f: &F)
where
    E: FloatElement,
    F: Fn([&mut E::Compute; N], [E::Compute; M]) + Sync,
{
    let len = common_len(&muts, &refs);
    if len <= GRAIN {
        return zip_seq(muts, refs, f);
    }
    let mid = split_point(len);
    let (m_lo, m_hi) = unzip(muts.map(|s| s.split_at_mut(mid)));
    let (r_lo, r_hi) = unzip(refs.map(|s| s.split_at(mid)));
    rayon::join(|| zip_par(m_lo, r_lo, f), || zip_par(m_hi, r_hi, f));
}

/// Where a slice longer than [`GRAIN`] is cut: the middle, rounded down to a
/// multiple of `GRAIN`, so that both modes cut at the same places.
#[inline]
fn split_point(len: usize) -> usize {
    let chunks = len.div_ceil(GRAIN);
    (chunks / 2) * GRAIN
}

/// The sum of `f(x)` over the elements of `s`, in `f64`: eight running sums
/// per [`GRAIN`]-long block (so the loop vectorizes), blocks added in a
/// fixed tree order, the same in both modes.
///
/// ```
/// let s = [3.0f32, 4.0];
/// let n = pytree_optim::sum_slice(&s, pytree_optim::Exec::Sequential, &|x| f64::from(x * x));
/// assert_eq!(n, 25.0);
/// ```
#[inline]
pub fn sum_slice<E, F>(s: &[E], exec: Exec, f: &F) -> f64
where
    E: FloatElement,
    F: Fn(E::Compute) -> f64 + Sync,
{
    if s.len() <= GRAIN {
        return sum_block(s, f);
    }
    let (lo, hi) = s.split_at(split_point(s.len()));
    let (a, b) = match exec {
        Exec::Sequential => (sum_slice(lo, exec, f), sum_slice(hi, exec, f)),
        #[cfg(feature = "rayon")]
        Exec::Parallel => rayon::join(|| sum_slice(lo, exec, f), || sum_slice(hi, exec, f)),
    };
    a + b
}

#[inline(always)]
fn sum_block<E, F>(s: &[E], f: &F) -> f64
where
    E: FloatElement,
    F: Fn(E::Compute) -> f64,
{
    let mut acc = [0.0f64; 8];
    let chunks = s.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += f(x.load());
        }
    }
    for (a, &x) in acc.iter_mut().zip(tail) {
        *a += f(x.load());
    }
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_points_are_multiples_of_the_grain_inside_the_slice() {
        for len in [GRAIN + 1, 2 * GRAIN, 3 * GRAIN - 1, 10 * GRAIN + 7] {
            let mid = split_point(len);
            assert!(
                mid > 0 && mid < len && mid.is_multiple_of(GRAIN),
                "{len} -> {mid}"
            );
        }
    }

    #[test]
    fn a_long_zip_touches_every_element_once() {
        let n = 3 * GRAIN + 5;
        let mut a = vec![0.0f32; n];
        let b: Vec<f32> = (0..n).map(|i| i as f32).collect();
        zip_slices([&mut a[..]], [&b[..]], Exec::Sequential, &|[a], [b]| {
            *a += b + 1.0
        });
        assert!(a.iter().enumerate().all(|(i, &x)| x == i as f32 + 1.0));
    }

    #[test]
    fn sums_of_long_slices_are_exact_on_integers() {
        let n = 5 * GRAIN + 3;
        let s: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let want = (n * (n - 1) / 2) as f64;
        assert_eq!(sum_slice(&s, Exec::Sequential, &|x| x), want);
    }

    #[cfg(feature = "rayon")]
    #[test]
    fn parallel_loops_give_the_sequential_bits() {
        let n = 7 * GRAIN + 11;
        let g: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
            .collect();
        let (mut a, mut b) = (vec![1.0f32; n], vec![1.0f32; n]);
        let f = |[p]: [&mut f32; 1], [g]: [f32; 1]| *p = *p * 0.9 + g.sqrt().max(0.0);
        zip_slices([&mut a[..]], [&g[..]], Exec::Sequential, &f);
        zip_slices([&mut b[..]], [&g[..]], Exec::Parallel, &f);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        let sq = |x: f32| f64::from(x) * f64::from(x);
        let s1 = sum_slice(&g, Exec::Sequential, &sq);
        let s2 = sum_slice(&g, Exec::Parallel, &sq);
        assert_eq!(s1.to_bits(), s2.to_bits());
    }
}
