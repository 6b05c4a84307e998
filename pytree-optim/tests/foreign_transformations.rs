//! The wrappers around transformations written outside this crate: a
//! user's (or another library's) `GradientTransformation` with its own loop
//! over the leaves, which cannot see which leaves a wrapper selects.
//! `masked` must still let the updates pass through outside its mask,
//! `.mask` must still freeze the parameters there, and each group of a
//! `multi_transform` must still act on its own leaves only, in `update`
//! and in `step`.
//!
//! Against optax: `tests/data/optax_foreign.json`, made by
//! `tests/data/make_optax_foreign.py` (optax 0.2.8 on jax 0.10.2, CPU,
//! float32), runs `optax.masked` and `optax.multi_transform` around the
//! same transformations written by hand in Python, on the tree, initial
//! parameters and gradients of `optax_reference.json`; the tolerance is
//! that of `optax_reference.rs`, `2e-6 * (1 + |x|)`.

use pytree_optim::{
    adamw, apply_updates, chain, masked, multi_transform, scale, set_to_zero, sgd,
    GradientTransformation, Mask, Wrap,
};
use pytree_std::{Error, KeyPath, PyTree};
use serde_json::Value;

mod optax_small;
use optax_small::{by_field, check, close, json, leaf, reference, small, Small};

// ---- Transformations written by hand, as outside this crate -------------

/// `u <- k * u` on every leaf.
#[derive(Clone, Debug)]
struct HandScale(f32);

impl<P: PyTree<Leaf = f32>> GradientTransformation<P> for HandScale {
    type State = ();

    fn init(&self, _: &P) -> Result<(), Error> {
        Ok(())
    }

    fn update(&self, updates: &mut P, _: &mut (), _: &P) -> Result<(), Error> {
        for u in pytree_std::leaves_mut(updates) {
            *u *= self.0;
        }
        Ok(())
    }
}

/// Momentum by hand: a trace `t <- u + decay * t` (the state, a tree of
/// the parameters' structure) and `u <- t`.
#[derive(Clone, Debug)]
struct HandMomentum(f32);

impl<P: PyTree<Leaf = f32> + Clone> GradientTransformation<P> for HandMomentum {
    type State = P;

    fn init(&self, params: &P) -> Result<P, Error> {
        Ok(pytree_std::map(params.clone(), |_| 0.0))
    }

    fn update(&self, updates: &mut P, trace: &mut P, _: &P) -> Result<(), Error> {
        let trace = pytree_std::leaves_mut(trace);
        for (u, t) in pytree_std::leaves_mut(updates).into_iter().zip(trace) {
            *t = *u + self.0 * *t;
            *u = *t;
        }
        Ok(())
    }
}

/// Global-norm clipping by hand: when the norm `n` of all the updates is
/// `max` or more, `u <- u / n * max`.
#[derive(Clone, Debug)]
struct HandClip(f32);

impl<P: PyTree<Leaf = f32>> GradientTransformation<P> for HandClip {
    type State = ();

    fn init(&self, _: &P) -> Result<(), Error> {
        Ok(())
    }

    fn update(&self, updates: &mut P, _: &mut (), _: &P) -> Result<(), Error> {
        let leaves = pytree_std::leaves_mut(updates);
        let norm = leaves
            .iter()
            .map(|u| f64::from(**u) * f64::from(**u))
            .sum::<f64>()
            .sqrt() as f32;
        if norm >= self.0 {
            for u in leaves {
                *u = *u / norm * self.0;
            }
        }
        Ok(())
    }
}

/// Plain SGD by hand, with a fused `step` of its own (the gradients read,
/// the parameters written, one loop) but no fast path
/// ([`GradientTransformation::fused`]): the wrappers run its `update`.
#[derive(Clone, Debug)]
struct HandSgd(f32);

impl<P: PyTree<Leaf = f32>> GradientTransformation<P> for HandSgd {
    type State = ();

    fn init(&self, _: &P) -> Result<(), Error> {
        Ok(())
    }

    fn update(&self, updates: &mut P, _: &mut (), _: &P) -> Result<(), Error> {
        for u in pytree_std::leaves_mut(updates) {
            *u *= -self.0;
        }
        Ok(())
    }

