//! Errors, not panics: gradients of another structure or leaf shape, a
//! state built for another tree, a tensor that is not float. Each error
//! names the path, and after it nothing has changed: not the parameters,
//! not the state, not the gradients.

use pytree_optim::{
    adam, adamw, add_decayed_weights, apply_updates, chain, clip_by_global_norm, ema, masked,
    scale, scale_by_schedule, sgd, EmaOfParams, GradientTransformation, Mask,
};
use pytree_std::PyTree;

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Layer {
    w: Vec<f32>,
    b: f32,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp {
    layers: Vec<Layer>,
}

fn mlp(ws: &[usize]) -> Mlp {
    Mlp {
        layers: ws
            .iter()
            .map(|&n| Layer {
                w: vec![1.0; n],
                b: 0.5,
            })
            .collect(),
    }
}

/// One good step, then a step with `bad` gradients: the error's text, and
/// that params, state and gradients are as before the bad step, for both
/// `update` and `step`.
fn refuses<T>(opt: &T, bad: &Mlp, want: &str)
where
    T: GradientTransformation<Mlp>,
    T::State: Clone + PartialEq + std::fmt::Debug,
{
    let mut p = mlp(&[3, 2]);
    let mut state = opt.init(&p).unwrap();
    opt.step(&mut p, &mut mlp(&[3, 2]), &mut state).unwrap();
    let (p0, s0) = (p.clone(), state.clone());

    let mut g = bad.clone();
    let err = opt.update(&mut g, &mut state, &p).unwrap_err();
    assert_eq!(err.to_string(), want);
    assert_eq!((&g, &state), (bad, &s0));

    let err = opt.step(&mut p, &mut g, &mut state).unwrap_err();
    assert_eq!(err.to_string(), want);
    assert_eq!((&p, &g, &state), (&p0, bad, &s0));
}

#[test]
fn gradients_of_another_structure_change_nothing() {
    let short = mlp(&[3, 1]);
    let want = "tree 1 at .layers[1].w: sequence length mismatch: expected 2, found 1";
    refuses(&sgd(0.1), &short, want);
    refuses(&sgd(0.1).momentum(0.9), &short, want);
    refuses(&adam(0.1), &short, want);
    refuses(&adamw(0.1, 0.1), &short, want);
    refuses(&clip_by_global_norm(0.1), &short, want);
    refuses(&scale(2.0), &short, want);
    refuses(&scale_by_schedule(2.0), &short, want);
    refuses(&add_decayed_weights(0.1), &short, want);
    refuses(
        &chain(clip_by_global_norm(0.1), adamw(0.1, 0.1)),
        &short,
        want,
    );
    refuses(
        &chain(scale(0.5), chain(clip_by_global_norm(0.1), sgd(0.1))),
        &short,
        want,
    );

    let fewer = mlp(&[3]);
    refuses(
        &adam(0.1),
        &fewer,
        "tree 1 at .layers: sequence length mismatch: expected 2, found 1",
    );
}

#[test]
fn apply_updates_and_the_moving_average_refuse_other_trees() {
    let mut p = mlp(&[3, 2]);
    let err = apply_updates(&mut p, &mlp(&[2, 2])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers[0].w: sequence length mismatch: expected 3, found 2"
    );
    assert_eq!(p, mlp(&[3, 2]));
    let mut ema = EmaOfParams::new(0.9, &p).unwrap();
    assert!(ema.update(&mlp(&[3])).is_err());
    assert_eq!((ema.average(), ema.count()), (&p, 0));
}

#[test]
fn a_state_built_for_another_tree_is_an_error() {
    let opt = masked(clip_by_global_norm(1.0), Mask::all());
    let mut state = opt.init(&mlp(&[3])).unwrap();
    let p = mlp(&[3, 2]);
    let mut g = mlp(&[3, 2]);
    let err = opt.update(&mut g, &mut state, &p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: optimizer state mismatch: the state was built by init for a tree of 4 leaves, this tree has 7"
    );
    assert_eq!(g, mlp(&[3, 2]));

    let opt = adam(0.1);
    let mut state = opt.init(&mlp(&[3])).unwrap();
    let before = state.clone();
    let err = opt.update(&mut g, &mut state, &p).unwrap_err();
    assert!(err.to_string().contains("mismatch"), "{err}");
    assert_eq!((state, g), (before, mlp(&[3, 2])));
}

/// Issue 19: a chain whose later stage refuses (its state no longer
/// matches the parameters) used to have advanced its first stage already.
#[test]
fn a_chain_whose_later_stage_is_stale_changes_nothing() {
    let p = mlp(&[3, 2]);
    let opt = chain(
        scale_by_schedule(|t: u64| 1.0 / (t as f64 + 1.0)),
        ema(0.9, true),
    )
    .then(adam(0.1));
    let mut state = opt.init(&p).unwrap();
    opt.step(&mut p.clone(), &mut mlp(&[3, 2]), &mut state)
        .unwrap();
    // The last stage's state was built for another tree.
    state.1 .1 = adam(0.1).init(&mlp(&[3])).unwrap();
    let s0 = state.clone();
    let want = "tree 1 at .layers: sequence length mismatch: expected 2, found 1";

    let mut g = mlp(&[3, 2]);
    let err = opt.update(&mut g, &mut state, &p).unwrap_err();
    assert_eq!(err.to_string(), want);
    assert_eq!((&g, &state), (&mlp(&[3, 2]), &s0));
    assert_eq!((state.0.count, state.1 .0.count), (1, 1));

    let mut q = p.clone();
    let err = opt.step(&mut q, &mut g, &mut state).unwrap_err();
    assert_eq!(err.to_string(), want);
    assert_eq!((&q, &g, &state), (&p, &mlp(&[3, 2]), &s0));

    // A loaded state whose moments are of another shape: refused by the
    // validation, before the first stage runs.
    let mut loaded = opt.init(&p).unwrap();
    loaded.1 .1 .0.mu = mlp(&[2, 2]);
    let l0 = loaded.clone();
    let err = opt.step(&mut q, &mut g, &mut loaded).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers[0].w: sequence length mismatch: expected 3, found 2"
    );
    assert_eq!((&q, &loaded), (&p, &l0));
}

