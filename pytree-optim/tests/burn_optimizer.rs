//! `pytree_optim::burn::PerParameter` in burn's own machinery: burn's
//! `ModuleOptimizer` with parameter groups (`with_group`) against
//! pytree-optim's `multi_transform` on the whole module; its record saved
//! and loaded mid-training (the run continues bit for bit); burn's `lr`
//! (not used by `new`, multiplying the updates with `scaled_by_lr`);
//! whole-tree transformations refused. (`tests/burn_peers.rs` compares it
//! with `pytree_optim::burn::step` and burn's `AdamW` for 60 steps.)
#![cfg(feature = "burn")]

use burn::module::{Module, ParamGroup};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{GradientsParams, ModuleOptimizer, Optimizer};
use burn::tensor::{Device, Tensor, TensorData};
use pytree_optim::burn::PerParameter;
use pytree_optim::{adam, adamw, chain, clip_by_global_norm, multi_transform, scale, sgd};
use pytree_std::{BurnModule, BurnTensor, KeyPath};

#[derive(Module, Debug)]
struct Mlp {
    fc1: Linear,
    act: Relu,
    fc2: Linear,
}

fn mlp(device: &Device) -> Mlp {
    Mlp {
        fc1: LinearConfig::new(3, 5).init(device),
        act: Relu::new(),
        fc2: LinearConfig::new(5, 2).init(device),
    }
}

/// burn's gradients of a fixed loss at `model`.
fn grads(model: &Mlp, device: &Device) -> GradientsParams {
    let x = Tensor::<2>::from_data(
        TensorData::new(
            (0..12).map(|i| (i as f32 * 0.7).sin()).collect::<Vec<_>>(),
            [4, 3],
        ),
        device,
    );
    let y = model.fc2.forward(model.act.forward(model.fc1.forward(x)));
    let loss = (y - 0.5).powi_scalar(2).mean();
    GradientsParams::from_grads(loss.backward(), model)
}

/// Every parameter's bits, by burn-store's name.
fn bits(model: &Mlp) -> Vec<(String, Vec<u32>)> {
    let tree = BurnModule::new(model.clone());
    pytree_std::paths::leaves_with_path(&tree)
        .into_iter()
        .map(|(path, t)| {
            let v = t.to_data().try_to_vec::<f32>().unwrap();
            (
                path.keystr(pytree_std::paths::KeyStr::SIMPLE),
                v.iter().map(|x| x.to_bits()).collect(),
            )
        })
        .collect()
}

#[test]
fn groups_of_burns_module_optimizer_equal_multi_transform() {
    let device = Device::default().autodiff();
    // fc2 by momentum SGD, the rest by AdamW.
    let mut burns = ModuleOptimizer::from(PerParameter::new(adamw(0.01, 0.1)).unwrap()).with_group(
        ParamGroup::from_predicate("fc2"),
        PerParameter::new(sgd(0.05).momentum(0.9)).unwrap(),
        None,
    );
    let tx = multi_transform(|p: &KeyPath| {
        if p.to_string().contains("fc2") {
            "sgd"
        } else {
            "adamw"
        }
    })
    .group("adamw", adamw(0.01, 0.1))
    .group("sgd", sgd(0.05).momentum(0.9));
    let start = mlp(&device);
    let (mut ours, mut whole) = (start.clone(), start.clone());
    let mut state = pytree_optim::burn::init(&tx, &whole).unwrap();
    for _ in 0..30 {
        let g = grads(&ours, &device);
        whole = pytree_optim::burn::step(&tx, whole, &g, &mut state).unwrap();
        ours = burns.step(1.0, ours.clone(), grads(&ours, &device));
    }
    assert_eq!(bits(&ours), bits(&whole));
    assert_ne!(bits(&ours), bits(&start));
}

