//! The optimizers are compositions (issue 28): `adam(lr)` is
//! `chain(scale_by_adam(), scale_by_learning_rate(lr))`, `adamw` puts the
//! weight decay between the two, `sgd` is `chain(trace or identity,
//! scale_by_learning_rate)`. The chain fuses the learning-rate stage into
//! the previous stage's pass; these tests check that the fused pass gives
//! the bits of the stages run one after the other (each stage's `update`,
//! then `apply_updates`), in `step` and in `update`, and the bits of Adam's
//! element formula written out by hand. The numbers against optax itself
//! are in `optax_reference.rs` (cases `scale_by_adam`,
//! `chain_scale_by_adam_lr`, `trace_nesterov_lr`, `masked_*`).

use pytree_optim::{
    adam, adamw, apply_updates, chain, scale_by_adam, scale_by_learning_rate, sgd,
    GradientTransformation, Mask,
};
use pytree_std::{KeyPath, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    w: Vec<f32>,
    b: Vec<f32>,
    s: f32,
}

fn model(k: f32) -> Model {
    let f = |i: usize| (i as f32 * 1.7 + k).sin() * 2.0;
    Model {
        w: (0..37).map(f).collect(),
        b: (40..45).map(f).collect(),
        s: f(50),
    }
}

fn bits(m: &Model) -> Vec<u32> {
    m.w.iter()
        .chain(&m.b)
        .chain([&m.s])
        .map(|x| x.to_bits())
        .collect()
}

/// `opt.step` (fused) against `first.update`, `second.update`,
/// `apply_updates` (one stage after the other), and `opt.update` (fused)
/// against the stages' updates, for four steps: the same bits.
fn fused_equals_stages<A, B>(opt: &pytree_optim::Chain<A, B>, name: &str)
where
    A: GradientTransformation<Model>,
    B: GradientTransformation<Model>,
    A::State: PartialEq + std::fmt::Debug,
    B::State: PartialEq + std::fmt::Debug,
{
    assert!(
        GradientTransformation::<Model>::fused(opt).is_some_and(|f| f.step_is_fused()),
        "{name}: fused"
    );
    let (mut p1, mut p2, mut p3) = (model(0.0), model(0.0), model(0.0));
    let mut s1 = opt.init(&p1).unwrap();
    let mut s2 = opt.init(&p2).unwrap();
    let mut s3 = opt.init(&p3).unwrap();
    for t in 0..4 {
        let g = model(t as f32 + 0.5);
        // Fused step; the gradients are left as they were.
        let mut g1 = g.clone();
        opt.step(&mut p1, &mut g1, &mut s1).unwrap();
        assert_eq!(g1, g, "{name}: the fused step reads the gradients only");
        // The stages one after the other.
        let mut u = g.clone();
        opt.first.update(&mut u, &mut s2.0, &p2).unwrap();
        opt.second.update(&mut u, &mut s2.1, &p2).unwrap();
        let stages_update = u.clone();
        apply_updates(&mut p2, &u).unwrap();
        assert_eq!(bits(&p1), bits(&p2), "{name} step {t}");
        assert_eq!(s1, s2, "{name} state {t}");
        // Fused update.
        let mut u3 = g.clone();
        opt.update(&mut u3, &mut s3, &p3).unwrap();
        assert_eq!(bits(&u3), bits(&stages_update), "{name} update {t}");
        apply_updates(&mut p3, &u3).unwrap();
    }
    assert_eq!(bits(&p1), bits(&p3), "{name}: update + apply_updates");
    assert_ne!(p1, model(0.0));
}

#[test]
fn the_fused_optimizers_give_the_bits_of_their_stages() {
    let no_b = || Mask::new(|p: &KeyPath| !p.to_string().starts_with(".b"));
    fused_equals_stages(&adam(1e-2), "adam");
    fused_equals_stages(
        &chain(scale_by_adam(), scale_by_learning_rate(1e-2)),
        "chain(scale_by_adam, scale_by_learning_rate)",
    );
    fused_equals_stages(&adam(3e-2).b1(0.8).b2(0.99).eps_root(1e-8), "adam hyper");
    fused_equals_stages(&adamw(1e-2, 0.1), "adamw");
    fused_equals_stages(&adamw(1e-2, 0.1).weight_decay_mask(no_b()), "adamw masked");
    fused_equals_stages(&sgd(0.1), "sgd");
    fused_equals_stages(&sgd(0.1).momentum(0.9), "sgd momentum");
    fused_equals_stages(&sgd(0.1).momentum(0.9).nesterov(), "sgd nesterov");
    fused_equals_stages(
        &adam(|t: u64| 1e-2 / (t as f64 + 1.0)),
        "adam with a schedule",
    );
}

/// `adam(lr).step` against Adam written out by hand in `f32` (the
/// optimizer's order of operations: bias corrections as factors computed
/// in `f64`), bit for bit.
#[test]
fn adam_is_the_hand_written_formula() {
    let (lr, b1, b2, eps) = (1e-2f64, 0.9f64, 0.999f64, 1e-8f64);
    let opt = adam(lr);
    let mut p = model(0.0);
    let mut state = opt.init(&p).unwrap();
    let mut hand = model(0.0);
    let n = bits(&hand).len();
    let (mut m, mut v) = (vec![0.0f32; n], vec![0.0f32; n]);
    for t in 0..4u64 {
        let g = model(t as f32 + 0.5);
        opt.step(&mut p, &mut g.clone(), &mut state).unwrap();
        let tt = (t + 1) as f64;
        let (c1, c2) = (
            (1.0 / (1.0 - b1.powf(tt))) as f32,
            (1.0 / (1.0 - b2.powf(tt))) as f32,
        );
        let gs: Vec<f32> = g.w.iter().chain(&g.b).chain([&g.s]).copied().collect();
        let mut ps: Vec<f32> = hand
            .w
            .iter()
            .chain(&hand.b)
            .chain([&hand.s])
            .copied()
            .collect();
        for i in 0..n {
            m[i] = (1.0 - b1) as f32 * gs[i] + b1 as f32 * m[i];
            v[i] = (1.0 - b2) as f32 * (gs[i] * gs[i]) + b2 as f32 * v[i];
            let d = (m[i] * c1) / ((v[i] * c2 + 0.0).sqrt() + eps as f32);
            ps[i] += (-lr) as f32 * d;
        }
        hand.w.copy_from_slice(&ps[..37]);
        hand.b.copy_from_slice(&ps[37..42]);
        hand.s = ps[42];
        assert_eq!(bits(&p), bits(&hand), "step {t}");
    }
}
