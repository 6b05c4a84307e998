//! pytree-optim's candle device path on a CUDA GPU (issue 28's open item):
//! correctness against the same optimizer on the CPU (f32 fused path) and
//! against candle-nn's AdamW on the GPU; speed against candle-nn's AdamW on
//! the same variables, same run; with `--cpu`, the CPU step's scaling over
//! rayon threads. GPT-2 small shapes (148 f32 tensors, 124M parameters).
//! Built by build.sh, run by run.sh on a GPU machine (BENCHMARKS.md).
use std::time::Instant;

use candle_core::{backprop::GradStore, DType, Device, Tensor, Var};
use candle_nn::Optimizer;
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_optim::{adamw, chain, clip_by_global_norm, sgd, GradientTransformation};

fn vars(tree: &Gpt2, dev: &Device) -> Vec<Var> {
    pytree_std::leaves(tree)
        .into_iter()
        .map(|a| Var::from_slice(a.as_slice().unwrap(), a.shape(), dev).unwrap())
        .collect()
}

fn host(v: &[Var]) -> Vec<Vec<f32>> {
    v.iter()
        .map(|t| {
            t.as_tensor()
                .flatten_all()
                .unwrap()
                .to_device(&Device::Cpu)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        })
        .collect()
}

/// (max abs diff, max distance between the bit patterns, elements
/// differing). The bit distance is only a count of ulps between numbers of
/// one sign: two values either side of zero are billions apart.
fn compare(a: &[Vec<f32>], b: &[Vec<f32>]) -> (f64, u64, usize) {
    let (mut abs, mut ulp, mut n) = (0f64, 0u64, 0usize);
    for (x, y) in a.iter().zip(b) {
        for (p, q) in x.iter().zip(y) {
            if p.to_bits() != q.to_bits() {
                n += 1;
                abs = abs.max((*p as f64 - *q as f64).abs());
                ulp = ulp.max((p.to_bits() as i64 - q.to_bits() as i64).unsigned_abs());
            }
        }
    }
    (abs, ulp, n)
}

