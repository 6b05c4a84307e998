//! The optimizers against optax itself. The reference numbers in
//! `tests/data/optax_reference.json` were produced by
//! `tests/data/make_optax_reference.py` running optax 0.2.8 on jax 0.10.2
//! (CPU, float32; the versions of `benches/python/requirements.txt`): a
//! small tree `{"b": f32[3], "s": f32[], "w": f32[2,3]}` trained for four
//! steps with fixed gradients, the parameters recorded after every step.
//! Here the same tree is a derived struct, with scalar leaves, ndarray
//! arrays (feature `ndarray`) and candle tensors (feature `candle`).
//!
//! optax computes in `f32` with its own order of rounding (its bias
//! corrections `1 - b^t` in `f32`, ours in `f64` then rounded), so results
//! agree to a few `f32` ulps: the tolerance is `2e-6 * (1 + |x|)`.

use pytree_optim::{
    adam, adamw, chain, clip_by_global_norm, cosine_decay_schedule, ema, linear_schedule, masked,
    multi_transform, scale, scale_by_adam, scale_by_learning_rate, set_to_zero, sgd, trace,
    warmup_cosine_decay_schedule, FloatLeaf, GradientTransformation, Mask, Schedule, Wrap,
};
use pytree_std::{KeyPath, PyTree};
use serde_json::Value;

mod optax_small;
use optax_small::{by_field, check, close, leaf, reference, small};

/// Runs `opt` from the JSON's initial parameters with its gradients and
/// checks the parameters after every step against optax's.
fn run_case<P, T>(
    r: &Value,
    name: &str,
    opt: T,
    model: &dyn Fn(&Value) -> P,
    check: &dyn Fn(&P, &Value, &str),
) where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    let mut p = model(&r["params0"]);
    let mut state = opt.init(&p).expect("init");
    let steps = r["grads"].as_array().expect("grads");
    assert_eq!(steps.len(), 4);
    for (t, g) in steps.iter().enumerate() {
        opt.step(&mut p, &mut model(g), &mut state).expect("step");
        check(&p, &r["cases"][name][t], &format!("{name} step {}", t + 1));
    }
}

