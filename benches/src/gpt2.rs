//! GPT-2 small's parameter shapes (issue 10's Adam figures,
//! `anchors/adam_gpt2.py`) as a derived pytree of ndarray arrays, and the Adam step
//! written by hand over the same arrays: the baseline for `pytree-optim`'s
//! `adam`.
//!
//! [`Dims::SMALL`] is GPT-2 small: `wte` 50257x768, `wpe` 1024x768, 12
//! blocks (`ln_1`, `attn.c_attn`, `attn.c_proj`, `ln_2`, `mlp.c_fc`,
//! `mlp.c_proj`), `ln_f`: 148 `f32` tensors, 124,439,808 parameters, in the
//! Python script's order.

use pytree_std::ndarray::{Array1, Array2};
use pytree_std::PyTree;

/// A layer norm's scale and shift.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct LayerNorm {
    /// Scale.
    pub g: Array1<f32>,
    /// Shift.
    pub b: Array1<f32>,
}

/// A dense layer (GPT-2's `Conv1D`: `w` is in x out).
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Linear {
    /// Weights.
    pub w: Array2<f32>,
    /// Bias.
    pub b: Array1<f32>,
}

/// Self-attention's projections.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Attn {
    /// Query, key and value at once (d x 3d).
    pub c_attn: Linear,
    /// Output (d x d).
    pub c_proj: Linear,
}

/// The feed-forward block.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Mlp {
    /// d x 4d.
    pub c_fc: Linear,
    /// 4d x d.
    pub c_proj: Linear,
}

/// One transformer block.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Block {
    /// Before attention.
    pub ln_1: LayerNorm,
    /// Attention.
    pub attn: Attn,
    /// Before the MLP.
    pub ln_2: LayerNorm,
    /// The MLP.
    pub mlp: Mlp,
}

/// GPT-2's parameters.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Gpt2 {
    /// Token embeddings (vocab x d).
    pub wte: Array2<f32>,
    /// Position embeddings (ctx x d).
    pub wpe: Array2<f32>,
    /// The blocks.
    pub h: Vec<Block>,
    /// The final layer norm.
    pub ln_f: LayerNorm,
}

/// The model's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Width.
    pub d: usize,
    /// Vocabulary.
    pub vocab: usize,
    /// Context length.
    pub ctx: usize,
    /// Blocks.
    pub layers: usize,
}

impl Dims {
    /// GPT-2 small.
    pub const SMALL: Dims = Dims {
        d: 768,
        vocab: 50257,
        ctx: 1024,
        layers: 12,
    };

    /// The number of parameters.
    pub fn parameters(self) -> usize {
        let Dims {
            d,
            vocab,
            ctx,
            layers,
        } = self;
        let block = 2 * d
            + (d * 3 * d + 3 * d)
            + (d * d + d)
            + 2 * d
            + (d * 4 * d + 4 * d)
            + (4 * d * d + d);
        vocab * d + ctx * d + layers * block + 2 * d
    }
}

/// Deterministic values in `[-scale, scale)` (xorshift64*), so that runs
/// and tests see the same numbers.
fn filler(seed: u64, scale: f32) -> impl FnMut() -> f32 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        let x = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32;
        (2.0 * x - 1.0) * scale
    }
}

/// Builds arrays from a [`filler`].
struct Fill<F>(F);

impl<F: FnMut() -> f32> Fill<F> {
    fn a1(&mut self, n: usize) -> Array1<f32> {
        Array1::from_shape_simple_fn(n, &mut self.0)
    }
    fn a2(&mut self, rows: usize, cols: usize) -> Array2<f32> {
        Array2::from_shape_simple_fn((rows, cols), &mut self.0)
    }
    fn ln(&mut self, d: usize) -> LayerNorm {
        LayerNorm {
            g: self.a1(d),
            b: self.a1(d),
        }
    }
    fn linear(&mut self, rows: usize, cols: usize) -> Linear {
        Linear {
            w: self.a2(rows, cols),
            b: self.a1(cols),
        }
    }
}

