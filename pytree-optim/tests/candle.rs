//! pytree-optim over a candle model (feature `candle`): parameters are
//! candle variables, gradients come from candle's autograd, and the loss
//! trajectories equal candle-nn's own optimizers on the same problem.
//!
//! The problem: a 2-16-1 tanh MLP fitting `y = sin(2 x0) + x1² / 2` on a
//! fixed 8x8 grid, weights from a fixed formula (no randomness), f32.
//! pytree-optim computes each element's update in `f32` registers, as over
//! `f32` arrays (candle-nn: one `f32` tensor per operation), so trajectories
//! agree to float rounding: the tolerance is `1e-5` relative on the loss
//! over 60 steps (measured on x86-64: 3e-7 for SGD, 1e-6 with momentum,
//! 1.3e-6 for AdamW).
#![cfg(feature = "candle")]

use candle_nn::Optimizer;
use pytree_optim::{
    adamw, candle as pc, chain, clip_by_global_norm, sgd, GradientTransformation, Mask, Wrap,
};
use pytree_std::candle_core::{DType, Device, Result as CResult, Tensor, Var};
use pytree_std::{KeyPath, PyTree};

const STEPS: usize = 60;
const TOL: f64 = 1e-5;

#[derive(PyTree, Clone, Debug)]
struct Mlp {
    w1: Var,
    b1: Var,
    w2: Var,
    b2: Var,
}

/// The same MLP with fields that are the variables' tensors.
#[derive(PyTree, Clone, Debug)]
struct TensorMlp {
    w1: Tensor,
    b1: Tensor,
    w2: Tensor,
    b2: Tensor,
}

fn init(shape: &[usize], k: f32) -> Vec<f32> {
    let n: usize = shape.iter().product();
    (0..n).map(|i| 0.5 * (1.3 * i as f32 + k).sin()).collect()
}

fn var(shape: &[usize], k: f32) -> Var {
    Var::from_vec(init(shape, k), shape, &Device::Cpu).unwrap()
}

fn mlp() -> Mlp {
    Mlp {
        w1: var(&[2, 16], 0.1),
        b1: var(&[16], 0.2),
        w2: var(&[16, 1], 0.3),
        b2: var(&[1], 0.4),
    }
}

fn data() -> (Tensor, Tensor) {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for i in 0..8 {
        for j in 0..8 {
            let (a, b) = (i as f32 / 3.5 - 1.0, j as f32 / 3.5 - 1.0);
            xs.extend([a, b]);
            ys.push((2.0 * a).sin() + 0.5 * b * b);
        }
    }
    let d = Device::Cpu;
    (
        Tensor::from_vec(xs, (64, 2), &d).unwrap(),
        Tensor::from_vec(ys, (64, 1), &d).unwrap(),
    )
}

fn loss(
    w1: &Tensor,
    b1: &Tensor,
    w2: &Tensor,
    b2: &Tensor,
    x: &Tensor,
    y: &Tensor,
) -> CResult<Tensor> {
    let h = x.matmul(w1)?.broadcast_add(b1)?.tanh()?;
    h.matmul(w2)?.broadcast_add(b2)?.sub(y)?.sqr()?.mean_all()
}

fn mlp_loss(m: &Mlp, x: &Tensor, y: &Tensor) -> CResult<Tensor> {
    loss(&m.w1, &m.b1, &m.w2, &m.b2, x, y)
}

fn scalar(t: &Tensor) -> f64 {
    t.to_dtype(DType::F64).unwrap().to_scalar::<f64>().unwrap()
}

/// Trains `mlp()` with pytree-optim's `opt`, the loss before each step.
fn trajectory<O>(opt: &O) -> Vec<f64>
where
    O: GradientTransformation<Mlp>,
{
    let (x, y) = data();
    let mut m = mlp();
    let mut state = opt.init(&m).unwrap();
    (0..STEPS)
        .map(|_| {
            let (l, mut g) = pc::value_and_grad(&m, |m| mlp_loss(m, &x, &y)).unwrap();
            opt.step(&mut m, &mut g, &mut state).unwrap();
            scalar(&l)
        })
        .collect()
}