/// Every case of the JSON, built with this crate.
fn run_all<P>(model: &dyn Fn(&Value) -> P, check: &dyn Fn(&P, &Value, &str))
where
    P: PyTree + Clone,
    P::Leaf: FloatLeaf,
{
    let r = reference();
    let decay_w = || Mask::new(|p: &KeyPath| p.to_string().starts_with(".w"));
    run_case(&r, "sgd", sgd(0.1), model, check);
    run_case(&r, "sgd_momentum", sgd(0.1).momentum(0.9), model, check);
    run_case(
        &r,
        "sgd_nesterov",
        sgd(0.1).momentum(0.9).nesterov(),
        model,
        check,
    );
    run_case(&r, "adam", adam(0.01), model, check);
    run_case(
        &r,
        "adam_hyper",
        adam(0.02).b1(0.8).b2(0.99).eps(1e-6).eps_root(1e-8),
        model,
        check,
    );
    run_case(&r, "adamw", adamw(0.01, 0.1), model, check);
    // optax's masked: outside the mask the gradients pass through.
    run_case(
        &r,
        "masked_adam_w",
        masked(adam(0.01), decay_w()),
        model,
        check,
    );
    let only_b = || Mask::new(|p: &KeyPath| p.to_string().starts_with(".b"));
    run_case(
        &r,
        "masked_clip_sgd_b",
        masked(
            chain(clip_by_global_norm(0.5), sgd(0.1).momentum(0.9)),
            only_b(),
        ),
        model,
        check,
    );
    // adam's stages, alone and chained.
    run_case(&r, "scale_by_adam", scale_by_adam(), model, check);
    run_case(
        &r,
        "scale_by_adam_hyper",
        scale_by_adam().b1(0.8).b2(0.99).eps(1e-6).eps_root(1e-8),
        model,
        check,
    );
    run_case(
        &r,
        "chain_scale_by_adam_lr",
        chain(scale_by_adam(), scale_by_learning_rate(0.01)),
        model,
        check,
    );
    run_case(
        &r,
        "trace_nesterov_lr",
        chain(trace(0.9, true), scale_by_learning_rate(0.1)),
        model,
        check,
    );
    run_case(
        &r,
        "adamw_mask_w",
        adamw(0.01, 0.1).weight_decay_mask(decay_w()),
        model,
        check,
    );
    run_case(
        &r,
        "clip_adamw",
        chain(clip_by_global_norm(1.0), adamw(0.01, 1e-4)),
        model,
        check,
    );
    let s = warmup_cosine_decay_schedule(0.0, 0.1, 2, 4, 0.001);
    run_case(&r, "adam_warmup_cosine", adam(s), model, check);
    // optax's ema(decay, debias): an average of the updates from zero.
    run_case(
        &r,
        "ema_debias_scale",
        chain(ema(0.9, true), scale(-0.1)),
        model,
        check,
    );
    run_case(
        &r,
        "ema_biased_scale",
        chain(ema(0.8, false), scale(-0.1)),
        model,
        check,
    );
    // Parameter groups: optax's multi_transform with the labels
    // {"b": "sgd", "s": "frozen", "w": "adamw"}.
    let label = by_field("sgd", "frozen", "adamw");
    let fused = multi_transform(label)
        .group("adamw", adamw(0.01, 0.1))
        .group("sgd", sgd(0.1).momentum(0.9))
        .group("frozen", set_to_zero());
    assert!(GradientTransformation::<P>::fused(&fused).is_some_and(|f| f.step_is_fused()));
    run_case(&r, "multi_fused", fused, model, check);
    // A group that clips by its own global norm: not fused (copies).
    let clip = multi_transform(label)
        .group("frozen", set_to_zero())
        .group(
            "sgd",
            chain(clip_by_global_norm(0.5), sgd(0.1).momentum(0.9)),
        )
        .group("adamw", adamw(0.01, 0.1));
    assert!(!GradientTransformation::<P>::fused(&clip).is_some_and(|f| f.step_is_fused()));
    run_case(&r, "multi_clip", clip.clone(), model, check);
    // update + apply_updates gives what step gives.
    let mut p = model(&r["params0"]);
    let mut state = clip.init(&p).expect("init");
    for (t, g) in r["grads"].as_array().expect("grads").iter().enumerate() {
        let mut u = model(g);
        clip.update(&mut u, &mut state, &p).expect("update");
        pytree_optim::apply_updates(&mut p, &u).expect("apply");
        check(&p, &r["cases"]["multi_clip"][t], "multi_clip by update");
    }
}

mod scalars {
    use super::*;

    #[test]
    fn every_optimizer_follows_optax_on_scalar_leaves() {
        run_all(&small, &check);
    }

    /// optax's `masked(adam, {w})` passes the gradients of `b` and `s`
    /// through as their updates (checked in `run_all`); `.mask(..)`
    /// freezes them instead (their update is zero). `w` follows optax.
    #[test]
    fn a_masked_optimizer_follows_optax_inside_its_mask_and_freezes_the_rest() {
        let r = reference();
        let opt = adam(0.01).mask(Mask::new(|p: &KeyPath| p.to_string().starts_with(".w")));
        let p0 = small(&r["params0"]);
        let mut p = p0.clone();
        let mut state = opt.init(&p).unwrap();
        for (t, g) in r["grads"].as_array().unwrap().iter().enumerate() {
            opt.step(&mut p, &mut small(g), &mut state).unwrap();
            close(
                &p.w,
                &leaf(&r["cases"]["masked_adam_w"][t], "w").1,
                "masked w",
            );
        }
        assert_eq!((p.b, p.s), (p0.b, p0.s));
        assert_eq!(state.inner.0.mu.b, [0.0; 3]);
    }
}

#[test]
fn schedules_follow_optax() {
    let r = reference();
    let s = &r["schedules"];
    let check = |name: &str, sched: &dyn Schedule| {
        for (t, want) in s[name].as_array().unwrap().iter().enumerate() {
            let (got, want) = (sched.value(t as u64), want.as_f64().unwrap());
            assert!(
                (got - want).abs() <= 1e-6 * (1.0 + want.abs()),
                "{name} at {t}: {got} vs optax {want}"
            );
        }
    };
    check("linear_0_1_10", &linear_schedule(0.0, 1.0, 10));
    check("cosine_1_10_0.1", &cosine_decay_schedule(1.0, 10, 0.1));
    check(
        "warmup_cosine_0_1_3_10_0.05",
        &warmup_cosine_decay_schedule(0.0, 1.0, 3, 10, 0.05),
    );
}