/// candle-nn's `AdamW` (the same hyperparameters as `adamw(1e-3, 0.01)`)
/// over the tree's variables on `dev`, with its gradients in a store.
fn candle_nn_adamw(
    params: &Gpt2,
    grads: &Gpt2,
    dev: &Device,
) -> (Vec<Var>, GradStore, candle_nn::AdamW) {
    let p = vars(params, dev);
    let mut store = GradStore::default();
    for (p, g) in p.iter().zip(vars(grads, dev)) {
        store.insert(p, g.as_tensor().clone());
    }
    let cfg = candle_nn::ParamsAdamW {
        lr: 1e-3,
        weight_decay: 0.01,
        ..Default::default()
    };
    let o = candle_nn::AdamW::new(p.clone(), cfg).unwrap();
    (p, store, o)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn run_steps<T: GradientTransformation<Vec<Var>>>(
    opt: &T,
    dev: &Device,
    params: &Gpt2,
    grads: &Gpt2,
    k: usize,
) -> Vec<Vec<f32>>
where
    T::State: Sized,
{
    let mut p = vars(params, dev);
    let mut g = vars(grads, dev);
    let mut s = opt.init(&p).unwrap();
    for _ in 0..k {
        opt.step(&mut p, &mut g, &mut s).unwrap();
    }
    host(&p)
}

/// The median of 6 steps of `opt` over copies of the trees, after 2.
fn cpu_step_ms<T: GradientTransformation<Gpt2>>(opt: &T, params: &Gpt2, grads: &Gpt2) -> f64 {
    let (mut p, mut g) = (params.clone(), grads.clone());
    let mut s = opt.init(&p).unwrap();
    let mut v = Vec::new();
    for i in 0..8 {
        let t = Instant::now();
        opt.step(&mut p, &mut g, &mut s).unwrap();
        if i >= 2 {
            v.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    median(v)
}

fn cpu_scaling(params: &Gpt2, grads: &Gpt2) {
    use pytree_optim::{Exec, Wrap};
    let n = Dims::SMALL.parameters();
    let seq = cpu_step_ms(&adamw(1e-3, 0.01), params, grads);
    println!("cpu adamw step over ndarray f32, {n} params: sequential {seq:.2} ms");
    for threads in [1usize, 2, 4, 8, 16] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let opt = adamw(1e-3, 0.01).exec(Exec::Parallel);
        let ms = pool.install(|| cpu_step_ms(&opt, params, grads));
        println!("cpu adamw step Exec::Parallel, {threads} threads: {ms:.2} ms, speed-up over sequential {:.2}x", seq / ms);
    }
}

fn main() {
    if std::env::args().any(|a| a == "--cpu") {
        let params = Gpt2::new(Dims::SMALL, 1, 0.02);
        let grads = Gpt2::new(Dims::SMALL, 2, 1e-3);
        cpu_scaling(&params, &grads);
        return;
    }
    let dims = Dims::SMALL;
    let n = dims.parameters();
    let gpu = Device::new_cuda(0).expect("cuda device");
    let params = Gpt2::new(dims, 1, 0.02);
    let grads = Gpt2::new(dims, 2, 1e-3);
    let k = 5;
    println!(
        "parameters {n}, {} tensors",
        pytree_std::leaves(&params).len()
    );

    // Correctness: k steps on the GPU (tensor ops) vs the CPU (f32 fused loop).
    let cases: Vec<(&str, Box<dyn Fn(&Device) -> Vec<Vec<f32>>>)> = vec![
        (
            "adamw(1e-3, 0.01)",
            Box::new(|d: &Device| run_steps(&adamw(1e-3, 0.01), d, &params, &grads, k)),
        ),
        (
            "sgd(0.1).momentum(0.9).nesterov()",
            Box::new(|d: &Device| {
                run_steps(&sgd(0.1).momentum(0.9).nesterov(), d, &params, &grads, k)
            }),
        ),
        (
            "chain(clip_by_global_norm(0.01), adamw)",
            Box::new(|d: &Device| {
                run_steps(
                    &chain(clip_by_global_norm(0.01), adamw(1e-3, 0.01)),
                    d,
                    &params,
                    &grads,
                    k,
                )
            }),
        ),
    ];
    for (name, f) in &cases {
        let t = Instant::now();
        let on_gpu = f(&gpu);
        let g_s = t.elapsed().as_secs_f64();
        let on_cpu = f(&Device::Cpu);
        let (abs, ulp, diff) = compare(&on_gpu, &on_cpu);
        println!("check {name}: {k} steps, gpu vs cpu: {diff} of {n} elements differ, max abs {abs:.3e}, max ulp {ulp} (gpu run {g_s:.2}s incl. init)");
    }
    // Against candle-nn's AdamW on the GPU.
    {
        let ours = run_steps(&adamw(1e-3, 0.01), &gpu, &params, &grads, k);
        let (p, store, mut o) = candle_nn_adamw(&params, &grads, &gpu);
        for _ in 0..k {
            o.step(&store).unwrap();
        }
        let (abs, ulp, diff) = compare(&ours, &host(&p));
        println!("check adamw vs candle-nn AdamW on gpu: {k} steps: {diff} of {n} differ, max abs {abs:.3e}, max ulp {ulp}");
    }

    // Speed: one AdamW step, median of 30 after 5 warm-ups, synchronized.
    let reps = 30;
    let time = |f: &mut dyn FnMut()| -> f64 {
        for _ in 0..5 {
            f();
        }
        gpu.synchronize().unwrap();
        let mut v = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            f();
            gpu.synchronize().unwrap();
            v.push(t.elapsed().as_secs_f64() * 1e3);
        }
        median(v)
    };
    let opt = adamw(1e-3, 0.01);
    let mut p = vars(&params, &gpu);
    let mut g = vars(&grads, &gpu);
    let mut s = opt.init(&p).unwrap();
    let ours = time(&mut || opt.step(&mut p, &mut g, &mut s).unwrap());
    let (_, store, mut o) = candle_nn_adamw(&params, &grads, &gpu);
    let theirs = time(&mut || o.step(&store).unwrap());
    // A copy of the bytes an AdamW step must move at least (read p, g, m, v; write p, m, v: 28 B/param) as a floor:
    let a = Tensor::zeros(n * 7 / 2, DType::F32, &gpu).unwrap();
    let copy = time(&mut || {
        let _ = a.copy().unwrap();
    });
    println!("speed adamw step (ms, median of {reps}): pytree-optim {ours:.3}, candle-nn AdamW {theirs:.3}, ratio {:.3}; copy of 14 B/param (28 B moved) {copy:.3}", ours / theirs);
}