impl Gpt2 {
    /// A model of sizes `dims` whose elements are drawn from `[-scale, scale)`
    /// with `seed` (0.0 for `scale` gives zeros).
    pub fn new(dims: Dims, seed: u64, scale: f32) -> Gpt2 {
        let mut f = Fill(filler(seed, scale));
        let d = dims.d;
        let wte = f.a2(dims.vocab, d);
        let wpe = f.a2(dims.ctx, d);
        let h = (0..dims.layers)
            .map(|_| Block {
                ln_1: f.ln(d),
                attn: Attn {
                    c_attn: f.linear(d, 3 * d),
                    c_proj: f.linear(d, d),
                },
                ln_2: f.ln(d),
                mlp: Mlp {
                    c_fc: f.linear(d, 4 * d),
                    c_proj: f.linear(4 * d, d),
                },
            })
            .collect();
        let ln_f = f.ln(d);
        Gpt2 { wte, wpe, h, ln_f }
    }
}

/// Where the checkpoint benches write their files: `$CKPT_DIR`, else
/// `/dev/shm` where it exists (memory, so that the figures measure the
/// libraries, not the disk), else the temporary folder.
pub fn checkpoint_dir() -> std::path::PathBuf {
    match std::env::var_os("CKPT_DIR") {
        Some(d) => d.into(),
        None if std::path::Path::new("/dev/shm").is_dir() => "/dev/shm".into(),
        None => std::env::temp_dir(),
    }
}

/// Adam's constants for one step, computed as `pytree-optim` computes them
/// (`f64`, then rounded to `f32`).
#[derive(Clone, Copy, Debug)]
pub struct HandAdam {
    b1: f32,
    b2: f32,
    one_minus_b1: f32,
    one_minus_b2: f32,
    inv_c1: f32,
    inv_c2: f32,
    eps: f32,
    eps_root: f32,
    neg_lr: f32,
}

impl HandAdam {
    /// The constants of update number `count + 1` with learning rate `lr`
    /// and optax's defaults (b1 0.9, b2 0.999, eps 1e-8, eps_root 0).
    pub fn new(lr: f64, count: u64) -> HandAdam {
        let (b1, b2) = (0.9f64, 0.999f64);
        let t = (count + 1) as f64;
        HandAdam {
            b1: b1 as f32,
            b2: b2 as f32,
            one_minus_b1: (1.0 - b1) as f32,
            one_minus_b2: (1.0 - b2) as f32,
            inv_c1: (1.0 / (1.0 - b1.powf(t))) as f32,
            inv_c2: (1.0 / (1.0 - b2.powf(t))) as f32,
            eps: 1e-8,
            eps_root: 0.0,
            neg_lr: -lr as f32,
        }
    }
}

/// The fused Adam loop over one array's slices, as a human writes it.
#[inline]
pub fn adam_slices(p: &mut [f32], m: &mut [f32], v: &mut [f32], g: &[f32], k: HandAdam) {
    for (((p, m), v), &g) in p.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(g) {
        *m = k.one_minus_b1 * g + k.b1 * *m;
        *v = k.one_minus_b2 * (g * g) + k.b2 * *v;
        let m_hat = *m * k.inv_c1;
        let v_hat = *v * k.inv_c2;
        *p += k.neg_lr * (m_hat / ((v_hat + k.eps_root).sqrt() + k.eps));
    }
}