#[test]
fn clipping_and_the_global_norm_follow_optax() {
    let r = reference();
    let c = &r["clip_by_global_norm_1"];
    let mut g = small(&c["input"]);
    let norm = pytree_optim::global_norm(&g).unwrap();
    let want = c["global_norm"].as_f64().unwrap();
    assert!((norm - want).abs() <= 1e-6 * want, "{norm} vs {want}");
    let opt = clip_by_global_norm(1.0);
    let p = small(&r["params0"]);
    let mut state = opt.init(&p).unwrap();
    opt.update(&mut g, &mut state, &p).unwrap();
    check(&g, &c["output"], "clip_by_global_norm");
}

#[test]
fn the_moving_average_follows_optax_incremental_update() {
    let r = reference();
    let mut ema = pytree_optim::EmaOfParams::new(0.9, &small(&r["params0"])).unwrap();
    for (t, g) in r["grads"].as_array().unwrap().iter().enumerate() {
        // optax.incremental_update(new=g, old=ema, step_size=0.1)
        ema.update(&small(g)).unwrap();
        check(
            ema.average(),
            &r["incremental_update_0.1"][t],
            &format!("ema step {t}"),
        );
    }
}

#[cfg(feature = "ndarray")]
mod arrays {
    use super::*;
    use pytree_std::ndarray::{Array0, Array1, Array2, ShapeBuilder};

    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub(super) struct Small {
        pub(super) b: Array1<f32>,
        pub(super) s: Array0<f32>,
        pub(super) w: Array2<f32>,
    }

    pub(super) fn small(v: &Value) -> Small {
        let (ws, w) = leaf(v, "w");
        Small {
            b: Array1::from(leaf(v, "b").1),
            s: Array0::from_elem((), leaf(v, "s").1[0]),
            w: Array2::from_shape_vec((ws[0], ws[1]), w).unwrap(),
        }
    }

    fn check(p: &Small, v: &Value, what: &str) {
        let logical = |a: &Array2<f32>| a.iter().copied().collect::<Vec<f32>>();
        close(
            p.b.as_slice().unwrap(),
            &leaf(v, "b").1,
            &format!("{what} .b"),
        );
        close(&[p.s[()]], &leaf(v, "s").1, &format!("{what} .s"));
        close(&logical(&p.w), &leaf(v, "w").1, &format!("{what} .w"));
    }

    #[test]
    fn every_optimizer_follows_optax_on_ndarray_leaves() {
        run_all(&small, &check);
    }

    /// The same in the column-major layout (a transposed copy): the element
    /// loop walks logical order, so the numbers are the same.
    #[test]
    fn column_major_arrays_give_the_same_numbers() {
        let fortran = |v: &Value| {
            let mut m = small(v);
            let mut f = Array2::zeros((2, 3).f());
            f.assign(&m.w);
            m.w = f;
            assert!(!m.w.is_standard_layout());
            m
        };
        run_all(&fortran, &check);
    }
}

#[cfg(feature = "candle")]
mod tensors {
    use super::*;
    use pytree_std::candle_core::{DType, Device, Tensor};

    #[derive(PyTree, Clone, Debug)]
    struct Small {
        b: Tensor,
        s: Tensor,
        w: Tensor,
    }

    fn t(v: &Value, key: &str, dtype: DType) -> Tensor {
        let (shape, data) = leaf(v, key);
        Tensor::from_vec(data, shape, &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap()
    }

    fn data(t: &Tensor) -> Vec<f32> {
        t.to_dtype(DType::F32)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap()
    }

    fn check(p: &Small, v: &Value, what: &str) {
        assert_eq!(p.w.dims(), [2, 3]);
        assert_eq!(p.s.dims(), [0usize; 0]);
        close(&data(&p.b), &leaf(v, "b").1, &format!("{what} .b"));
        close(&data(&p.s), &leaf(v, "s").1, &format!("{what} .s"));
        close(&data(&p.w), &leaf(v, "w").1, &format!("{what} .w"));
    }

    /// Every case on tensors of `dtype`, which they keep; the numbers are
    /// optax's (f32) to the same tolerance.
    fn run_all_in(dtype: DType) {
        let small = |v: &Value| Small {
            b: t(v, "b", dtype),
            s: t(v, "s", dtype),
            w: t(v, "w", dtype),
        };
        let check = |p: &Small, v: &Value, what: &str| {
            assert_eq!(
                (p.b.dtype(), p.s.dtype(), p.w.dtype()),
                (dtype, dtype, dtype)
            );
            check(p, v, what)
        };
        run_all(&small, &check);
    }

    #[test]
    fn every_optimizer_follows_optax_on_f32_tensors() {
        run_all_in(DType::F32);
    }

    #[test]
    fn f64_tensors_keep_their_dtype() {
        run_all_in(DType::F64);
    }
}

/// A typed model with an integer buffer (`#[pytree(leaf_type =
/// AnyArray)]`): the f32 fields follow optax through every case, the
/// `i64` buffer is never changed (it sits under the `adamw` label of the
/// groups and inside every norm).
#[cfg(feature = "ndarray")]
mod typed_with_a_buffer {
    use super::*;
    use pytree_std::ndarray::{array, Array0, Array1, Array2};
    use pytree_std::AnyArray;

