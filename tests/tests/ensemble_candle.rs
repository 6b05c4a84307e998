//! Issue 19: ensembles of candle tensors (`pytree_std::ensemble` with the
//! `candle` feature). Stacked leaves are checked against the members'
//! values read directly from candle (not only round trips), dtype and
//! device are kept, `Var` trees stack into `Var` trees, members and the
//! stacked tree never share memory, and a vmapped-style forward of three
//! stacked MLPs (batched matmul over the member axis) equals the three
//! separate forwards, gradients included; the stacked ensemble trained
//! with Adam ends where each member trained alone by candle-nn's AdamW
//! ends.

use pytree_optim::{sgd, GradientTransformation};
use pytree_std::candle_core::{DType, Device, Tensor, Var, D};
use pytree_std::ensemble::{stack_leaves, unstack_leaves};
use pytree_std::PyTree;

mod models;

use models::Linear as Layer;

/// A dense layer of tensors.
type Linear = Layer<Tensor>;

#[derive(PyTree, Clone, Debug)]
struct Mlp<L> {
    layers: Vec<Layer<L>>,
    #[pytree(static)]
    name: &'static str,
}

fn t(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(values, shape, &Device::Cpu).unwrap()
}

/// A deterministic tensor of `shape` from `seed` (values in [-1, 1)).
fn filled(seed: u32, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n as u32)
        .map(|i| {
            let x = (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)) % 1000;
            x as f32 / 500.0 - 1.0
        })
        .collect();
    t(&values, shape)
}

fn linear(seed: u32) -> Linear {
    Linear {
        w: filled(seed, &[2, 3]),
        // Another dtype than `w`: each leaf keeps its own.
        b: filled(seed + 100, &[3]).to_dtype(DType::F64).unwrap(),
    }
}

#[test]
fn stacked_leaves_are_the_members_leaves_along_a_new_first_axis() {
    let members: Vec<Linear> = (0..3).map(linear).collect();
    let stacked = stack_leaves(&members).unwrap();
    assert_eq!(stacked.w.dims(), [3, 2, 3]);
    assert_eq!(stacked.b.dims(), [3, 3]);
    assert_eq!(
        (stacked.w.dtype(), stacked.b.dtype()),
        (DType::F32, DType::F64)
    );
    assert!(stacked.w.device().same_device(&Device::Cpu));
    // Against the members' values, read directly.
    let w: Vec<Vec<Vec<f32>>> = members.iter().map(|m| m.w.to_vec2().unwrap()).collect();
    let b: Vec<Vec<f64>> = members.iter().map(|m| m.b.to_vec1().unwrap()).collect();
    assert_eq!(stacked.w.to_vec3::<f32>().unwrap(), w);
    assert_eq!(stacked.b.to_vec2::<f64>().unwrap(), b);

    // Unstacking: member k is the stacked leaf's slice k (`Tensor::get`).
    let back = unstack_leaves(&stacked).unwrap();
    assert_eq!(back.len(), 3);
    for (k, m) in back.iter().enumerate() {
        assert_eq!(m.w.dims(), [2, 3]);
        assert_eq!(m.b.dtype(), DType::F64);
        assert_eq!(
            m.w.to_vec2::<f32>().unwrap(),
            stacked.w.get(k).unwrap().to_vec2::<f32>().unwrap()
        );
        assert_eq!(m.b.to_vec1::<f64>().unwrap(), b[k]);
        assert!(m.w.is_contiguous() && m.b.is_contiguous());
    }
}

