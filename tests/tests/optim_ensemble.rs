//! Issue 19: ensembles. `N` models stacked along a new leading axis
//! (`pytree_std::ensemble::stack_leaves`) train with one optimizer call
//! per step, and each member ends where it would have ended trained alone,
//! bit for bit, with every element-wise optimizer.

use pytree_optim::{
    adam, adamw, chain, ema, multi_transform, scale, scale_by_schedule, sgd, GradientTransformation,
};
use pytree_std::ensemble::{stack_leaves, unstack_leaves};
use pytree_std::ndarray::{arr1, Array2, ArrayD, IxDyn};
use pytree_std::{KeyPath, PyTree, Tree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: ArrayD<f32>,
    b: ArrayD<f32>,
}

const XS: [f32; 4] = [0.0, 1.0, 2.0, 3.0];

fn member(seed: f32) -> Linear {
    Linear {
        w: ArrayD::from_shape_fn(IxDyn(&[1, 2]), |d| seed * (d[1] as f32 + 0.5)),
        b: arr1(&[seed - 1.0]).into_dyn(),
    }
}

/// The gradient of the squared error of `y = (w0 + w1) x + b` against
/// `y = 2x + 1` for one member (leaves of shape `[1, 2]` and `[1]`).
fn grad_one(m: &Linear) -> Linear {
    let (w0, w1, b) = (m.w[[0, 0]], m.w[[0, 1]], m.b[[0]]);
    let (mut gw, mut gb) = (0.0f32, 0.0f32);
    for x in XS {
        let err = (w0 + w1) * x + b - (2.0 * x + 1.0);
        gw += 2.0 * err * x / XS.len() as f32;
        gb += 2.0 * err / XS.len() as f32;
    }
    Linear {
        w: ArrayD::from_elem(IxDyn(&[1, 2]), gw),
        b: arr1(&[gb]).into_dyn(),
    }
}

fn bits(m: &Linear) -> Vec<u32> {
    m.w.iter().chain(m.b.iter()).map(|x| x.to_bits()).collect()
}

/// Trains the ensemble stacked (one `step` per step) and each member
/// alone; the unstacked members must equal the lone ones bit for bit.
fn trains_like_members_alone<O: GradientTransformation<Linear>>(name: &str, opt: &O) {
    let members: Vec<Linear> = [0.5, -1.0, 2.0].iter().map(|&s| member(s)).collect();
    let mut stacked = stack_leaves(&members).unwrap();
    assert_eq!(stacked.w.shape(), [3, 1, 2]);
    let mut state = opt.init(&stacked).unwrap();
    for _ in 0..50 {
        let parts = unstack_leaves(&stacked).unwrap();
        let grads: Vec<Linear> = parts.iter().map(grad_one).collect();
        let mut g = stack_leaves(&grads).unwrap();
        opt.step(&mut stacked, &mut g, &mut state).unwrap();
    }
    let trained = unstack_leaves(&stacked).unwrap();

    for (k, start) in members.iter().enumerate() {
        let mut alone = start.clone();
        let mut s = opt.init(&alone).unwrap();
        for _ in 0..50 {
            let mut g = grad_one(&alone);
            opt.step(&mut alone, &mut g, &mut s).unwrap();
        }
        assert_eq!(bits(&trained[k]), bits(&alone), "{name}: member {k}");
        assert_ne!(bits(&trained[k]), bits(start), "{name}: member {k} moved");
    }
}

#[test]
fn a_stacked_ensemble_trains_with_one_call_per_step_with_every_optimizer() {
    trains_like_members_alone("sgd", &sgd(0.02));
    trains_like_members_alone("momentum", &sgd(0.02).momentum(0.9));
    trains_like_members_alone("nesterov", &sgd(0.02).momentum(0.9).nesterov());
    trains_like_members_alone("adam", &adam(0.05));
    trains_like_members_alone("adamw", &adamw(0.05, 0.01));
    trains_like_members_alone("ema", &chain(ema(0.9, true), scale(-0.02)));
    let groups = multi_transform(|p: &KeyPath| if p.to_string() == ".w" { "w" } else { "b" })
        .group("w", adam(0.05))
        .group("b", chain(scale(0.5), sgd(0.02).momentum(0.9)));
    trains_like_members_alone("groups", &groups);
    trains_like_members_alone(
        "schedule",
        &chain(
            scale_by_schedule(|t: u64| 1.0 / (1.0 + t as f64)),
            sgd(0.05),
        ),
    );
}

#[test]
fn the_ensemble_fits_the_line() {
    let members: Vec<Linear> = [0.5, -1.0, 2.0].iter().map(|&s| member(s)).collect();
    let mut stacked = stack_leaves(&members).unwrap();
    let opt = adam(0.05);
    let mut state = opt.init(&stacked).unwrap();
    for _ in 0..2000 {
        let grads: Vec<Linear> = unstack_leaves(&stacked)
            .unwrap()
            .iter()
            .map(grad_one)
            .collect();
        opt.step(&mut stacked, &mut stack_leaves(&grads).unwrap(), &mut state)
            .unwrap();
    }
    for m in unstack_leaves(&stacked).unwrap() {
        let slope = m.w[[0, 0]] + m.w[[0, 1]];
        assert!(
            (slope - 2.0).abs() < 0.01 && (m.b[[0]] - 1.0).abs() < 0.01,
            "{m:?}"
        );
    }
}

#[test]
fn members_that_differ_are_an_error_listing_every_mismatch() {
    let mut odd = member(1.0);
    odd.w = ArrayD::zeros(IxDyn(&[2, 2]));
    odd.b = ArrayD::zeros(IxDyn(&[3]));
    let err = stack_leaves(&[member(1.0), member(2.0), odd]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)
  tree 2 at .w: leaf signature mismatch: expected f32[1,2], found f32[2,2]
  tree 2 at .b: leaf signature mismatch: expected f32[1], found f32[3]"
    );
    assert!(stack_leaves::<Linear>(&[]).is_err());

    // Leading axes of different lengths: every leaf named.
    let bad = Linear {
        w: ArrayD::zeros(IxDyn(&[3, 1, 2])),
        b: ArrayD::zeros(IxDyn(&[2, 1])),
    };
    assert_eq!(
        unstack_leaves(&bad).unwrap_err().to_string(),
        "at .b: unstack_leaves: expected a leading (member) axis of length 3, found shape [2, 1]"
    );
}

/// A model with fixed-rank fields goes through a `Tree` of `ArrayD`
/// leaves (stacking adds an axis, which an `Array2` field cannot hold).
#[test]
fn fixed_rank_models_stack_as_trees() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Dense {
        w: Array2<f32>,
    }
    let a = Dense {
        w: Array2::from_elem((2, 2), 1.0),
    };
    let b = Dense {
        w: Array2::from_elem((2, 2), 2.0),
    };
    let def = pytree_std::structure(&a);
    let trees: Vec<Tree<ArrayD<f32>>> = [a.clone(), b.clone()]
        .into_iter()
        .map(|m| Tree::from_pytree(m).unwrap())
        .collect();
    let stacked = stack_leaves(&trees).unwrap();
    assert_eq!(stacked.num_leaves(), 1);
    let back: Vec<Dense> = unstack_leaves(&stacked)
        .unwrap()
        .iter()
        .map(|t| t.to_pytree(&def).unwrap())
        .collect();
    assert_eq!(back, [a, b]);
}
