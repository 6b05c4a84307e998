//! Issues 19 and 27: training resumes bit for bit from a checkpoint. Each
//! optimizer's state is a pytree of the parameters' leaf type, saved with
//! `checkpoint::save` beside the model; a run stopped after step k, saved,
//! loaded (by type from the files alone, in place into a freshly
//! initialised model and state with `load_into`, or against one with
//! `load_like`) and continued ends with the parameters of an uninterrupted
//! run, bit for bit. The step counts are static fields, kept in the
//! files' TreeDefs: every way of loading restores them (before issue 27,
//! `load_into` kept the fresh state's 0 and reported a complete load, and
//! `load_like` refused the states' `#[pytree(skip)]` masks).

mod models;

use models::arrays::Linear;
use pytree_optim::{
    adam, adamw, chain, clip_by_global_norm, ema, multi_transform, scale, scale_by_schedule,
    set_to_zero, sgd, warmup_cosine_decay_schedule, GradientTransformation, Mask,
};
use pytree_std::checkpoint::{self, Load, TensorLeaf};
use pytree_std::ndarray::{Array1, Array2, ArrayD};
use pytree_std::{Flatten, KeyPath, PyTree, Std, Unflatten};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp {
    layers: Vec<Linear>,
    /// A running statistic: outside the optimizers' default mask.
    #[pytree(kind = "state")]
    running: Array1<f32>,
}

fn model() -> Mlp {
    let lin = |i: usize, o: usize, s: f32| Linear {
        w: Array2::from_shape_fn((i, o), |(r, c)| s * ((r * o + c) as f32 * 0.37).sin()),
        b: Array1::from_shape_fn(o, |c| s * (c as f32 * 0.11 - 0.2)),
    };
    Mlp {
        layers: vec![lin(4, 3, 1.0), lin(3, 2, -0.5)],
        running: Array1::from_elem(2, 0.25),
    }
}

/// A gradient that depends on the parameters and the step, so that a
/// wrong state anywhere changes the trajectory.
fn grads(p: &Mlp, t: usize) -> Mlp {
    let f = (t + 1) as f32;
    let mut g = p.clone();
    for layer in &mut g.layers {
        layer.w.mapv_inplace(|x| (x * f).sin() + 0.1 * x);
        layer.b.mapv_inplace(|x| (x * 3.0 + f).cos());
    }
    g.running.mapv_inplace(|x| x + 1.0);
    g
}

