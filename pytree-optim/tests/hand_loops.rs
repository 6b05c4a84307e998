//! Each optimizer against the same algorithm written by hand, from the
//! papers' / optax's formulas, as a loop over one flat `Vec<f64>`: the
//! library runs on a derived tree of the same numbers (its leaves in
//! order are the flat vector), for ten steps with gradients that change
//! every step.

use pytree_optim::{
    adam, adamw, chain, clip_by_global_norm, cosine_decay_schedule, sgd,
    warmup_cosine_decay_schedule, EmaOfParams, GradientTransformation, Schedule,
};
use pytree_std::PyTree;

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Layer {
    w: Vec<f64>,
    b: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    layers: Vec<Layer>,
    scale: f64,
}

const STEPS: u64 = 10;

fn model(flat: &[f64]) -> Model {
    // 2 layers of (3 weights, 1 bias), then the scale: 9 leaves.
    let layer = |s: &[f64]| Layer {
        w: s[..3].to_vec(),
        b: s[3],
    };
    Model {
        layers: vec![layer(&flat[0..4]), layer(&flat[4..8])],
        scale: flat[8],
    }
}

fn flat(m: &Model) -> Vec<f64> {
    pytree_std::flatten(m.clone()).0
}

fn params0() -> Vec<f64> {
    vec![0.5, -1.0, 2.0, 0.1, -0.3, 0.7, 1.5, -0.2, 1.0]
}

/// The gradient at step `t`: changes sign and size with the step and the
/// parameter (a stand-in for a real loss).
fn grad(t: u64, p: &[f64]) -> Vec<f64> {
    p.iter()
        .enumerate()
        .map(|(i, &x)| 2.0 * x + ((t as f64 + 1.0) * (i as f64 + 0.5)).sin())
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
            "{what}: element {i}: library {g}, hand {w}"
        );
    }
}

/// Runs `opt` for STEPS steps with `step` (fused) and, separately, with
/// `update` + `apply_updates`; both must match `hand`.
fn check<T>(opt: T, hand: impl Fn() -> Vec<f64>, what: &str)
where
    T: GradientTransformation<Model>,
{
    let want = hand();
    let mut p = model(&params0());
    let mut state = opt.init(&p).unwrap();
    for t in 0..STEPS {
        let mut g = model(&grad(t, &flat(&p)));
        opt.step(&mut p, &mut g, &mut state).unwrap();
    }
    assert_close(&flat(&p), &want, &format!("{what} (step)"));

    let mut p = model(&params0());
    let mut state = opt.init(&p).unwrap();
    for t in 0..STEPS {
        let mut u = model(&grad(t, &flat(&p)));
        opt.update(&mut u, &mut state, &p).unwrap();
        pytree_optim::apply_updates(&mut p, &u).unwrap();
    }
    assert_close(
        &flat(&p),
        &want,
        &format!("{what} (update + apply_updates)"),
    );
}

fn hand_sgd(lr: f64, momentum: Option<f64>, nesterov: bool) -> Vec<f64> {
    let mut p = params0();
    let mut trace = vec![0.0; p.len()];
    for t in 0..STEPS {
        let g = grad(t, &p);
        for i in 0..p.len() {
            let d = match momentum {
                None => g[i],
                Some(mu) => {
                    trace[i] = g[i] + mu * trace[i];
                    if nesterov {
                        g[i] + mu * trace[i]
                    } else {
                        trace[i]
                    }
                }
            };
            p[i] -= lr * d;
        }
    }
    p
}

#[test]
fn sgd_plain_momentum_and_nesterov_match_a_flat_loop() {
    check(sgd(0.05), || hand_sgd(0.05, None, false), "sgd");
    check(
        sgd(0.05).momentum(0.9),
        || hand_sgd(0.05, Some(0.9), false),
        "sgd momentum",
    );
    check(
        sgd(0.05).momentum(0.9).nesterov(),
        || hand_sgd(0.05, Some(0.9), true),
        "sgd nesterov",
    );
}