/// Calls `f` on the slices of the same array of the four models, for every
/// array, field by field (what a user without a pytree library writes).
pub fn for_each_array4(
    p: &mut Gpt2,
    m: &mut Gpt2,
    v: &mut Gpt2,
    g: &Gpt2,
    f: &mut impl FnMut(&mut [f32], &mut [f32], &mut [f32], &[f32]),
) {
    fn s1(a: &mut Array1<f32>) -> &mut [f32] {
        a.as_slice_mut().expect("standard layout")
    }
    fn s2(a: &mut Array2<f32>) -> &mut [f32] {
        a.as_slice_mut().expect("standard layout")
    }
    fn r1(a: &Array1<f32>) -> &[f32] {
        a.as_slice().expect("standard layout")
    }
    fn r2(a: &Array2<f32>) -> &[f32] {
        a.as_slice().expect("standard layout")
    }
    macro_rules! a2 {
        ($($f:tt)+) => {
            f(s2(&mut p.$($f)+), s2(&mut m.$($f)+), s2(&mut v.$($f)+), r2(&g.$($f)+))
        };
    }
    macro_rules! a1 {
        ($($f:tt)+) => {
            f(s1(&mut p.$($f)+), s1(&mut m.$($f)+), s1(&mut v.$($f)+), r1(&g.$($f)+))
        };
    }
    a2!(wte);
    a2!(wpe);
    for i in 0..p.h.len() {
        a1!(h[i].ln_1.g);
        a1!(h[i].ln_1.b);
        a2!(h[i].attn.c_attn.w);
        a1!(h[i].attn.c_attn.b);
        a2!(h[i].attn.c_proj.w);
        a1!(h[i].attn.c_proj.b);
        a1!(h[i].ln_2.g);
        a1!(h[i].ln_2.b);
        a2!(h[i].mlp.c_fc.w);
        a1!(h[i].mlp.c_fc.b);
        a2!(h[i].mlp.c_proj.w);
        a1!(h[i].mlp.c_proj.b);
    }
    a1!(ln_f.g);
    a1!(ln_f.b);
}

/// One Adam step written by hand, on one thread: `p`, `m`, `v` updated
/// from `g` in one fused pass per array.
pub fn adam_hand(p: &mut Gpt2, m: &mut Gpt2, v: &mut Gpt2, g: &Gpt2, k: HandAdam) {
    for_each_array4(p, m, v, g, &mut |p, m, v, g| adam_slices(p, m, v, g, k));
}

/// One Adam step written by hand with rayon: each array cut into chunks of
/// `chunk` elements, the chunks spread over rayon's threads.
pub fn adam_hand_parallel(
    p: &mut Gpt2,
    m: &mut Gpt2,
    v: &mut Gpt2,
    g: &Gpt2,
    k: HandAdam,
    chunk: usize,
) {
    use rayon::prelude::*;
    for_each_array4(p, m, v, g, &mut |p, m, v, g| {
        p.par_chunks_mut(chunk)
            .zip(m.par_chunks_mut(chunk))
            .zip(v.par_chunks_mut(chunk))
            .zip(g.par_chunks(chunk))
            .for_each(|(((p, m), v), g)| adam_slices(p, m, v, g, k));
    });
}

/// A STREAM-style triad, `a = b + s * c`, on one thread: 12 bytes per
/// element by STREAM's count (read `b` and `c`, write `a`); the hardware
/// moves 16, as the cache line of `a` is fetched before it is written.
pub fn triad(a: &mut [f32], b: &[f32], c: &[f32], s: f32) {
    for ((a, &b), &c) in a.iter_mut().zip(b).zip(c) {
        *a = b + s * c;
    }
}

/// An in-place triad, `a += s * b` (STREAM's "daxpy"): 12 bytes per
/// element, every one of them moved (`a` is read before it is written, so
/// no cache line is fetched only to be overwritten, as in Adam, whose
/// writes all go to lines it has just read).
pub fn triad_in_place(a: &mut [f32], b: &[f32], s: f32) {
    for (a, &b) in a.iter_mut().zip(b) {
        *a += s * b;
    }
}

/// [`triad_in_place`] with rayon, in chunks of `chunk` elements.
pub fn triad_in_place_parallel(a: &mut [f32], b: &[f32], s: f32, chunk: usize) {
    use rayon::prelude::*;
    a.par_chunks_mut(chunk)
        .zip(b.par_chunks(chunk))
        .for_each(|(a, b)| triad_in_place(a, b, s));
}

/// [`triad`] with rayon, in chunks of `chunk` elements.
pub fn triad_parallel(a: &mut [f32], b: &[f32], c: &[f32], s: f32, chunk: usize) {
    use rayon::prelude::*;
    a.par_chunks_mut(chunk)
        .zip(b.par_chunks(chunk))
        .zip(c.par_chunks(chunk))
        .for_each(|((a, b), c)| triad(a, b, c, s));
}