    fn step(&self, params: &mut P, grads: &mut P, _: &mut ()) -> Result<(), Error> {
        let grads = pytree_std::leaves(&*grads);
        for (p, g) in pytree_std::leaves_mut(params).into_iter().zip(grads) {
            *p += -self.0 * *g;
        }
        Ok(())
    }
}

// ---- The reproduction: exact numbers ---------------------------

fn first() -> Mask {
    Mask::new(|p: &KeyPath| p.to_string() == "[0]")
}

#[test]
fn masked_lets_the_updates_outside_its_mask_pass_through() {
    let params = vec![1.0f32, 1.0];
    let opt = masked(HandScale(2.0), first());
    let mut state = opt.init(&params).unwrap();
    let mut u = vec![1.0f32, 1.0];
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(u, [2.0, 1.0]); // optax: [2, 1]
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0, 1.0], &mut state).unwrap();
    assert_eq!(p, [3.0, 2.0]);
}

#[test]
fn mask_freezes_the_parameters_outside_its_mask() {
    let params = vec![1.0f32, 1.0];
    let opt = HandScale(2.0).mask(first());
    let mut state = opt.init(&params).unwrap();
    let mut u = vec![1.0f32, 1.0];
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(u, [2.0, 0.0]);
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0, 1.0], &mut state).unwrap();
    assert_eq!(p, [3.0, 1.0]);
    // A fused step of its own that writes every parameter: still frozen.
    let opt = HandSgd(0.5).mask(first());
    let mut state = opt.init(&params).unwrap();
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0, 1.0], &mut state).unwrap();
    assert_eq!(p, [0.5, 1.0]);
}

#[test]
fn a_chain_with_a_builtin_stage_under_masked_passes_the_rest_through() {
    let params = vec![1.0f32, 1.0, 1.0];
    let opt = masked(chain(HandScale(2.0), scale(3.0)), first());
    let mut state = opt.init(&params).unwrap();
    let mut u = vec![1.0f32, -1.0, 0.5];
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(u, [6.0, -1.0, 0.5]);
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0, -1.0, 0.5], &mut state)
        .unwrap();
    assert_eq!(p, [7.0, 0.0, 1.5]);
    // The built-in stage first.
    let opt = masked(chain(sgd(0.5), HandScale(2.0)), first()).mask(Mask::all());
    let mut state = opt.init(&params).unwrap();
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0, -1.0, 0.5], &mut state)
        .unwrap();
    assert_eq!(p, [0.0, 0.0, 1.5]);
}

#[test]
fn nested_masks_around_a_foreign_transformation_each_hold() {
    // Outer: leaves 0 and 1; inner: leaves 1 and 2. Only leaf 1 doubles.
    let outer = Mask::new(|p: &KeyPath| p.to_string() != "[2]");
    let inner = Mask::new(|p: &KeyPath| p.to_string() != "[0]");
    let params = vec![0.0f32; 3];
    let opt = masked(masked(HandScale(2.0), inner.clone()), outer.clone());
    let mut state = opt.init(&params).unwrap();
    let mut u = vec![1.0f32; 3];
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(u, [1.0, 2.0, 1.0]);
    let opt = HandScale(2.0).mask(inner).mask(outer);
    let mut state = opt.init(&params).unwrap();
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0; 3], &mut state).unwrap();
    assert_eq!(p, [0.0, 2.0, 0.0]);
}

#[test]
fn a_foreign_group_of_multi_transform_acts_on_its_leaves_only() {
    let label = |p: &KeyPath| {
        if p.to_string() == "[0]" {
            "hand"
        } else {
            "sgd"
        }
    };
    let params = vec![1.0f32, 1.0];
    // Not fused (HandScale's step is update + apply_updates).
    let opt = multi_transform(label)
        .group("hand", chain(HandScale(2.0), scale(-1.0)))
        .group("sgd", sgd(0.5));
    let mut state = opt.init(&params).unwrap();
    let mut u = vec![1.0f32, 1.0];
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(u, [-2.0, -0.5]);
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0, 1.0], &mut state).unwrap();
    assert_eq!(p, [-1.0, 0.5]);
    // A group whose step says it is fused, written by hand.
    let opt = multi_transform(label)
        .group("hand", HandSgd(2.0))
        .group("sgd", sgd(0.5));
    let mut state = opt.init(&params).unwrap();
    let mut p = params.clone();
    opt.step(&mut p, &mut vec![1.0, 1.0], &mut state).unwrap();
    assert_eq!(p, [-1.0, 0.5]);
    let mut u = vec![1.0f32, 1.0];
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(u, [-2.0, -0.5]);
}

