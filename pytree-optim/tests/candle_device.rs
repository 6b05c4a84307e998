//! The tensor-operation path (what runs on CUDA and Metal) against the
//! fused CPU path, on the CPU (`Exec::TensorOps` runs it on CPU
//! tensors): every optimizer and transformation over the same tree and
//! gradients, both ways. Both run the same `ElementUpdate`; the tensor path
//! rounds after each tensor operation: equal to `1e-5` relative.
#![cfg(feature = "candle")]

use pytree_optim::{
    adam, adamw, add_decayed_weights, apply_updates, chain, clip_by_global_norm, ema, masked,
    scale, scale_by_adam, scale_by_schedule, sgd, EmaOfParams, Exec, GradientTransformation, Mask,
    Wrap,
};
use pytree_std::candle_core::{DType, Device, Tensor, Var};

/// A variable's tensor, a plain tensor, a scalar tensor.
type Tree = Vec<Tensor>;

fn data(n: usize, k: f32) -> Vec<f32> {
    (0..n).map(|i| (1.7 * i as f32 + k).sin() * 3.0).collect()
}

fn tree(k: f32) -> Tree {
    let d = Device::Cpu;
    vec![
        Var::from_vec(data(6, k), (2, 3), &d).unwrap().into_inner(),
        Tensor::from_vec(data(4, k + 1.0), 4, &d).unwrap(),
        Tensor::new(2.5f32 + k, &d).unwrap(),
    ]
}

fn values(t: &Tree) -> Vec<f64> {
    let mut out = Vec::new();
    for x in t {
        out.extend(
            x.flatten_all()
                .unwrap()
                .to_dtype(DType::F64)
                .unwrap()
                .to_vec1::<f64>()
                .unwrap(),
        );
    }
    out
}

/// Runs `run` on fresh trees with the fused path (`Exec::Sequential`),
/// then with the tensor path (`Exec::TensorOps`), and compares what `run`
/// returns.
fn both_ways(what: &str, run: impl Fn(Exec) -> Vec<f64>) {
    let fused = run(Exec::Sequential);
    let ops = run(Exec::TensorOps);
    assert_eq!(fused.len(), ops.len());
    for (i, (a, b)) in fused.iter().zip(&ops).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * (1.0 + a.abs()),
            "{what} [{i}]: fused {a}, tensor ops {b}"
        );
    }
    assert!(
        fused.iter().zip(&values(&tree(0.0))).any(|(a, b)| a != b),
        "{what}: nothing changed"
    );
}

fn steps<O: GradientTransformation<Tree>>(opt: O, exec: Exec) -> Vec<f64> {
    let opt = opt.exec(exec);
    let mut p = tree(0.0);
    let mut state = opt.init(&p).unwrap();
    for k in 0..3 {
        opt.step(&mut p, &mut tree(k as f32 + 0.5), &mut state)
            .unwrap();
    }
    values(&p)
}

fn updates<O: GradientTransformation<Tree>>(opt: O, exec: Exec) -> Vec<f64> {
    let opt = opt.exec(exec);
    let mut p = tree(0.0);
    let mut state = opt.init(&p).unwrap();
    for k in 0..3 {
        let mut u = tree(k as f32 + 0.5);
        opt.update(&mut u, &mut state, &p).unwrap();
        apply_updates(&mut p, &u).unwrap();
    }
    values(&p)
}

#[test]
fn every_optimizer_runs_the_same_as_tensor_operations() {
    both_ways("sgd", |e| steps(sgd(0.1), e));
    both_ways("sgd update", |e| updates(sgd(0.1), e));
    both_ways("momentum", |e| steps(sgd(0.1).momentum(0.9), e));
    both_ways("momentum update", |e| updates(sgd(0.1).momentum(0.9), e));
    both_ways("nesterov", |e| steps(sgd(0.1).momentum(0.9).nesterov(), e));
    both_ways("nesterov update", |e| {
        updates(sgd(0.1).momentum(0.9).nesterov(), e)
    });
    both_ways("adam", |e| steps(adam(0.1), e));
    both_ways("adam update", |e| updates(adam(0.1).eps_root(1e-8), e));
    // Large enough that an `eps_root` lost by `affine` shows at 1e-5.
    both_ways("adam update, eps_root 0.5", |e| {
        updates(adam(0.1).eps_root(0.5), e)
    });
    both_ways("adamw", |e| steps(adamw(0.1, 0.5), e));
    both_ways("adamw update", |e| updates(adamw(0.1, 0.5), e));
    both_ways("masked adam", |e| {
        steps(
            adam(0.1).mask(Mask::new(|p: &pytree_std::KeyPath| p.to_string() != "[1]")),
            e,
        )
    });
    both_ways("scale_by_adam update", |e| updates(scale_by_adam(), e));
    both_ways("scale_by_adam step", |e| steps(scale_by_adam(), e));
    both_ways("optax-masked adamw", |e| {
        updates(
            masked(
                adamw(0.1, 0.5),
                Mask::new(|p: &pytree_std::KeyPath| p.to_string() != "[1]"),
            ),
            e,
        )
    });
    both_ways("masked adam update", |e| {
        updates(
            adam(0.1).mask(Mask::new(|p: &pytree_std::KeyPath| p.to_string() != "[1]")),
            e,
        )
    });
}