#[test]
fn half_precision_and_scalar_leaves_stack() {
    // bf16 leaves stay bf16; 0-d leaves become a member axis of their own.
    let members: Vec<(Tensor, Tensor)> = (0..4)
        .map(|k| {
            (
                filled(k, &[5]).to_dtype(DType::BF16).unwrap(),
                Tensor::new(k as f32, &Device::Cpu).unwrap(),
            )
        })
        .collect();
    let stacked = stack_leaves(&members).unwrap();
    assert_eq!(stacked.0.dtype(), DType::BF16);
    assert_eq!(stacked.0.dims(), [4, 5]);
    assert_eq!(stacked.1.to_vec1::<f32>().unwrap(), [0.0, 1.0, 2.0, 3.0]);
    let expected: Vec<Vec<f32>> = members
        .iter()
        .map(|m| m.0.to_dtype(DType::F32).unwrap().to_vec1().unwrap())
        .collect();
    assert_eq!(
        stacked
            .0
            .to_dtype(DType::F32)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap(),
        expected
    );
    let back = unstack_leaves(&stacked).unwrap();
    assert_eq!(back[2].1.dims(), [0usize; 0]);
    assert_eq!(back[2].1.to_scalar::<f32>().unwrap(), 2.0);
    assert_eq!(back[3].0.dtype(), DType::BF16);
}

#[test]
fn members_that_differ_are_an_error_listing_every_mismatch() {
    let mut odd = linear(2);
    odd.w = filled(2, &[3, 3]);
    odd.b = odd.b.to_dtype(DType::F32).unwrap();
    let err = stack_leaves(&[linear(0), linear(1), odd]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)
  tree 2 at .w: leaf signature mismatch: expected f32[2,3]@cpu, found f32[3,3]@cpu
  tree 2 at .b: leaf signature mismatch: expected f64[3]@cpu, found f32[3]@cpu"
    );

    // Different structure: a member with one layer fewer.
    let mlp = |n: u32| Mlp {
        layers: (0..n)
            .map(|i| Layer {
                w: filled(i, &[2, 2]),
                b: filled(i, &[2]),
            })
            .collect(),
        name: "mlp",
    };
    let err = stack_leaves(&[mlp(2), mlp(2), mlp(1)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 2 at .layers: sequence length mismatch: expected 2, found 1"
    );

    // No members.
    assert_eq!(
        stack_leaves::<Linear>(&[]).unwrap_err().to_string(),
        "at <root>: stack_leaves: no trees to stack (an ensemble has at least one member)"
    );

    // Leading axes of different lengths, and a 0-d leaf: every leaf named.
    let bad = (
        filled(0, &[3, 2]),
        filled(1, &[2, 3]),
        Tensor::new(1.0f32, &Device::Cpu).unwrap(),
    );
    assert_eq!(
        unstack_leaves(&bad).unwrap_err().to_string(),
        "tree structures differ (2 mismatches found)
  at [1]: unstack_leaves: expected a leading (member) axis of length 3, found shape [2, 3]
  at [2]: unstack_leaves: expected a leading (member) axis of length 3, found shape []"
    );
}

#[test]
fn a_tree_of_vars_stacks_into_vars_that_share_no_memory_with_the_members() {
    let members: Vec<Layer<Var>> = (0..3)
        .map(|k| Layer {
            w: Var::from_tensor(&filled(k, &[2, 2])).unwrap(),
            b: Var::from_tensor(&filled(k + 7, &[2])).unwrap(),
        })
        .collect();
    let stacked: Layer<Var> = stack_leaves(&members).unwrap();
    assert!(stacked.w.as_tensor().is_variable());
    assert_eq!(stacked.w.as_tensor().dims(), [3, 2, 2]);
    let before = stacked.w.as_tensor().to_vec3::<f32>().unwrap();

    // Setting a member leaves the stacked variable as it was.
    members[1]
        .w
        .set(&Tensor::zeros((2, 2), DType::F32, &Device::Cpu).unwrap())
        .unwrap();
    assert_eq!(stacked.w.as_tensor().to_vec3::<f32>().unwrap(), before);

    // And the unstacked variables are variables of their own.
    let back: Vec<Layer<Var>> = unstack_leaves(&stacked).unwrap();
    assert!(back.iter().all(|m| m.b.as_tensor().is_variable()));
    stacked
        .w
        .set(&Tensor::ones((3, 2, 2), DType::F32, &Device::Cpu).unwrap())
        .unwrap();
    assert_eq!(back[2].w.as_tensor().to_vec2::<f32>().unwrap(), before[2]);
    back[0]
        .b
        .set(&Tensor::ones(2, DType::F32, &Device::Cpu).unwrap())
        .unwrap();
    assert_eq!(
        back[1].b.as_tensor().to_vec1::<f32>().unwrap(),
        members[1].b.as_tensor().to_vec1::<f32>().unwrap()
    );

    // One member: still a copy (candle's `stack` of one tensor is a view).
    let one: Layer<Var> = stack_leaves(&members[..1]).unwrap();
    members[0]
        .w
        .set(&Tensor::ones((2, 2), DType::F32, &Device::Cpu).unwrap())
        .unwrap();
    assert_eq!(one.w.as_tensor().to_vec3::<f32>().unwrap()[0], before[0]);
}

