//! The element loops every leaf type ends in: `N` mutable and `M` shared
//! slices of one length walked in lockstep with a closure over elements
//! ([`zip_slices`]), and a sum over one slice ([`sum_slice`]). With
//! [`Exec::Parallel`] (feature `rayon`) a long slice is cut in halves,
//! recursively, down to [`GRAIN`] elements, and the halves run on rayon's
//! threads; the cuts are the same in both modes, so a sum gives the same
//! bits sequentially and in parallel.
//!
//! **Run-time CPU dispatch.** A default build compiles for baseline x86-64
//! (SSE2). On an x86-64 CPU with AVX2 and FMA (checked once with
//! `is_x86_feature_detected!`, then cached by std), the loops of slices of
//! at least [`DISPATCH_MIN`] elements run in a copy compiled with
//! `#[target_feature(enable = "avx2,fma")]`: the closure is inlined into it
//! and vectorized 8 `f32` wide, so a default build runs the Adam step as
//! fast as a `-C target-cpu=native` one. The results are the same bits:
//! Rust never contracts `a * b + c` into a fused multiply-add (only
//! `mul_add` does, and the loops do not call it), and `+ - * / sqrt` are
//! correctly rounded at any vector width; a sum keeps its eight running
//! sums in the same order. Other targets, and a build that already enables
//! AVX2 and FMA at compile time, run the one loop. Compiled with Rust 1.89
//! or later (which accepts `#[target_feature(enable = "avx512f")]`; the
//! build script checks the compiler's version), a CPU with AVX-512F runs
//! a third copy, 16 `f32` wide, with the same bits again.

use super::element::shortest;
use crate::elements::FloatElement;

/// How a transformation runs its element loops.
///
/// ```
/// use pytree_std::elements::Exec;
/// assert_eq!(Exec::default(), Exec::Sequential);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Exec {
    /// On the calling thread.
    #[default]
    Sequential,
    /// Leaves longer than [`GRAIN`] elements are split across rayon's
    /// threads (feature `rayon`).
    #[cfg(feature = "rayon")]
    Parallel,
    /// Tensors run the path of tensors off the CPU wherever they are:
    /// candle tensors in CPU memory are updated as whole-tensor candle
    /// operations (what CUDA and Metal tensors always run) instead of the
    /// in-place element loop, and `clip_by_global_norm` keeps its norm as
    /// a tensor. For comparing the two paths on a machine without a GPU;
    /// leaves with no tensor path (numbers, `Vec`s, arrays) run as
    /// [`Sequential`](Exec::Sequential).
    ///
    /// ```
    /// use pytree_std::elements::{zip_slices, Exec};
    /// let mut x = [1.0f32, 2.0];
    /// zip_slices([&mut x[..]], [], Exec::TensorOps, &|[x], []| *x *= 2.0);
    /// assert_eq!(x, [2.0, 4.0]);
    /// ```
    TensorOps,
}

/// The length below which a slice is not split further: 32 Ki elements
/// (128 KiB of `f32` per slice), long enough that a fork costs well under
/// 1 % of the work it hands out.
pub const GRAIN: usize = 1 << 15;

/// The shortest slice whose loop is dispatched to the AVX2 + FMA copy
/// (shorter ones run inline, where a call would cost more than it saves).
///
/// ```
/// assert_eq!(pytree_std::elements::DISPATCH_MIN, 64);
/// ```
pub const DISPATCH_MIN: usize = 64;

/// Whether the loops run in their AVX2 + FMA copy on this CPU (x86-64
/// with both features, detected at run time; `false` elsewhere, and
/// `false` where the build enables both at compile time, since then the
/// one loop already uses them).
///
/// ```
/// let fast = pytree_std::elements::avx2_dispatch();
/// # let _ = fast;
/// ```
#[inline]
pub fn avx2_dispatch() -> bool {
    #[cfg(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    ))]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    )))]
    {
        false
    }
}

/// [`zip_slices`] over `f64` vectors, each tensor's elements read to the
/// host by `read`: the new elements of `muts`, in order. The host
/// fallback of the tensor leaves (candle's, burn's).
#[cfg(any(feature = "candle", feature = "burn"))]
pub(crate) fn zip_host_vecs<T, const N: usize, const M: usize, F>(
    muts: [&T; N],
    refs: [&T; M],
    read: impl Fn(&T) -> Result<Vec<f64>, pytree_core::Error>,
    exec: Exec,
    f: &F,
) -> Result<Vec<Vec<f64>>, pytree_core::Error>
where
    F: Fn([&mut f64; N], [f64; M]) + Sync,
{
    let mut muts = muts.map(&read).into_iter().collect::<Result<Vec<_>, _>>()?;
    let refs = refs.map(&read).into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut mi = muts.iter_mut();
    let ms: [&mut [f64]; N] = core::array::from_fn(|_| match mi.next() {
        Some(v) => &mut v[..],
        None => &mut [],
    });
    let mut ri = refs.iter();
    let rs: [&[f64]; M] = core::array::from_fn(|_| match ri.next() {
        Some(v) => &v[..],
        None => &[],
    });
    zip_slices(ms, rs, exec, f);
    Ok(muts)
}