/// Trains `mlp()` with candle-nn's optimizer built by `make`.
fn reference<O: Optimizer>(make: impl FnOnce(Vec<Var>) -> O) -> Vec<f64> {
    let (x, y) = data();
    let m = mlp();
    let mut opt = make(vec![m.w1.clone(), m.b1.clone(), m.w2.clone(), m.b2.clone()]);
    (0..STEPS)
        .map(|_| {
            let l = mlp_loss(&m, &x, &y).unwrap();
            opt.backward_step(&l).unwrap();
            scalar(&l)
        })
        .collect()
}

fn assert_same(ours: &[f64], theirs: &[f64]) {
    assert_eq!(ours.len(), theirs.len());
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert!(
            (a - b).abs() <= TOL * b.abs().max(1e-3),
            "step {i}: pytree-optim {a}, reference {b}"
        );
    }
    // The problem is learned, so equal trajectories are not equal constants.
    assert!(
        ours[STEPS - 1] < 0.5 * ours[0],
        "{} -> {}",
        ours[0],
        ours[STEPS - 1]
    );
}

#[test]
fn sgd_follows_candle_nn_sgd() {
    let ours = trajectory(&sgd(0.2));
    let theirs = reference(|vars| candle_nn::SGD::new(vars, 0.2).unwrap());
    assert_same(&ours, &theirs);
}

#[test]
fn adamw_follows_candle_nn_adamw() {
    let ours = trajectory(&adamw(0.02, 0.01));
    let params = candle_nn::ParamsAdamW {
        lr: 0.02,
        weight_decay: 0.01,
        ..Default::default()
    };
    let theirs = reference(|vars| candle_nn::AdamW::new(vars, params).unwrap());
    assert_same(&ours, &theirs);
}

/// candle-nn's SGD has no momentum: the reference is PyTorch's formula
/// (`t = g + mu t`, `p -= lr t`; Nesterov `p -= lr (g + mu t)`), written
/// here with candle tensor operations on the variables.
fn momentum_reference(lr: f64, mu: f64, nesterov: bool) -> Vec<f64> {
    let (x, y) = data();
    let m = mlp();
    let vars = [&m.w1, &m.b1, &m.w2, &m.b2];
    let mut traces: Vec<Tensor> = vars.iter().map(|v| v.zeros_like().unwrap()).collect();
    (0..STEPS)
        .map(|_| {
            let l = mlp_loss(&m, &x, &y).unwrap();
            let store = l.backward().unwrap();
            for (v, t) in vars.iter().zip(traces.iter_mut()) {
                let g = store.get(v).unwrap();
                *t = (g + (&*t * mu).unwrap()).unwrap();
                let d = if nesterov {
                    (g + (&*t * mu).unwrap()).unwrap()
                } else {
                    t.clone()
                };
                v.set(&(v.as_tensor() - (d * lr).unwrap()).unwrap())
                    .unwrap();
            }
            scalar(&l)
        })
        .collect()
}

#[test]
fn momentum_follows_the_pytorch_formula() {
    assert_same(
        &trajectory(&sgd(0.1).momentum(0.9)),
        &momentum_reference(0.1, 0.9, false),
    );
    assert_same(
        &trajectory(&sgd(0.1).momentum(0.9).nesterov()),
        &momentum_reference(0.1, 0.9, true),
    );
}

/// The report: fields that are the tensors of two variables, the
/// gradient tree from the `GradStore`, Adam; every step finds a gradient
/// for every parameter, and the variables see every update.
#[test]
fn a_model_of_variable_tensors_stays_trainable_at_every_step() {
    let (x, y) = data();
    let vars = mlp();
    let mut m = TensorMlp {
        w1: vars.w1.as_tensor().clone(),
        b1: vars.b1.as_tensor().clone(),
        w2: vars.w2.as_tensor().clone(),
        b2: vars.b2.as_tensor().clone(),
    };
    let opt = chain(clip_by_global_norm(1.0), adamw(0.05, 1e-4));
    let mut state = opt.init(&m).unwrap();
    let mut losses = Vec::new();
    for _ in 0..100 {
        let l = loss(&m.w1, &m.b1, &m.w2, &m.b2, &x, &y).unwrap();
        let store = l.backward().unwrap();
        let mut g = pc::grads(&m, &store).unwrap();
        opt.step(&mut m, &mut g, &mut state).unwrap();
        assert!(pytree_std::leaves(&m).iter().all(|t| t.is_variable()));
        losses.push(scalar(&l));
    }
    assert!(
        losses[99] < 0.1 * losses[0],
        "{} -> {}",
        losses[0],
        losses[99]
    );
    // The variables the model was built from hold the trained values.
    let after = loss(&vars.w1, &vars.b1, &vars.w2, &vars.b2, &x, &y).unwrap();
    let model = loss(&m.w1, &m.b1, &m.w2, &m.b2, &x, &y).unwrap();
    assert_eq!(scalar(&after), scalar(&model));
}