#[test]
fn a_record_saved_mid_training_resumes_bit_for_bit() {
    let device = Device::default().autodiff();
    let new = || {
        ModuleOptimizer::from(PerParameter::new(chain(scale(0.5), adamw(0.01, 0.1))).unwrap())
            .with_group(
                ParamGroup::from_predicate("fc2"),
                PerParameter::new(sgd(0.05).momentum(0.9)).unwrap(),
                None,
            )
    };
    let mut straight = new();
    let mut model = mlp(&device);
    for _ in 0..10 {
        model = straight.step(1.0, model.clone(), grads(&model, &device));
    }
    let dir = std::env::temp_dir().join(format!("pytree-optim-burn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("optim.bpk");
    straight.save(&path).unwrap();
    let mut resumed = new().load(&path).unwrap();
    // The count (a static field) came back too: Adam's bias correction
    // of step 11 is not step 1's.
    let (mut a, mut b) = (model.clone(), model);
    for _ in 0..10 {
        a = straight.step(1.0, a.clone(), grads(&a, &device));
        b = resumed.step(1.0, b.clone(), grads(&b, &device));
    }
    assert_eq!(bits(&a), bits(&b));
    // Against a fresh optimizer from the same model: different bits.
    let mut fresh = new();
    let c = fresh.step(1.0, a.clone(), grads(&a, &device));
    let d = straight.step(1.0, a.clone(), grads(&a, &device));
    assert_ne!(bits(&c), bits(&d));
    // Removed last: burn-flex reads a loaded tensor's file lazily.
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_record_holds_the_leaves_and_the_step_count() {
    use burn::optim::{RecordState, StateSink};
    let device = Device::default().autodiff();
    let mut optim = ModuleOptimizer::from(PerParameter::new(adam(0.01)).unwrap());
    let mut model = mlp(&device);
    for _ in 0..3 {
        model = optim.step(1.0, model.clone(), grads(&model, &device));
    }
    // Four parameters, Adam's mu and nu of each.
    assert_eq!(optim.to_record().len(), 8);

    // One parameter's state, as burn flattens it into the record.
    let opt = PerParameter::new(adam(0.01)).unwrap();
    let d = Device::default();
    let mut p = Tensor::<2>::zeros([2, 3], &d);
    let mut state = None;
    for _ in 0..3 {
        (p, state) = opt.step(1.0, p, Tensor::<2>::ones([2, 3], &d), state);
    }
    let mut sink = StateSink::default();
    state.unwrap().state_flatten("7", &mut sink);
    let names: Vec<&str> = sink.tensors.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["7.leaf.0", "7.leaf.1"]);
    assert_eq!(sink.tensors[0].1.shape().as_slice(), [2, 3]);
    let scalars: Vec<(&str, u64)> = sink
        .scalars
        .iter()
        .map(|(n, v)| (n.as_str(), u64::try_from(*v).unwrap()))
        .collect();
    // The step counts of `scale_by_adam` and of the learning rate's
    // schedule.
    assert_eq!(
        scalars,
        [
            ("7.leaves", 2),
            ("7.statics", 2),
            ("7.static.0", 3),
            ("7.static.1", 3)
        ]
    );
}

#[test]
fn burns_lr_is_not_used_by_new_and_scales_the_updates_with_scaled_by_lr() {
    let d = Device::default();
    let p = || Tensor::<2>::from_data([[1.0f32, -2.0], [0.5, 4.0]], &d);
    let g = || Tensor::<2>::from_data([[0.3f32, -0.1], [2.0, 0.0]], &d);
    let data = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap();

    let opt = PerParameter::new(adamw(0.1, 0.01)).unwrap();
    let (a, _) = opt.step(1e-3, p(), g(), None);
    let (b, _) = opt.step(123.0, p(), g(), None);
    assert_eq!(data(a.clone()), data(b));
    let mut tree = BurnTensor::new(p());
    let tx = adamw(0.1, 0.01);
    let mut state = pytree_optim::GradientTransformation::init(&tx, &tree).unwrap();
    pytree_optim::GradientTransformation::step(
        &tx,
        &mut tree,
        &mut BurnTensor::new(g()),
        &mut state,
    )
    .unwrap();
    assert_eq!(data(a), data(tree.into_tensor::<2>().unwrap()));

    let opt = PerParameter::scaled_by_lr(sgd(1.0)).unwrap();
    let (zero, _) = opt.step(0.0, p(), g(), None);
    assert_eq!(data(zero), data(p()));
    let (half, _) = opt.step(0.5, p(), g(), None);
    assert_eq!(data(half), [1.0 - 0.15, -2.0 + 0.05, 0.5 - 1.0, 4.0]);
}

#[test]
fn whole_tree_transformations_are_refused() {
    for refused in [
        PerParameter::new(clip_by_global_norm(1.0)).map(|_| ()),
        PerParameter::new(chain(clip_by_global_norm(1.0), adamw(0.1, 0.0))).map(|_| ()),
        PerParameter::scaled_by_lr(chain(adam(1.0), clip_by_global_norm(1.0))).map(|_| ()),
    ] {
        let err = refused.unwrap_err().to_string();
        assert!(err.contains("sums over the leaves"), "{err}");
    }
}

/// A transformation that takes the global norm (through the context it
/// is given, its fast path) only from its second step on: the
/// constructor's probe (one step) lets it through, the step that sums
/// panics.
#[test]
fn a_step_that_sums_over_the_leaves_panics() {
    use pytree_optim::{global_norm_in, Context, Fused, GradientTransformation, ScaleByAdamState};
    use pytree_std::Error;

    #[derive(Clone)]
    struct NormFromStep2;
    impl GradientTransformation<BurnTensor> for NormFromStep2 {
        type State = ScaleByAdamState<BurnTensor>;
        fn init(&self, params: &BurnTensor) -> Result<Self::State, Error> {
            pytree_optim::scale_by_adam().init(params)
        }
        fn update(
            &self,
            updates: &mut BurnTensor,
            state: &mut Self::State,
            params: &BurnTensor,
        ) -> Result<(), Error> {
            self.update_in(&Context::default(), updates, state, params)
        }
        fn fused(&self) -> Option<&dyn Fused<BurnTensor, Self::State>> {
            Some(self)
        }
    }
    impl Fused<BurnTensor, ScaleByAdamState<BurnTensor>> for NormFromStep2 {
        fn update_in(
            &self,
            cx: &Context<'_>,
            updates: &mut BurnTensor,
            state: &mut ScaleByAdamState<BurnTensor>,
            _: &BurnTensor,
        ) -> Result<(), Error> {
            state.count += 1;
            if state.count >= 2 {
                global_norm_in(cx, &*updates)?;
            }
            Ok(())
        }
    }
    let opt = PerParameter::new(NormFromStep2).unwrap();
    let d = Device::default();
    let (p, s) = opt.step(
        1.0,
        Tensor::<1>::zeros([2], &d),
        Tensor::<1>::ones([2], &d),
        None,
    );
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        opt.step(1.0, p, Tensor::<1>::ones([2], &d), s)
    }));
    let message = *panicked.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("sums over the leaves"), "{message}");
}