#[test]
fn an_optimizer_step_on_the_stacked_tensors_leaves_the_members_alone() {
    // pytree-optim writes tensors in place: the stacked tensors and the
    // members (before and after unstacking) must not share storage.
    for n in [1u32, 3] {
        let members: Vec<Linear> = (0..n).map(linear).collect();
        let member_values: Vec<Vec<Vec<f32>>> =
            members.iter().map(|m| m.w.to_vec2().unwrap()).collect();
        let mut stacked = stack_leaves(&members).unwrap();
        let unstacked = unstack_leaves(&stacked).unwrap();
        let mut grads = stacked.clone();
        grads.w = stacked.w.ones_like().unwrap();
        grads.b = stacked.b.ones_like().unwrap();
        let opt = sgd(0.5);
        let mut state = opt.init(&stacked).unwrap();
        opt.step(&mut stacked, &mut grads, &mut state).unwrap();
        let moved = stacked.w.to_vec3::<f32>().unwrap();
        for k in 0..n as usize {
            assert_eq!(
                members[k].w.to_vec2::<f32>().unwrap(),
                member_values[k],
                "n={n}"
            );
            assert_eq!(
                unstacked[k].w.to_vec2::<f32>().unwrap(),
                member_values[k],
                "n={n}"
            );
            assert_eq!(moved[k][0][0], member_values[k][0][0] - 0.5, "n={n}");
        }
    }
}

#[test]
fn gradients_flow_through_stacking_to_the_members() {
    let vars: Vec<Var> = (0..3)
        .map(|k| Var::from_tensor(&filled(k, &[4])).unwrap())
        .collect();
    let members: Vec<Vec<Tensor>> = vars.iter().map(|v| vec![v.as_tensor().clone()]).collect();
    let stacked = stack_leaves(&members).unwrap();
    // loss = sum_k (k + 1) * sum(member_k^2): d/d member_k = 2 (k + 1) member_k.
    let weights = t(&[1.0, 2.0, 3.0], &[3, 1]);
    let loss = stacked[0]
        .sqr()
        .unwrap()
        .broadcast_mul(&weights)
        .unwrap()
        .sum_all()
        .unwrap();
    let grads = loss.backward().unwrap();
    for (k, v) in vars.iter().enumerate() {
        let g = grads.get(v.as_tensor()).unwrap().to_vec1::<f32>().unwrap();
        let x = v.as_tensor().to_vec1::<f32>().unwrap();
        let want: Vec<f32> = x.iter().map(|x| 2.0 * (k as f32 + 1.0) * x).collect();
        assert_eq!(g, want, "member {k}");
    }
}