// ---- Against optax ------------------------------------------------------

/// optax's cases around the transformations written by hand.
fn foreign() -> Value {
    json(include_str!("data/optax_foreign.json"))
}

/// Runs `opt` over the reference's four steps twice, by `step` and by
/// `update` then `apply_updates`, calling `after(params, state, step
/// index, how)` after each step to check them.
fn run<T, F>(opt: &T, mut after: F)
where
    T: GradientTransformation<Small>,
    F: FnMut(&Small, &T::State, usize, &str),
{
    let r = reference();
    let grads = r["grads"].as_array().expect("grads");
    for how in ["step", "update"] {
        let mut p = small(&r["params0"]);
        let mut state = opt.init(&p).expect("init");
        for (t, g) in grads.iter().enumerate() {
            let mut g = small(g);
            if how == "step" {
                opt.step(&mut p, &mut g, &mut state).expect("step");
            } else {
                opt.update(&mut g, &mut state, &p).expect("update");
                apply_updates(&mut p, &g).expect("apply");
            }
            after(&p, &state, t, how);
        }
    }
}

/// Runs `opt` and checks every step against optax's case `name`.
fn follows_optax<T: GradientTransformation<Small>>(name: &str, opt: &T) {
    let f = foreign();
    run(opt, |p, _, t, how| {
        check(
            p,
            &f["cases"][name][t],
            &format!("{name} by {how}, step {}", t + 1),
        );
    });
}

fn only(field: &'static str) -> Mask {
    Mask::new(move |p: &KeyPath| p.to_string().starts_with(field))
}

#[test]
fn masked_around_a_foreign_transformation_follows_optax() {
    follows_optax("masked_hand_scale_w", &masked(HandScale(-0.1), only(".w")));
    follows_optax(
        "masked_hand_clip_sgd_b",
        &masked(chain(HandClip(0.5), sgd(0.1).momentum(0.9)), only(".b")),
    );
}

/// The hand-written momentum's own state: inside the mask it is optax's
/// (whose state holds the masked leaves only); outside, it saw zeros as
/// gradients, so its trace there stays zero.
#[test]
fn a_foreign_state_inside_the_mask_follows_optax_and_stays_zero_outside() {
    let f = foreign();
    let opt = masked(chain(HandMomentum(0.9), scale(-0.1)), only(".w"));
    follows_optax("masked_hand_momentum_w", &opt);
    run(&opt, |_, state, t, how| {
        let trace = &state.inner.0;
        let what = format!("trace by {how}, step {}", t + 1);
        close(
            &trace.w,
            &leaf(&f["hand_momentum_trace_w"][t], "w").1,
            &what,
        );
        assert_eq!((&trace.b[..], trace.s), (&[0.0; 3][..], 0.0), "{what}");
    });
}

/// `.mask` on the same chain: inside its mask optax's `masked` numbers
/// (the clip's norm is over the masked leaves only, as optax's), outside
/// the parameters never change, bit for bit.
#[test]
fn mask_around_a_foreign_transformation_follows_optax_inside_and_freezes_the_rest() {
    let (r, f) = (reference(), foreign());
    let p0 = small(&r["params0"]);
    let opt = chain(HandClip(0.5), sgd(0.1).momentum(0.9)).mask(only(".b"));
    run(&opt, |p, _, t, how| {
        let want = leaf(&f["cases"]["masked_hand_clip_sgd_b"][t], "b").1;
        close(&p.b, &want, &format!(".mask by {how}, step {}", t + 1));
        assert_eq!((p.s, &p.w), (p0.s, &p0.w), "by {how}");
    });
    let opt = HandSgd(0.1).mask(only(".w"));
    run(&opt, |p, _, t, how| {
        let want = leaf(&f["cases"]["masked_hand_scale_w"][t], "w").1;
        close(
            &p.w,
            &want,
            &format!("HandSgd .mask by {how}, step {}", t + 1),
        );
        assert_eq!((p.s, &p.b), (p0.s, &p0.b), "by {how}");
    });
}