/// Runs `f` over the elements of `N` mutable and `M` shared slices of the
/// same length, in lockstep (callers check the lengths; a longer slice's
/// tail is left alone). For `f32` / `f64` the loads and stores are plain
/// moves, and the loop is the one a human writes over `zip`ped slices.
///
/// ```
/// let (mut p, g) = (vec![1.0f32, 2.0], vec![0.5f32, 0.5]);
/// pytree_std::elements::zip_slices([&mut p[..]], [&g[..]], pytree_std::elements::Exec::Sequential,
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
    let len = shortest(&muts, &refs);
    let muts = muts.map(|s| &mut s[..len]);
    let refs = refs.map(|s| &s[..len]);
    match exec {
        #[cfg(feature = "rayon")]
        Exec::Parallel => zip_par(muts, refs, f),
        Exec::Sequential | Exec::TensorOps => zip_seq(muts, refs, f),
    }
}

/// The sequential loop. All slices have the same length `len` here, so the
/// index checks fold away and the loop vectorizes; long slices run in the
/// AVX2 + FMA copy where the CPU has them.
#[inline(always)]
fn zip_seq<E, const N: usize, const M: usize, F>(muts: [&mut [E]; N], refs: [&[E]; M], f: &F)
where
    E: FloatElement,
    F: Fn([&mut E::Compute; N], [E::Compute; M]),
{
    #[cfg(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    ))]
    if shortest(&muts, &refs) >= DISPATCH_MIN {
        #[cfg(all(pytree_avx512, not(target_feature = "avx512f")))]
        if avx512_dispatch() {
            // SAFETY: `avx512_dispatch()` just returned true, so
            // `is_x86_feature_detected!` found AVX-512F, AVX2 and FMA on
            // this CPU: the features `avx512::zip` is compiled with.
            unsafe { avx512::zip(muts, refs, f) };
            return;
        }
        if avx2_dispatch() {
            // SAFETY: `avx2_dispatch()` just returned true, so
            // `is_x86_feature_detected!` found both AVX2 and FMA on this
            // CPU: the features `avx2::zip` is compiled with.
            unsafe { avx2::zip(muts, refs, f) };
            return;
        }
    }
    E::zip_run(muts, refs, f)
}

/// Whether the CPU has AVX-512F (with AVX2 and FMA), for the AVX-512 copy
/// of the loops (compiled with Rust 1.89 and later: `cfg(pytree_avx512)`,
/// set by the build script).
#[cfg(all(target_arch = "x86_64", pytree_avx512, not(target_feature = "avx512f")))]
#[inline]
fn avx512_dispatch() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && avx2_dispatch()
}