#[cfg(feature = "ndarray")]
mod arrays {
    use super::*;
    use pytree_std::ndarray::{Array1, Array2};

    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Linear {
        w: Array2<f32>,
        b: Array1<f32>,
    }

    fn linear(r: usize, c: usize) -> Linear {
        Linear {
            w: Array2::ones((r, c)),
            b: Array1::ones(c),
        }
    }

    #[test]
    fn gradients_of_another_shape_change_nothing() {
        let opt = chain(clip_by_global_norm(1.0), adamw(0.1, 0.01));
        let mut p = linear(3, 4);
        let mut state = opt.init(&p).unwrap();
        opt.step(&mut p, &mut linear(3, 4), &mut state).unwrap();
        let (p0, s0) = (p.clone(), state.clone());
        let mut odd = linear(3, 4);
        odd.w = Array2::ones((4, 3));
        let err = opt.step(&mut p, &mut odd, &mut state).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tree 1 at .w: leaf signature mismatch: expected f32[3,4], found f32[4,3]"
        );
        assert_eq!(
            (p, state.1 .0.mu, state.1 .0.nu, state.1 .0.count),
            (p0, s0.1 .0.mu, s0.1 .0.nu, s0.1 .0.count)
        );
        assert_eq!(odd.w, Array2::<f32>::ones((4, 3)));
    }

    /// The element loop itself checks shapes when called directly.
    #[test]
    fn the_leaf_trait_refuses_leaves_of_different_shapes() {
        use pytree_optim::{Exec, FloatLeaf};
        use pytree_std::ndarray::ArrayD;
        let mut a = ArrayD::<f32>::zeros(vec![2, 2]);
        let b = ArrayD::<f32>::ones(vec![4]);
        let err = ArrayD::<f32>::zip_elements(
            [a.view_mut()],
            [b.view()],
            Exec::Sequential,
            &|[a], [b]| *a = b,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "at <root>: array shape mismatch: expected [2, 2], found [4]"
        );
        assert_eq!(a, ArrayD::<f32>::zeros(vec![2, 2]));
    }
}