#[test]
fn multi_transform_with_foreign_groups_follows_optax() {
    let label = by_field("hand", "frozen", "adamw");
    let opt = multi_transform(label)
        .group("adamw", adamw(0.01, 0.1))
        .group(
            "hand",
            chain(HandClip(0.5), chain(HandMomentum(0.9), scale(-0.1))),
        )
        .group("frozen", set_to_zero());
    follows_optax("multi_hand", &opt);
    // The foreign group last (updated in place in `update`).
    let opt = multi_transform(label)
        .group("frozen", set_to_zero())
        .group("adamw", adamw(0.01, 0.1))
        .group(
            "hand",
            chain(HandClip(0.5), chain(HandMomentum(0.9), scale(-0.1))),
        );
    follows_optax("multi_hand", &opt);
    // A group whose own step says it is fused.
    let label = by_field("sgd", "frozen", "hand_sgd");
    let opt = multi_transform(label)
        .group("hand_sgd", HandSgd(0.1))
        .group("sgd", sgd(0.1).momentum(0.9))
        .group("frozen", set_to_zero());
    follows_optax("multi_hand_sgd", &opt);
}

// ---- What the wrappers know of the transformations ----------------------

#[test]
fn this_crates_transformations_and_every_wrapper_have_the_fast_path() {
    use pytree_optim::{
        adam, add_decayed_weights, clip_by_global_norm, ema, scale_by_adam, scale_by_learning_rate,
        scale_by_schedule, trace, Exec, Trace,
    };
    fn fast<T: GradientTransformation<Vec<f32>>>(t: T) -> bool {
        t.fused().is_some()
    }
    fn fused_step<T: GradientTransformation<Vec<f32>>>(t: &T) -> bool {
        t.fused().is_some_and(|f| f.step_is_fused())
    }
    assert!(fast(adam(0.1)) && fast(adamw(0.1, 0.01)) && fast(sgd(0.1).momentum(0.9)));
    assert!(fast(scale_by_adam()) && fast(trace(0.9, true)) && fast(ema(0.9, true)));
    assert!(fast(scale(2.0)) && fast(scale_by_learning_rate(0.1)) && fast(scale_by_schedule(0.5)));
    assert!(
        fast(add_decayed_weights(0.1)) && fast(clip_by_global_norm(1.0)) && fast(set_to_zero())
    );
    let label = |_: &KeyPath| "a";
    assert!(fast(
        multi_transform(label)
            .group("a", adam(0.1))
            .group("b", set_to_zero())
    ));

    // A transformation written by hand has none (nothing declared), and
    // every wrapper has one around it all the same: the wrapper guards
    // the hand-written stage at the leaves outside its selection.
    assert!(!fast(HandScale(2.0)) && !fast(HandSgd(0.1)) && !fast(HandMomentum(0.9)));
    assert!(fast(chain(adam(0.1), HandScale(2.0))) && fast(Some(HandMomentum(0.9))));
    assert!(fast(None::<Trace>) && fast(HandScale(2.0).exec(Exec::Sequential)));
    assert!(fast(masked(HandScale(2.0), first())) && fast(HandScale(2.0).mask(first())));
    let mixed = multi_transform(label)
        .group("a", adam(0.1))
        .group("b", HandSgd(0.1));
    assert!(fast(mixed.clone()));
    // A step that cannot see the selection: the groups are not run one
    // after the other on the same trees.
    assert!(fused_step(&adam(0.1).mask(first())));
    assert!(!fused_step(&mixed));
    assert!(!fused_step(&HandSgd(0.1).mask(first())));
}

/// Writes 99 everywhere, then fails.
struct Fails;

impl GradientTransformation<Vec<f32>> for Fails {
    type State = ();

    fn init(&self, _: &Vec<f32>) -> Result<(), Error> {
        Ok(())
    }

    fn update(&self, updates: &mut Vec<f32>, _: &mut (), _: &Vec<f32>) -> Result<(), Error> {
        updates.iter_mut().for_each(|u| *u = 99.0);
        Err(Error::custom("out of luck"))
    }
}