/// `x @ w + b` then ReLU for every layer but the last; `x` is `[batch,
/// in]` for one member, `[members, batch, in]` stacked (then `w` is
/// `[members, in, out]` and `b` `[members, out]`, broadcast over the batch).
fn forward(mlp: &Mlp<Tensor>, x: &Tensor) -> Tensor {
    let stacked = x.rank() == 3;
    let mut h = x.clone();
    for (i, layer) in mlp.layers.iter().enumerate() {
        let b = if stacked {
            layer.b.unsqueeze(1).unwrap()
        } else {
            layer.b.clone()
        };
        h = h.matmul(&layer.w).unwrap().broadcast_add(&b).unwrap();
        if i + 1 < mlp.layers.len() {
            h = h.relu().unwrap();
        }
    }
    h
}

/// The squared error of `forward`, averaged over the outputs and summed
/// over the rows (and, stacked, over the members): the members' losses
/// summed, so the stacked gradient is each member's own.
fn loss(mlp: &Mlp<Tensor>, x: &Tensor, target: &Tensor) -> pytree_std::candle_core::Result<Tensor> {
    forward(mlp, x)
        .broadcast_sub(target)?
        .sqr()?
        .mean(D::Minus1)?
        .sum_all()
}

/// `got` equals `want` element by element within `tol` (relative, plus
/// `tol` absolute).
fn assert_close(want: &Tensor, got: &Tensor, tol: f32, what: &str) {
    let want = want.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let got = got.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    assert_eq!(want.len(), got.len(), "{what}");
    for (a, b) in want.iter().zip(&got) {
        assert!((a - b).abs() <= tol * (1.0 + a.abs()), "{what}: {a} vs {b}");
    }
}

fn mlp(seed: u32) -> Mlp<Tensor> {
    let sizes = [4usize, 8, 8, 2];
    Mlp {
        layers: sizes
            .windows(2)
            .enumerate()
            .map(|(i, io)| Layer {
                w: filled(seed * 10 + i as u32, &[io[0], io[1]]),
                b: filled(seed * 10 + i as u32 + 5, &[io[1]]),
            })
            .collect(),
        name: "mlp",
    }
}

/// An input batch `x`, `x` broadcast to the 3 members of an ensemble, and
/// the target.
fn batch() -> (Tensor, Tensor, Tensor) {
    let x = filled(99, &[5, 4]);
    let xs = x.unsqueeze(0).unwrap().broadcast_as((3, 5, 4)).unwrap();
    (x, xs.contiguous().unwrap(), filled(98, &[5, 2]))
}

#[test]
fn an_ensemble_of_three_mlps_runs_as_one_batched_forward() {
    let members: Vec<Mlp<Tensor>> = (1..=3).map(mlp).collect();
    let stacked = stack_leaves(&members).unwrap();
    assert_eq!(stacked.name, "mlp");
    assert_eq!(stacked.layers[1].w.dims(), [3, 8, 8]);
    // One batched forward for the whole ensemble: the input broadcast over
    // the member axis, one batched matmul per layer.
    let (x, xs, target) = batch();
    let ys = forward(&stacked, &xs);
    assert_eq!(ys.dims(), [3, 5, 2]);
    for (k, m) in members.iter().enumerate() {
        let alone = forward(m, &x).to_vec2::<f32>().unwrap();
        let batched = ys.get(k).unwrap().to_vec2::<f32>().unwrap();
        for (a, b) in alone.iter().flatten().zip(batched.iter().flatten()) {
            assert!(
                (a - b).abs() <= 1e-5 * (1.0 + a.abs()),
                "member {k}: {a} vs {b}"
            );
        }
    }

    // Training-flavoured: the gradient of the summed losses with respect
    // to the stacked parameters, unstacked, is each member's own gradient
    // (computed alone, read from candle's autograd directly).
    let params = vars(&stacked);
    let (_, grads) =
        pytree_optim::candle::value_and_grad(&params, |m| loss(&tensors(m), &xs, &target)).unwrap();
    let per_member = unstack_leaves(&grads).unwrap();
    for (k, m) in members.iter().enumerate() {
        let p = vars(m);
        let store = loss(&tensors(&p), &x, &target).unwrap().backward().unwrap();
        for (v, g) in pytree_std::leaves(&p)
            .into_iter()
            .zip(pytree_std::leaves(&per_member[k]))
        {
            let want = store.get(v.as_tensor()).unwrap();
            assert_close(want, g.as_tensor(), 1e-5, &format!("member {k}"));
        }
    }
}

