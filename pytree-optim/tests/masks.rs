//! Masks and kinds: a transformation acts on every leaf; `.mask(..)`
//! freezes what it leaves out (with `Mask::params()`, leaves of kind
//! `"state"` are never changed), `masked(..)` lets it pass through (optax's
//! wrapper); weight decay has a mask of its own.

use pytree_optim::{
    adam, adamw, add_decayed_weights, apply_updates, chain, clip_by_global_norm, masked, scale,
    sgd, EmaOfParams, GradientTransformation, Mask, Wrap,
};
use pytree_std::{KeyPath, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Stats {
    mean: f64,
    var: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct BatchNorm {
    scale: f64,
    bias: f64,
    /// Everything below is state (the kind is inherited).
    #[pytree(kind = "state")]
    running: Stats,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Net {
    w: Vec<f64>,
    bn: BatchNorm,
}

/// Running statistics of `x` (mean and variance).
fn stats(x: f64) -> Stats {
    Stats { mean: x, var: x }
}

fn net(x: f64) -> Net {
    Net {
        w: vec![x, -x],
        bn: BatchNorm {
            scale: x,
            bias: x,
            running: stats(x),
        },
    }
}

/// Steps `opt` three times with gradients of 1 everywhere (state leaves
/// included) and returns the parameters.
fn train<T: GradientTransformation<Net>>(opt: &T) -> Net {
    let mut p = net(1.0);
    let mut state = opt.init(&p).unwrap();
    for _ in 0..3 {
        opt.step(&mut p, &mut net(1.0), &mut state).unwrap();
    }
    p
}

/// The updates `opt` makes of gradients `g` at `params`, from its initial
/// state (one `update`).
fn updated<T: GradientTransformation<Net>>(opt: &T, params: &Net, mut g: Net) -> Net {
    let mut state = opt.init(params).unwrap();
    opt.update(&mut g, &mut state, params).unwrap();
    g
}

#[test]
fn state_leaves_are_never_changed_by_an_optimizer_masked_to_params() {
    let params = Mask::params;
    let opts: Vec<(&str, Net)> = vec![
        ("sgd", train(&sgd(0.1).mask(params()))),
        (
            "sgd momentum",
            train(&sgd(0.1).momentum(0.9).nesterov().mask(params())),
        ),
        ("adam", train(&adam(0.1).mask(params()))),
        ("adamw", train(&adamw(0.1, 0.5).mask(params()))),
        (
            "chain",
            train(&chain(clip_by_global_norm(0.5), adamw(0.1, 0.5)).mask(params())),
        ),
    ];
    for (name, p) in opts {
        assert_eq!(p.bn.running, stats(1.0), "{name}");
        assert!(
            p.w[0] < 1.0 && p.bn.scale < 1.0 && p.bn.bias < 1.0,
            "{name}: {p:?}"
        );
    }
    // With update + apply_updates the state leaves get a zero update.
    let opt = adam(0.1).mask(params());
    let p = net(1.0);
    let mut state = opt.init(&p).unwrap();
    let mut u = net(1.0);
    opt.update(&mut u, &mut state, &p).unwrap();
    assert_eq!(u.bn.running, stats(0.0));
    assert_eq!(state.inner.0.mu.bn.running, stats(0.0));
    assert!((u.bn.scale + 0.1).abs() < 1e-9);
}

#[test]
fn a_transformation_acts_on_every_leaf() {
    let p = train(&sgd(0.1));
    assert!((p.bn.running.mean - 0.7).abs() < 1e-12);
    let p = train(&sgd(0.1).mask(Mask::all()));
    assert!((p.bn.running.mean - 0.7).abs() < 1e-12);
}

#[test]
fn a_mask_on_an_optimizer_freezes_the_leaves_it_leaves_out() {
    let only_w = Mask::new(|p: &KeyPath| p.to_string().starts_with(".w"));
    let p = train(&adam(0.1).mask(only_w));
    assert!(
        (p.w[0] - 0.7).abs() < 1e-6 && (p.w[1] + 0.7).abs() < 1e-6,
        "{:?}",
        p.w
    );
    assert_eq!(p.bn, net(1.0).bn);
}

#[test]
fn the_global_norm_counts_only_the_leaves_in_the_mask() {
    // Param leaves: w (2), scale, bias: gradient 3 each gives norm 6; the
    // state leaves' huge gradients do not count and pass through.
    let p = net(0.0);
    let opt = masked(clip_by_global_norm(3.0), Mask::params());
    let mut g = net(3.0);
    g.bn.running = stats(1e6);
    let g = updated(&opt, &p, g);
    assert_eq!(g.w, [1.5, -1.5]);
    assert_eq!((g.bn.scale, g.bn.bias), (1.5, 1.5));
    assert_eq!(g.bn.running, stats(1e6));
}

#[test]
fn a_mask_on_a_transformation_lets_the_rest_pass_through() {
    let p = net(2.0);
    let opt = chain(
        masked(
            scale(10.0),
            Mask::new(|p: &KeyPath| p.to_string() == ".w[0]"),
        ),
        masked(
            add_decayed_weights(0.5),
            Mask::new(|p: &KeyPath| p.to_string().contains("bias")),
        ),
    );
    let u = updated(&opt, &p, net(1.0));
    assert_eq!(u.w, [10.0, -1.0]);
    assert_eq!((u.bn.scale, u.bn.bias), (1.0, 2.0));
    assert_eq!(u.bn.running, stats(1.0));
}

#[test]
fn weight_decay_applies_only_inside_its_mask() {
    // lr 0.1, decay 0.5: with a constant gradient Adam moves by lr per
    // step; the decayed leaves move by a further lr * 0.5 * p.
    let no_bias = Mask::new(|p: &KeyPath| !p.to_string().ends_with("bias"));
    let opt = adamw(0.1, 0.5).weight_decay_mask(no_bias);
    let mut p = net(1.0);
    let mut state = opt.init(&p).unwrap();
    opt.step(&mut p, &mut net(1.0), &mut state).unwrap();
    assert!((p.w[0] - (1.0 - 0.1 * (1.0 + 0.5))).abs() < 1e-9);
    assert!((p.bn.scale - (1.0 - 0.1 * 1.5)).abs() < 1e-9);
    assert!((p.bn.bias - 0.9).abs() < 1e-9);
    let decay_mask = &state.1 .0.mask;
    assert_eq!(decay_mask.len(), 6);
    assert!(!decay_mask.get(3) && decay_mask.get(2));
}

#[test]
fn kinds_can_be_selected_by_name() {
    let m = Mask::kind("state").on(&net(0.0));
    let on: Vec<bool> = (0..m.len()).map(|i| m.get(i)).collect();
    assert_eq!(on, [false, false, false, false, true, true]);
    let m = Mask::params().on(&net(0.0));
    assert!(!m.is_all() && m.get(0) && !m.get(5));
}

#[test]
fn the_moving_average_copies_state_leaves() {
    let mut ema = EmaOfParams::new(0.5, &net(0.0)).unwrap();
    ema.update(&net(2.0)).unwrap();
    let a = ema.average();
    assert_eq!(a.w, [1.0, -1.0]);
    assert_eq!(a.bn.scale, 1.0);
    assert_eq!(a.bn.running, stats(2.0));
}

#[test]
fn apply_updates_adds_to_every_leaf() {
    let mut p = net(1.0);
    apply_updates(&mut p, &net(1.0)).unwrap();
    assert_eq!(p, net(2.0));
}