/// A weight tied between two fields is one variable: updated once per
/// step, as if it were held once.
#[derive(PyTree, Clone, Debug)]
struct Tied {
    encoder: Var,
    decoder: Var,
    bias: Var,
}

fn tied_loss(e: &Tensor, d: &Tensor, b: &Tensor, x: &Tensor, y: &Tensor) -> CResult<Tensor> {
    let h = x.matmul(e)?.tanh()?;
    h.matmul(&d.t()?)?
        .broadcast_add(b)?
        .sub(y)?
        .sqr()?
        .mean_all()
}

#[test]
fn a_variable_shared_by_two_fields_is_updated_once_per_step() {
    let (x, _) = data();
    let y = x.sin().unwrap();
    let fresh = || (var(&[2, 4], 0.5), var(&[2], 0.6));
    // Held twice, trained by pytree-optim.
    let (w, b) = fresh();
    let mut tied = Tied {
        encoder: w.clone(),
        decoder: w.clone(),
        bias: b,
    };
    let opt = adamw(0.05, 0.01);
    let mut state = opt.init(&tied).unwrap();
    // Held once, trained by candle-nn on the same loss.
    let (w_ref, b_ref) = fresh();
    let mut reference = candle_nn::AdamW::new(
        vec![w_ref.clone(), b_ref.clone()],
        candle_nn::ParamsAdamW {
            lr: 0.05,
            weight_decay: 0.01,
            ..Default::default()
        },
    )
    .unwrap();
    for step in 0..STEPS {
        let (l, mut g) = pc::value_and_grad(&tied, |t| {
            tied_loss(&t.encoder, &t.decoder, &t.bias, &x, &y)
        })
        .unwrap();
        opt.step(&mut tied, &mut g, &mut state).unwrap();
        let l_ref = tied_loss(&w_ref, &w_ref, &b_ref, &x, &y).unwrap();
        reference.backward_step(&l_ref).unwrap();
        let (a, b) = (scalar(&l), scalar(&l_ref));
        assert!((a - b).abs() <= TOL * b.abs(), "step {step}: {a} vs {b}");
    }
    // The second holder has no moments of its own.
    assert_eq!(
        state
            .0
            .mu
            .decoder
            .sqr()
            .unwrap()
            .sum_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap(),
        0.0
    );
}

#[test]
fn a_parameter_without_a_gradient_is_an_error_naming_it() {
    let (x, y) = data();
    let m = mlp();
    let l = mlp_loss(&m, &x, &y).unwrap();
    let mut with_frozen = (m.clone(), var(&[3], 0.9));
    let store = l.backward().unwrap();
    let err = pc::grads(&with_frozen, &store).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1]: the function failed: no gradient for this parameter (it is not a variable, or the loss does not depend on it)"
    );
    // Masked out, it needs none, and the optimizer leaves it alone.
    let trainable = Mask::new(|p: &KeyPath| p.to_string() != "[1]");
    let mut g = pc::grads_masked(&with_frozen, &store, &trainable).unwrap();
    let opt = adamw(0.1, 0.1).mask(trainable);
    let mut state = opt.init(&with_frozen).unwrap();
    let frozen_before = with_frozen.1.to_vec1::<f32>().unwrap();
    let w1_before = with_frozen
        .0
        .w1
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    opt.step(&mut with_frozen, &mut g, &mut state).unwrap();
    assert_eq!(with_frozen.1.to_vec1::<f32>().unwrap(), frozen_before);
    assert_ne!(
        with_frozen
            .0
            .w1
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap(),
        w1_before
    );
}