/// Adam / AdamW by the paper (Kingma & Ba, Algorithm 1; Loshchilov &
/// Hutter's decoupled decay), with optax's `eps_root`, the learning rate of
/// step t taken from `lr(t - 1)` (optax's count) and the gradient
/// optionally clipped to a global norm first.
fn hand_adam(
    lr: &dyn Fn(u64) -> f64,
    wd: f64,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    clip: Option<f64>,
) -> Vec<f64> {
    let mut p = params0();
    let (mut m, mut v) = (vec![0.0; p.len()], vec![0.0; p.len()]);
    for t in 0..STEPS {
        let mut g = grad(t, &p);
        if let Some(max) = clip {
            let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm >= max {
                g.iter_mut().for_each(|x| *x = *x / norm * max);
            }
        }
        let step = (t + 1) as i32;
        for i in 0..p.len() {
            m[i] = b1 * m[i] + (1.0 - b1) * g[i];
            v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
            let m_hat = m[i] / (1.0 - b1.powi(step));
            let v_hat = v[i] / (1.0 - b2.powi(step));
            p[i] -= lr(t) * (m_hat / ((v_hat + eps_root).sqrt() + eps) + wd * p[i]);
        }
    }
    p
}

#[test]
fn adam_and_adamw_match_a_flat_loop() {
    let c = |x: f64| move |_t: u64| x;
    check(
        adam(0.01),
        || hand_adam(&c(0.01), 0.0, 0.9, 0.999, 1e-8, 0.0, None),
        "adam",
    );
    check(
        adam(0.02).b1(0.8).b2(0.99).eps(1e-6).eps_root(1e-9),
        || hand_adam(&c(0.02), 0.0, 0.8, 0.99, 1e-6, 1e-9, None),
        "adam, other hyperparameters",
    );
    check(
        adamw(0.01, 0.1),
        || hand_adam(&c(0.01), 0.1, 0.9, 0.999, 1e-8, 0.0, None),
        "adamw",
    );
}

#[test]
fn clip_then_adamw_and_scheduled_adam_match_a_flat_loop() {
    check(
        chain(clip_by_global_norm(1.0), adamw(0.01, 0.05)),
        || hand_adam(&|_| 0.01, 0.05, 0.9, 0.999, 1e-8, 0.0, Some(1.0)),
        "chain(clip_by_global_norm, adamw)",
    );
    let s = warmup_cosine_decay_schedule(0.0, 0.1, 3, 8, 0.001);
    check(
        adam(s),
        || hand_adam(&|t| s.value(t), 0.0, 0.9, 0.999, 1e-8, 0.0, None),
        "adam with warm-up + cosine",
    );
    let s = cosine_decay_schedule(0.05, 6, 0.2);
    check(
        sgd(s).momentum(0.5),
        || {
            let mut p = params0();
            let mut tr = vec![0.0; p.len()];
            for t in 0..STEPS {
                let g = grad(t, &p);
                let lr = 0.05
                    * (0.8 * 0.5 * (1.0 + (std::f64::consts::PI * t.min(6) as f64 / 6.0).cos())
                        + 0.2);
                for i in 0..p.len() {
                    tr[i] = g[i] + 0.5 * tr[i];
                    p[i] -= lr * tr[i];
                }
            }
            p
        },
        "sgd with cosine decay",
    );
}

#[test]
fn ema_matches_a_flat_loop() {
    let mut p = params0();
    let mut avg = p.clone();
    let mut ema = EmaOfParams::new(0.9, &model(&p)).unwrap();
    for t in 0..STEPS {
        let g = grad(t, &p);
        p.iter_mut().zip(&g).for_each(|(p, g)| *p -= 0.1 * g);
        avg.iter_mut()
            .zip(&p)
            .for_each(|(a, p)| *a = 0.9 * *a + 0.1 * p);
        ema.update(&model(&p)).unwrap();
    }
    assert_close(&flat(ema.average()), &avg, "ema");
    assert_eq!(ema.count(), STEPS);
}

/// The same algorithms in `f32` on scalar leaves agree with the `f64`
/// loop to `f32` precision.
#[test]
fn f32_leaves_follow_the_f64_loop() {
    #[derive(PyTree, Clone, Debug)]
    struct M32 {
        v: Vec<f32>,
    }
    let want = hand_adam(&|_| 0.01, 0.1, 0.9, 0.999, 1e-8, 0.0, None);
    let opt = adamw(0.01, 0.1);
    let mut p = M32 {
        v: params0().iter().map(|&x| x as f32).collect(),
    };
    let mut state = opt.init(&p).unwrap();
    for t in 0..STEPS {
        let pf: Vec<f64> = p.v.iter().map(|&x| f64::from(x)).collect();
        let mut g = M32 {
            v: grad(t, &pf).iter().map(|&x| x as f32).collect(),
        };
        opt.step(&mut p, &mut g, &mut state).unwrap();
    }
    for (g, w) in p.v.iter().zip(&want) {
        assert!(
            (f64::from(*g) - w).abs() < 1e-5 * (1.0 + w.abs()),
            "{g} vs {w}"
        );
    }
}