/// The MLP's variables as the tensors the forward reads (the same
/// tensors: gradients reach the variables).
fn tensors(m: &Mlp<Var>) -> Mlp<Tensor> {
    pytree_std::walk::map_into(m.clone(), |v: Var| v.as_tensor().clone()).unwrap()
}

/// New variables holding copies of the tensors (`from_tensor` of a
/// variable's own tensor would be that same variable).
fn vars(m: &Mlp<Tensor>) -> Mlp<Var> {
    pytree_std::walk::map_into(m.clone(), |t: Tensor| {
        Var::from_tensor(&t.detach()).unwrap()
    })
    .unwrap()
}

#[test]
fn a_stacked_ensemble_of_variables_trains_with_adam_like_its_members_alone() {
    use pytree_optim::{adam, candle};
    let (x, xs, target) = batch();
    let members: Vec<Mlp<Var>> = (1..=3).map(|s| vars(&mlp(s))).collect();
    let opt = adam(0.01);

    // The ensemble: one batched loss (the members' losses summed), one
    // gradient tree, one optimizer step per step.
    let mut stacked: Mlp<Var> = stack_leaves(&members).unwrap();
    let mut state = opt.init(&stacked).unwrap();
    let mut first_loss = None;
    let mut last_loss = 0.0;
    for _ in 0..20 {
        let (l, mut g) =
            candle::value_and_grad(&stacked, |m| loss(&tensors(m), &xs, &target)).unwrap();
        last_loss = l.to_scalar::<f32>().unwrap();
        first_loss.get_or_insert(last_loss);
        opt.step(&mut stacked, &mut g, &mut state).unwrap();
    }
    assert!(
        last_loss < first_loss.unwrap(),
        "{first_loss:?} -> {last_loss}"
    );
    let trained = unstack_leaves(&stacked).unwrap();

    for (k, start) in members.iter().enumerate() {
        let mut alone = vars(&tensors(start));
        let mut s = opt.init(&alone).unwrap();
        for _ in 0..20 {
            let (_, mut g) =
                candle::value_and_grad(&alone, |m| loss(&tensors(m), &x, &target)).unwrap();
            opt.step(&mut alone, &mut g, &mut s).unwrap();
        }
        // The peer: the member trained alone by candle-nn's own AdamW
        // (weight decay 0: Adam), on the same variables' copies.
        let peer = vars(&tensors(start));
        let mut theirs = <candle_nn::AdamW as candle_nn::Optimizer>::new(
            pytree_std::flatten(peer.clone()).0,
            candle_nn::ParamsAdamW {
                lr: 0.01,
                beta1: 0.9,
                beta2: 0.999,
                eps: 1e-8,
                weight_decay: 0.0,
            },
        )
        .unwrap();
        for _ in 0..20 {
            let l = loss(&tensors(&peer), &x, &target).unwrap();
            candle_nn::Optimizer::backward_step(&mut theirs, &l).unwrap();
        }
        let got = pytree_std::leaves(&trained[k]);
        let want = pytree_std::leaves(&alone);
        let peer = pytree_std::leaves(&peer);
        for (got, ((want, peer), start)) in got
            .iter()
            .zip(want.iter().zip(&peer).zip(pytree_std::leaves(start)))
        {
            assert_ne!(
                want.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
                start.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
                "member {k} moved"
            );
            assert_close(want, got, 1e-4, &format!("member {k}"));
            assert_close(
                peer,
                got,
                1e-4,
                &format!("member {k}, against candle-nn's AdamW"),
            );
        }
    }
}