/// `f32` tensors take Adam's `f32` loop: the same bits as the
/// optimizer's element function over `f32` scalars.
#[test]
fn updates_of_f32_tensors_match_f32_scalars_bit_for_bit() {
    same_bits(adam(0.1));
    same_bits(adamw(0.1, 0.5));
    same_bits(adam(0.1).eps_root(1e-8));
    same_bits(sgd(0.1).momentum(0.9));
    same_bits(sgd(0.1).momentum(0.9).nesterov());
    same_bits(chain(
        ema(0.9, true),
        chain(add_decayed_weights(0.5), scale(-0.1)),
    ));
}

fn same_bits<O>(opt: O)
where
    O: GradientTransformation<Vec<Tensor>> + GradientTransformation<Vec<f32>>,
{
    {
        let mut t = vec![Tensor::from_vec(data(6, 0.0), 6, &Device::Cpu).unwrap()];
        let mut s = data(6, 0.0);
        let (mut st, mut ss) = (opt.init(&t).unwrap(), opt.init(&s).unwrap());
        for k in 0..3 {
            let g = data(6, k as f32 + 0.5);
            opt.step(
                &mut t,
                &mut vec![Tensor::from_vec(g.clone(), 6, &Device::Cpu).unwrap()],
                &mut st,
            )
            .unwrap();
            opt.step(&mut s, &mut g.clone(), &mut ss).unwrap();
            let mut u = vec![Tensor::from_vec(g.clone(), 6, &Device::Cpu).unwrap()];
            let mut us = g;
            opt.update(&mut u, &mut st, &t).unwrap();
            opt.update(&mut us, &mut ss, &s).unwrap();
            assert_eq!(u[0].to_vec1::<f32>().unwrap(), us);
        }
        assert_eq!(t[0].to_vec1::<f32>().unwrap(), s);
    }
}

#[test]
fn variables_run_the_same_as_tensor_operations() {
    let vars = |k: f32| vec![Var::from_vec(data(6, k), (3, 2), &Device::Cpu).unwrap()];
    let run = |exec| {
        let opt = chain(clip_by_global_norm(1.0), adamw(0.1, 0.1)).exec(exec);
        let mut p = vars(0.0);
        let mut state = opt.init(&p).unwrap();
        for k in 0..3 {
            opt.step(&mut p, &mut vars(k as f32 + 0.5), &mut state)
                .unwrap();
        }
        values(&vec![p[0].as_tensor().clone()])
    };
    let fused = run(Exec::Sequential);
    let ops = run(Exec::TensorOps);
    for (a, b) in fused.iter().zip(&ops) {
        assert!(
            (a - b).abs() <= 1e-5 * (1.0 + a.abs()),
            "fused {a}, tensor ops {b}"
        );
    }
    assert_ne!(
        fused,
        data(6, 0.0)
            .iter()
            .map(|&x| f64::from(x))
            .collect::<Vec<_>>()
    );
}

#[test]
fn every_transformation_runs_the_same_as_tensor_operations() {
    both_ways("clip", |e| {
        updates(chain(clip_by_global_norm(1.0), scale(-1.0)), e)
    });
    both_ways("clip below the norm", |e| {
        updates(chain(clip_by_global_norm(1e3), scale(-1.0)), e)
    });
    both_ways("clip then adamw", |e| {
        steps(chain(clip_by_global_norm(0.5), adamw(0.1, 0.1)), e)
    });
    both_ways("scale by schedule", |e| {
        updates(scale_by_schedule(|n: u64| -0.1 * (n + 1) as f64), e)
    });
    both_ways("add decayed weights", |e| {
        updates(add_decayed_weights(0.3), e)
    });
    both_ways("ema", |e| {
        let mut p = tree(0.0);
        let mut ema = EmaOfParams::new(0.9, &p).unwrap().exec(e);
        for k in 0..3 {
            p = tree(k as f32 + 1.0);
            ema.update(&p).unwrap();
        }
        values(ema.average())
    });
}

/// A closure in `f64` over `f32` tensors in CPU memory (no
/// `ElementUpdate`): each element widened, computed and rounded, on one
/// thread or split across rayon's, the same bits as a hand loop.
#[test]
fn a_closure_over_f32_tensors_widens_each_element_on_any_exec() {
    use pytree_optim::{Exec, FloatLeaf, GRAIN};
    let n = 3 * GRAIN + 5;
    let (x0, y) = (data(n, 0.0), data(n, 1.0));
    let f = |[x]: [&mut f64; 1], [y]: [f64; 1]| *x = *x * 0.5 + y.abs().sqrt();
    let expected: Vec<f32> = x0
        .iter()
        .zip(&y)
        .map(|(&x, &y)| {
            let mut w = f64::from(x);
            f([&mut w], [f64::from(y)]);
            w as f32
        })
        .collect();
    let execs = [
        Exec::Sequential,
        #[cfg(feature = "rayon")]
        Exec::Parallel,
    ];
    for exec in execs {
        let mut x = Tensor::from_vec(x0.clone(), n, &Device::Cpu).unwrap();
        let r = Tensor::from_vec(y.clone(), n, &Device::Cpu).unwrap();
        <Tensor as FloatLeaf>::zip_elements([&mut x], [&r], exec, &f).unwrap();
        assert_eq!(x.to_vec1::<f32>().unwrap(), expected, "{exec:?}");
    }
}