    #[derive(PyTree, Clone, Debug, PartialEq)]
    #[pytree(leaf_type = AnyArray)]
    struct Small {
        b: Array1<f32>,
        s: Array0<f32>,
        w: Array2<f32>,
        ids: Array1<i64>,
    }

    /// [`arrays::small`](super::arrays::small)'s floats and the buffer.
    fn small(v: &Value) -> Small {
        let super::arrays::Small { b, s, w } = super::arrays::small(v);
        Small {
            b,
            s,
            w,
            ids: array![0, 1, 2, i64::MAX],
        }
    }

    fn check(p: &Small, v: &Value, what: &str) {
        close(
            p.b.as_slice().unwrap(),
            &leaf(v, "b").1,
            &format!("{what} .b"),
        );
        close(&[p.s[()]], &leaf(v, "s").1, &format!("{what} .s"));
        close(
            p.w.as_slice().unwrap(),
            &leaf(v, "w").1,
            &format!("{what} .w"),
        );
        assert_eq!(p.ids, array![0, 1, 2, i64::MAX], "{what} .ids");
    }

    #[test]
    fn every_optimizer_follows_optax_on_the_floats_and_leaves_the_buffer_alone() {
        run_all(&small, &check);
    }
}

/// nalgebra's matrices and vectors (one leaf type, `DMatrix<T>`, stored
/// column by column): every case follows optax, in `f32` and in `f64`.
#[cfg(feature = "nalgebra")]
mod matrices {
    use super::*;
    use pytree_std::nalgebra::{DMatrix, DVector, Scalar};

    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Small<T: Scalar> {
        b: DVector<T>,
        s: DMatrix<T>,
        w: DMatrix<T>,
    }

    fn small<T: Scalar + Copy>(v: &Value, from: fn(f32) -> T) -> Small<T> {
        let (ws, w) = leaf(v, "w");
        let w: Vec<T> = w.into_iter().map(from).collect();
        Small {
            b: DVector::from_iterator(3, leaf(v, "b").1.into_iter().map(from)),
            s: DMatrix::from_element(1, 1, from(leaf(v, "s").1[0])),
            w: DMatrix::from_row_slice(ws[0], ws[1], &w),
        }
    }

    fn check<T: Scalar + Copy>(p: &Small<T>, v: &Value, what: &str, to: fn(T) -> f32) {
        let row_major = |m: &DMatrix<T>| m.transpose().iter().map(|&x| to(x)).collect::<Vec<f32>>();
        assert_eq!((p.w.shape(), p.b.len()), ((2, 3), 3), "{what}");
        let b: Vec<f32> = p.b.iter().map(|&x| to(x)).collect();
        close(&b, &leaf(v, "b").1, &format!("{what} .b"));
        close(&[to(p.s[(0, 0)])], &leaf(v, "s").1, &format!("{what} .s"));
        close(&row_major(&p.w), &leaf(v, "w").1, &format!("{what} .w"));
    }

    #[test]
    fn every_optimizer_follows_optax_on_f32_matrices() {
        run_all(&|v| small(v, |x| x), &|p, v, what| check(p, v, what, |x| x));
    }

    #[test]
    fn every_optimizer_follows_optax_on_f64_matrices() {
        run_all(&|v| small(v, f64::from), &|p, v, what| {
            check(p, v, what, |x| x as f32)
        });
    }
}