#[test]
fn on_an_error_the_updates_outside_the_mask_are_as_they_were() {
    let params = vec![0.0f32; 2];
    for (name, frozen) in [("masked", false), (".mask", true)] {
        let opt = if frozen {
            Fails.mask(first())
        } else {
            masked(Fails, first())
        };
        let mut state = opt.init(&params).unwrap();
        let mut u = vec![1.0f32, 2.0];
        let err = opt.update(&mut u, &mut state, &params).unwrap_err();
        assert_eq!(err.to_string(), "at <root>: out of luck", "{name}");
        assert_eq!(u[1], 2.0, "{name}");
        let mut p = params.clone();
        assert!(opt.step(&mut p, &mut vec![1.0, 2.0], &mut state).is_err());
        assert_eq!(p, params, "{name}");
    }
    // Updates of another length: refused before anything is written.
    let opt = masked(HandScale(2.0), first());
    let mut state = opt.init(&params).unwrap();
    let mut short = vec![1.0f32];
    let err = opt.update(&mut short, &mut state, &params).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: sequence length mismatch: expected 2, found 1"
    );
    assert_eq!(short, [1.0]);
}

/// Array leaves (a transformation of another crate on its own leaf
/// type): the updates outside the mask are copied and put back whole.
#[cfg(feature = "ndarray")]
#[test]
fn array_leaves_outside_the_mask_are_kept_whole() {
    use pytree_std::ndarray::{arr1, ArrayD};

    struct DoubleArrays;
    impl GradientTransformation<Vec<ArrayD<f32>>> for DoubleArrays {
        type State = ();
        fn init(&self, _: &Vec<ArrayD<f32>>) -> Result<(), Error> {
            Ok(())
        }
        fn update(
            &self,
            u: &mut Vec<ArrayD<f32>>,
            _: &mut (),
            _: &Vec<ArrayD<f32>>,
        ) -> Result<(), Error> {
            u.iter_mut().for_each(|a| a.mapv_inplace(|x| 2.0 * x));
            Ok(())
        }
    }
    let tree = |a: [f32; 2], b: [f32; 3]| vec![arr1(&a).into_dyn(), arr1(&b).into_dyn()];
    let params = tree([1.0; 2], [1.0; 3]);
    let opt = masked(DoubleArrays, first());
    let mut state = opt.init(&params).unwrap();
    let mut u = tree([1.0, -1.0], [0.5, -0.0, 3.0]);
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(u, tree([2.0, -2.0], [0.5, -0.0, 3.0]));
    assert!(u[1][1].is_sign_negative());
    let opt = DoubleArrays.mask(first());
    let mut state = opt.init(&params).unwrap();
    let mut p = params.clone();
    opt.step(&mut p, &mut tree([1.0, -1.0], [0.5, 7.0, 3.0]), &mut state)
        .unwrap();
    assert_eq!(p, tree([3.0, -1.0], [1.0; 3]));
}

/// Candle tensors: the same, the leaves being replaced by the
/// transformation (`*t = (t * 2)?`) rather than written in place.
#[cfg(feature = "candle")]
#[test]
fn tensor_leaves_outside_the_mask_are_kept() {
    use pytree_std::candle_core::{Device, Tensor};

    struct DoubleTensors;
    impl GradientTransformation<Vec<Tensor>> for DoubleTensors {
        type State = ();
        fn init(&self, _: &Vec<Tensor>) -> Result<(), Error> {
            Ok(())
        }
        fn update(&self, u: &mut Vec<Tensor>, _: &mut (), _: &Vec<Tensor>) -> Result<(), Error> {
            for t in u.iter_mut() {
                *t = t
                    .affine(2.0, 0.0)
                    .map_err(|e| Error::custom(e.to_string()))?;
            }
            Ok(())
        }
    }
    let t = |v: &[f32]| Tensor::new(v, &Device::Cpu).unwrap();
    let values = |tree: &Vec<Tensor>| -> Vec<Vec<f32>> {
        tree.iter().map(|x| x.to_vec1().unwrap()).collect()
    };
    let params = vec![t(&[1.0, 1.0]), t(&[1.0])];
    let opt = masked(DoubleTensors, first());
    let mut state = opt.init(&params).unwrap();
    let mut u = vec![t(&[1.0, -1.0]), t(&[0.5])];
    opt.update(&mut u, &mut state, &params).unwrap();
    assert_eq!(values(&u), [vec![2.0, -2.0], vec![0.5]]);
    let opt = DoubleTensors.mask(first());
    let mut state = opt.init(&params).unwrap();
    let mut p = vec![t(&[1.0, 1.0]), t(&[1.0])];
    opt.step(&mut p, &mut vec![t(&[1.0, -1.0]), t(&[0.5])], &mut state)
        .unwrap();
    assert_eq!(values(&p), [vec![3.0, -1.0], vec![1.0]]);
}