#[test]
fn gradients_of_another_shape_or_dtype_change_nothing() {
    let (x, y) = data();
    let mut m = mlp();
    let opt = chain(clip_by_global_norm(1.0), adamw(0.1, 0.1));
    let mut state = opt.init(&m).unwrap();
    let (_, good) = pc::value_and_grad(&m, |m| mlp_loss(m, &x, &y)).unwrap();
    let before = m.w1.flatten_all().unwrap().to_vec1::<f32>().unwrap();

    let mut wide = good.clone();
    wide.b1 = Var::zeros(17, DType::F32, &Device::Cpu).unwrap();
    let err = opt.step(&mut m, &mut wide, &mut state).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .b1: leaf signature mismatch: expected f32[16]@cpu, found f32[17]@cpu"
    );
    let mut half = good.clone();
    half.w2 = Var::zeros((16, 1), DType::F16, &Device::Cpu).unwrap();
    let err = opt.step(&mut m, &mut half, &mut state).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .w2: leaf signature mismatch: expected f32[16,1]@cpu, found f16[16,1]@cpu"
    );
    assert_eq!(
        m.w1.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        before
    );
    assert_eq!(
        (
            state.1 .0.count,
            state
                .1
                 .0
                .mu
                .w1
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap()
        ),
        (0, 0.0)
    );
}

/// 16-bit parameters: the update computes in `f64` from the stored
/// values and rounds once per element, so a bf16 / f16 model trains like
/// the f32 one, within the 16-bit formats' precision.
#[test]
fn half_precision_parameters_train_like_f32() {
    let (x, y) = data();
    let f32_losses = trajectory(&adamw(0.02, 0.01));
    for dtype in [DType::BF16, DType::F16] {
        let cast = |v: &Var| Var::from_tensor(&v.to_dtype(dtype).unwrap()).unwrap();
        let m32 = mlp();
        let mut m = Mlp {
            w1: cast(&m32.w1),
            b1: cast(&m32.b1),
            w2: cast(&m32.w2),
            b2: cast(&m32.b2),
        };
        let opt = adamw(0.02, 0.01);
        let mut state = opt.init(&m).unwrap();
        assert_eq!(state.0.mu.w1.dtype(), dtype);
        let (x, y) = (x.to_dtype(dtype).unwrap(), y.to_dtype(dtype).unwrap());
        for (step, reference) in f32_losses.iter().enumerate() {
            let (l, mut g) = pc::value_and_grad(&m, |m| mlp_loss(m, &x, &y)).unwrap();
            opt.step(&mut m, &mut g, &mut state).unwrap();
            let l = scalar(&l);
            assert!(
                (l - reference).abs() <= 0.05 * reference,
                "{dtype:?} step {step}: {l} vs f32 {reference}"
            );
        }
    }
}

/// Issue 27: the common loop (a model of variables, its forward pass, the
/// loss, the gradients, the step) written as candle-nn's own loop is, and
/// run beside it. candle-nn: a `VarMap`, `candle_nn::linear` layers, its
/// `AdamW`, `opt.backward_step(&loss)`. Here: a derived pytree of `Var`s
/// starting from the same values, a forward pass that reads the `Var`s
/// where candle-nn's reads its layers' tensors (no copy of the model as
/// tensors), the same loss, `pc::Optimizer` and `opt.backward_step(&loss)`.
/// The losses agree step by step, and so do the trained variables.
mod the_common_loop {
    use super::*;
    use candle_nn::{Module, VarBuilder, VarMap};

    /// candle-nn's model: its layers hold the variables' tensors.
    struct NnMlp {
        l1: candle_nn::Linear,
        l2: candle_nn::Linear,
    }

    impl NnMlp {
        fn new(vb: VarBuilder) -> CResult<NnMlp> {
            Ok(NnMlp {
                l1: candle_nn::linear(2, 16, vb.pp("l1"))?,
                l2: candle_nn::linear(16, 1, vb.pp("l2"))?,
            })
        }

        fn forward(&self, x: &Tensor) -> CResult<Tensor> {
            self.l2.forward(&self.l1.forward(x)?.tanh()?)
        }
    }

    /// The same model as a pytree of variables.
    #[derive(PyTree, Clone, Debug)]
    struct Linear {
        weight: Var,
        bias: Var,
    }

    impl Linear {
        /// `&Var` where candle-nn's `Linear::forward` has `&Tensor`.
        fn forward(&self, x: &Tensor) -> CResult<Tensor> {
            x.matmul(&self.weight.t()?)?.broadcast_add(&self.bias)
        }

        /// candle-nn's own layer over the same variables (an owned
        /// `Tensor` is the variable's tensor, not a copy).
        fn as_nn(&self) -> candle_nn::Linear {
            candle_nn::Linear::new(
                self.weight.as_tensor().clone(),
                Some(self.bias.as_tensor().clone()),
            )
        }
    }

    #[derive(PyTree, Clone, Debug)]
    struct Model {
        l1: Linear,
        l2: Linear,
    }