#[cfg(feature = "candle")]
mod tensors {
    use super::*;
    use pytree_std::candle_core::{DType, Device, Tensor};

    #[derive(PyTree, Clone, Debug)]
    struct Linear {
        w: Tensor,
        b: Tensor,
    }

    fn linear(dtype: DType) -> Linear {
        let d = Device::Cpu;
        Linear {
            w: Tensor::ones((2, 3), dtype, &d).unwrap(),
            b: Tensor::ones(3, dtype, &d).unwrap(),
        }
    }

    fn values(t: &Tensor) -> Vec<f64> {
        t.flatten_all()
            .unwrap()
            .to_dtype(DType::F64)
            .unwrap()
            .to_vec1()
            .unwrap()
    }

    #[test]
    fn tensors_of_another_dtype_or_shape_change_nothing() {
        let opt = adam(0.1);
        let mut p = linear(DType::F32);
        let mut state = opt.init(&p).unwrap();
        let mut wide = linear(DType::F64);
        let err = opt.step(&mut p, &mut wide, &mut state).unwrap_err();
        // Every mismatch is listed (issue 19), not only the first.
        assert_eq!(
            err.to_string(),
            "tree structures differ (2 mismatches found)
  tree 1 at .w: leaf signature mismatch: expected f32[2,3]@cpu, found f64[2,3]@cpu
  tree 1 at .b: leaf signature mismatch: expected f32[3]@cpu, found f64[3]@cpu"
        );
        let mut odd = linear(DType::F32);
        odd.b = Tensor::ones(4, DType::F32, &Device::Cpu).unwrap();
        let err = opt.update(&mut odd, &mut state, &p).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tree 1 at .b: leaf signature mismatch: expected f32[3]@cpu, found f32[4]@cpu"
        );
        assert_eq!(values(&p.w), [1.0; 6]);
        assert_eq!((values(&state.0.mu.w), state.0.count), (vec![0.0; 6], 0));
        assert_eq!(values(&odd.b), [1.0; 4]);
    }

    /// Integer tensors are a model's buffers: the optimizers leave them
    /// alone (zeros of their own dtype as state, no update).
    #[test]
    fn integer_tensors_are_left_alone() {
        let mut p = linear(DType::U32);
        let opt = adam(0.1);
        let mut state = opt.init(&p).unwrap();
        assert_eq!(state.0.mu.w.dtype(), DType::U32);
        let mut g = linear(DType::U32);
        opt.step(&mut p, &mut g, &mut state).unwrap();
        assert_eq!(
            p.w.to_dtype(DType::F32)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap(),
            [1.0; 6]
        );
    }

    /// A step writes the tensors in place, as candle's `Var::set` does:
    /// every clone of a parameter (the handle a layer holds) sees the
    /// update; a snapshot is taken with `Tensor::copy`.
    #[test]
    fn clones_see_a_step_and_copies_do_not() {
        let opt = sgd(0.5);
        let mut p = linear(DType::F32);
        let (clone, copy) = (p.w.clone(), p.w.copy().unwrap());
        let mut state = opt.init(&p).unwrap();
        opt.step(&mut p, &mut linear(DType::F32), &mut state)
            .unwrap();
        assert_eq!(values(&p.w), [0.5; 6]);
        assert_eq!(values(&clone), [0.5; 6]);
        assert_eq!(values(&copy), [1.0; 6]);
    }
}