fn bits(p: &Mlp) -> Vec<u32> {
    pytree_std::leaves(p)
        .into_iter()
        .flat_map(|l| l.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
        .collect()
}

/// How a resumed run reads its checkpoint.
#[derive(Clone, Copy, Debug)]
enum Resume {
    /// `checkpoint::load` by type, from the files alone.
    ByType,
    /// `Checkpoint::load_into` a freshly initialised model and state.
    Into,
    /// `Checkpoint::load_like` with a freshly initialised template.
    Like,
}

/// Runs `steps` steps uninterrupted, then `k` steps, a save of the model
/// and the state, a load of both (each way of [`Resume`]), and the
/// remaining steps: the final parameters must have the same bits. Returns
/// the state file's tensor names.
fn resumes<O>(name: &str, opt: &O, k: usize, steps: usize) -> Vec<String>
where
    O: GradientTransformation<Mlp>,
    O::State: Unflatten<Std> + Flatten<Std, Leaf = ArrayD<f32>>,
    ArrayD<f32>: TensorLeaf,
{
    let mut whole = model();
    let mut state = opt.init(&whole).unwrap();
    for t in 0..steps {
        let mut g = grads(&whole, t);
        opt.step(&mut whole, &mut g, &mut state).unwrap();
    }

    let dir = pytree_tests::scratch_dir(&format!("resume-{name}"));
    let (model_path, state_path) = (dir.join("model.safetensors"), dir.join("opt.safetensors"));
    {
        let mut p = model();
        let mut state = opt.init(&p).unwrap();
        for t in 0..k {
            let mut g = grads(&p, t);
            opt.step(&mut p, &mut g, &mut state).unwrap();
        }
        checkpoint::save(&model_path, &p).unwrap();
        checkpoint::save(&state_path, &state).unwrap();
    }
    for way in [Resume::ByType, Resume::Into, Resume::Like] {
        // A new process, as it were: the model and the state from the
        // files, into what a fresh run starts from where it asks for it.
        let fresh = || {
            let p = model();
            let state = opt.init(&p).unwrap();
            (p, state)
        };
        let (mut p, mut state) = match way {
            Resume::ByType => (
                checkpoint::load::<Mlp>(&model_path).unwrap(),
                checkpoint::load::<O::State>(&state_path).unwrap(),
            ),
            Resume::Into => {
                let (mut p, mut state) = fresh();
                let file = |path: &std::path::Path| checkpoint::Load::new().open(path).unwrap();
                assert!(file(&model_path).load_into(&mut p).unwrap().is_complete());
                assert!(file(&state_path)
                    .load_into(&mut state)
                    .unwrap()
                    .is_complete());
                (p, state)
            }
            Resume::Like => {
                let (p, state) = fresh();
                (
                    checkpoint::Load::new()
                        .open(&model_path)
                        .unwrap()
                        .load_like(&p)
                        .unwrap()
                        .0,
                    checkpoint::Load::new()
                        .open(&state_path)
                        .unwrap()
                        .load_like(&state)
                        .unwrap()
                        .0,
                )
            }
        };
        for t in k..steps {
            let mut g = grads(&p, t);
            opt.step(&mut p, &mut g, &mut state).unwrap();
        }
        assert_eq!(
            bits(&p),
            bits(&whole),
            "{name}: resumed after {k} steps ({way:?})"
        );
        assert_ne!(bits(&p), bits(&model()), "{name}: the run moved");
    }

    let names = Load::new()
        .open(&state_path)
        .unwrap()
        .names()
        .map(String::from)
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    names
}

#[test]
fn every_optimizer_resumes_bit_for_bit() {
    let names = resumes("sgd", &sgd(0.05), 3, 6);
    assert!(names.is_empty(), "{names:?}");
    let names = resumes("momentum", &sgd(0.05).momentum(0.9), 3, 6);
    assert_eq!(names[0], "0.trace.layers.0.w");
    resumes("nesterov", &sgd(0.05).momentum(0.9).nesterov(), 2, 5);
    let names = resumes("adam", &adam(0.01), 3, 7);
    assert_eq!(
        names,
        [
            "0.mu.layers.0.w",
            "0.mu.layers.0.b",
            "0.mu.layers.1.w",
            "0.mu.layers.1.b",
            "0.mu.running",
            "0.nu.layers.0.w",
            "0.nu.layers.0.b",
            "0.nu.layers.1.w",
            "0.nu.layers.1.b",
            "0.nu.running"
        ]
    );
    // The weight-decay mask (matrices only) is configuration: a loaded
    // state evaluates it again at its first step.
    let matrices = Mask::new(|p: &KeyPath| p.to_string().ends_with(".w"));
    resumes("adamw", &adamw(0.01, 0.1).weight_decay_mask(matrices), 4, 7);
    resumes("ema", &chain(ema(0.9, true), scale(-0.05)), 3, 6);
    // Parameter groups: a state per group, in one tuple.
    let label = |p: &KeyPath| {
        if p.to_string().ends_with(".w") {
            "matrices"
        } else {
            "rest"
        }
    };
    let groups = multi_transform(label)
        .group("matrices", adamw(0.01, 0.1))
        .group(
            "rest",
            chain(clip_by_global_norm(0.5), sgd(0.05).momentum(0.9)),
        )
        .group("frozen", set_to_zero());
    let names = resumes("groups", &groups, 3, 6);
    assert_eq!(names[0], "0.0.inner.0.mu.layers.0.w");
}

#[test]
fn a_chain_with_a_schedule_resumes_bit_for_bit() {
    // The schedule's value depends on the step count: a count lost in the
    // checkpoint changes the learning rate after the resume.
    let schedule = warmup_cosine_decay_schedule(0.0, 0.05, 3, 10, 0.001);
    let opt = chain(clip_by_global_norm(1.0), adam(schedule));
    let names = resumes("clip_adam_schedule", &opt, 4, 9);
    assert_eq!(names[0], "1.0.mu.layers.0.w");

    let opt = chain(clip_by_global_norm(1.0), sgd(0.1).momentum(0.9))
        .then(scale_by_schedule(|t: u64| 1.0 / (1.0 + t as f64)));
    resumes("clip_momentum_scale_by_schedule", &opt, 2, 6);
}

#[test]
fn the_step_count_travels_in_the_metadata() {
    let opt = adam(0.01);
    let mut p = model();
    let mut state = opt.init(&p).unwrap();
    for t in 0..5 {
        let mut g = grads(&p, t);
        opt.step(&mut p, &mut g, &mut state).unwrap();
    }
    let bytes = checkpoint::Save::new().to_bytes(&state).unwrap();
    let back: pytree_optim::AdamState<Mlp> =
        Load::new().from_bytes(bytes).unwrap().load().unwrap().0;
    assert_eq!((back.0.count, back.1.count), (5, 5));
    assert_eq!((&back.0.mu, &back.0.nu), (&state.0.mu, &state.0.nu));

    // In place into a fresh state (the report: `count` stayed 0
    // behind a complete report), and against one as a template.
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&state).unwrap())
        .unwrap();
    let mut fresh = opt.init(&model()).unwrap();
    assert!(file.load_into(&mut fresh).unwrap().is_complete());
    assert_eq!((fresh.0.count, fresh.1.count), (5, 5));
    assert_eq!((&fresh.0.mu, &fresh.0.nu), (&state.0.mu, &state.0.nu));
    let like = file.load_like(&opt.init(&model()).unwrap()).unwrap().0;
    assert_eq!((like.0.count, &like.0.mu), (5, &state.0.mu));
}