    impl Model {
        fn forward(&self, x: &Tensor) -> CResult<Tensor> {
            self.l2.as_nn().forward(&self.l1.forward(x)?.tanh()?)
        }
    }

    /// A copy of candle-nn's initial values (its initialisation is
    /// random): new variables, not the same ones.
    fn copy_of(varmap: &VarMap) -> Model {
        let vars = varmap.data().lock().unwrap();
        let var = |name: &str| Var::from_tensor(&vars[name].as_tensor().copy().unwrap()).unwrap();
        Model {
            l1: Linear {
                weight: var("l1.weight"),
                bias: var("l1.bias"),
            },
            l2: Linear {
                weight: var("l2.weight"),
                bias: var("l2.bias"),
            },
        }
    }

    #[test]
    fn reads_and_trains_as_candle_nns() {
        let (x, y) = data();
        let dev = Device::Cpu;
        let adamw_params = candle_nn::ParamsAdamW {
            lr: 0.02,
            weight_decay: 0.01,
            ..Default::default()
        };

        // candle-nn's loop.
        let varmap = VarMap::new();
        let nn = NnMlp::new(VarBuilder::from_varmap(&varmap, DType::F32, &dev)).unwrap();
        let model = copy_of(&varmap);
        let mut opt = candle_nn::AdamW::new(varmap.all_vars(), adamw_params).unwrap();
        let mut theirs = Vec::new();
        for _ in 0..STEPS {
            let loss = candle_nn::loss::mse(&nn.forward(&x).unwrap(), &y).unwrap();
            opt.backward_step(&loss).unwrap();
            theirs.push(scalar(&loss));
        }

        // Ours, line for line.
        let mut opt = pc::Optimizer::new(&model, adamw(0.02, 0.01)).unwrap();
        let mut ours = Vec::new();
        for _ in 0..STEPS {
            let loss = candle_nn::loss::mse(&model.forward(&x).unwrap(), &y).unwrap();
            opt.backward_step(&loss).unwrap();
            ours.push(scalar(&loss));
        }

        assert_same(&ours, &theirs);
        // The model the caller kept holds the trained values (the
        // optimizer holds the same variables), equal to candle-nn's.
        let vars = varmap.data().lock().unwrap();
        for (name, v) in [
            ("l1.weight", &model.l1.weight),
            ("l1.bias", &model.l1.bias),
            ("l2.weight", &model.l2.weight),
            ("l2.bias", &model.l2.bias),
        ] {
            let want = vars[name].flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let got = v.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-4 * (1.0 + b.abs()),
                    "{name}: {a} vs {b}"
                );
            }
        }
        assert_eq!(opt.state().0.count, STEPS as u64);
    }

    /// `value_and_grad` takes a loss that returns the tensor itself, or
    /// candle's `Result` (with `?`, or ending in `Ok(..)`): the same
    /// values and gradients.
    #[test]
    fn value_and_grad_takes_a_tensor_or_a_result() {
        let (x, y) = data();
        let m = mlp();
        let (l1, g1) = pc::value_and_grad(&m, |m| mlp_loss(m, &x, &y)).unwrap();
        let (l2, g2) = pc::value_and_grad(&m, |m| mlp_loss(m, &x, &y).unwrap()).unwrap();
        let (l3, g3) = pc::value_and_grad(&m, |m| {
            let loss = mlp_loss(m, &x, &y)?;
            Ok(loss)
        })
        .unwrap();
        assert_eq!((scalar(&l1), scalar(&l1)), (scalar(&l2), scalar(&l3)));
        for ((a, b), c) in pytree_std::leaves(&g1)
            .into_iter()
            .zip(pytree_std::leaves(&g2))
            .zip(pytree_std::leaves(&g3))
        {
            let a = a.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            assert_eq!(a, b.flatten_all().unwrap().to_vec1::<f32>().unwrap());
            assert_eq!(a, c.flatten_all().unwrap().to_vec1::<f32>().unwrap());
        }
        // A failing loss is an error, not a panic.
        let bad = Tensor::zeros((3, 3), DType::F32, &Device::Cpu).unwrap();
        let err = pc::value_and_grad(&m, |m| x.matmul(&m.w1)?.matmul(&bad)).unwrap_err();
        assert!(
            err.to_string().contains("candle: shape mismatch in matmul"),
            "{err}"
        );
    }
}