/// A module of the element loops compiled with `#[target_feature(enable =
/// $features)]`: the same code as the baseline's ([`FloatElement::zip_run`]
/// and [`sum_block_inline`], the closure inlined into them), called only
/// where the CPU has those features.
macro_rules! feature_loops {
    ($(#[$attr:meta])* mod $name:ident = $features:literal) => {
        $(#[$attr])*
        mod $name {
            use crate::elements::FloatElement;

            /// [`FloatElement::zip_run`] (and `f`, inlined into it)
            /// compiled for these features.
            #[target_feature(enable = $features)]
            pub(super) fn zip<E, const N: usize, const M: usize, F>(
                muts: [&mut [E]; N],
                refs: [&[E]; M],
                f: &F,
            ) where
                E: FloatElement,
                F: Fn([&mut E::Compute; N], [E::Compute; M]),
            {
                E::zip_run(muts, refs, f)
            }

            /// [`sum_block`](crate::elements::float::kernel::sum_block) compiled for these features.
            #[target_feature(enable = $features)]
            pub(super) fn sum<E, F>(s: &[E], f: &F) -> f64
            where
                E: FloatElement,
                F: Fn(E::Compute) -> f64,
            {
                crate::elements::float::kernel::sum_block_inline(s, f)
            }
        }
    };
}

feature_loops! {
    /// The loops compiled for AVX-512F (with AVX2 and FMA), called only
    /// where the CPU has them; 16 `f32` wide.
    #[cfg(all(target_arch = "x86_64", pytree_avx512, not(target_feature = "avx512f")))]
    mod avx512 = "avx512f,avx2,fma"
}

feature_loops! {
    /// The loops compiled for AVX2 + FMA, called only where the CPU has both.
    #[cfg(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    ))]
    mod avx2 = "avx2,fma"
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
    let len = shortest(&muts, &refs);
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
/// let n = pytree_std::elements::sum_slice(&s, pytree_std::elements::Exec::Sequential, &|x| f64::from(x * x));
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
        #[cfg(feature = "rayon")]
        Exec::Parallel => rayon::join(|| sum_slice(lo, exec, f), || sum_slice(hi, exec, f)),
        Exec::Sequential | Exec::TensorOps => (sum_slice(lo, exec, f), sum_slice(hi, exec, f)),
    };
    a + b
}

/// The sum of one block, in the AVX2 + FMA copy where the CPU has both.
#[inline(always)]
fn sum_block<E, F>(s: &[E], f: &F) -> f64
where
    E: FloatElement,
    F: Fn(E::Compute) -> f64,
{
    #[cfg(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    ))]
    if s.len() >= DISPATCH_MIN {
        #[cfg(all(pytree_avx512, not(target_feature = "avx512f")))]
        if avx512_dispatch() {
            // SAFETY: `avx512_dispatch()` just returned true, so
            // `is_x86_feature_detected!` found AVX-512F, AVX2 and FMA on
            // this CPU: the features `avx512::sum` is compiled with.
            return unsafe { avx512::sum(s, f) };
        }
        if avx2_dispatch() {
            // SAFETY: `avx2_dispatch()` just returned true, so
            // `is_x86_feature_detected!` found both AVX2 and FMA on this
            // CPU: the features `avx2::sum` is compiled with.
            return unsafe { avx2::sum(s, f) };
        }
    }
    sum_block_inline(s, f)
}

#[inline(always)]
fn sum_block_inline<E, F>(s: &[E], f: &F) -> f64
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

    /// `n` gradients, scattered over [-0.5, 0.5).
    fn gradients(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
            .collect()
    }

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

    /// The dispatched loops (AVX2 + FMA where the CPU has them) give the
    /// bits of the baseline loop, called directly (compiled for the build's
    /// target, SSE2 by default), on Adam's element math: `*`, `+`, `/`,
    /// `sqrt`, and a sum of squares.
    #[test]
    fn dispatched_loops_give_the_baseline_bits() {
        let n = 3 * GRAIN + 77;
        let g = gradients(n);
        let (b1, b2, c1, c2, lr, eps) = (0.9f32, 0.999f32, 10.0f32, 1000.0f32, -1e-3f32, 1e-8f32);
        let adam = |[p, m, v]: [&mut f32; 3], [g]: [f32; 1]| {
            *m = (1.0 - b1) * g + b1 * *m;
            *v = (1.0 - b2) * (g * g) + b2 * *v;
            *p += lr * ((*m * c1) / ((*v * c2).sqrt() + eps));
        };
        let start = |k: f32| -> Vec<f32> { (0..n).map(|i| (i % 13) as f32 * k).collect() };
        let (mut p1, mut m1, mut v1) = (start(0.1), start(0.01), start(0.001));
        let (mut p2, mut m2, mut v2) = (p1.clone(), m1.clone(), v1.clone());
        for _ in 0..3 {
            <f32 as FloatElement>::zip_run(
                [&mut p1[..], &mut m1[..], &mut v1[..]],
                [&g[..]],
                &adam,
            );
            zip_slices(
                [&mut p2[..], &mut m2[..], &mut v2[..]],
                [&g[..]],
                Exec::Sequential,
                &adam,
            );
        }
        let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same(&p1, &p2) && same(&m1, &m2) && same(&v1, &v2));
        assert!(p1 != start(0.1));
        let sq = |x: f32| f64::from(x) * f64::from(x);
        for len in [GRAIN, 100, DISPATCH_MIN, DISPATCH_MIN - 1] {
            let base = sum_block_inline(&g[..len], &sq);
            assert_eq!(
                base.to_bits(),
                sum_slice(&g[..len], Exec::Sequential, &sq).to_bits()
            );
        }
    }

    #[cfg(feature = "rayon")]
    #[test]
    fn parallel_loops_give_the_sequential_bits() {
        let n = 7 * GRAIN + 11;
        let g = gradients(n);
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
