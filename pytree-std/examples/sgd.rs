//! The core loop of pytree on a real use: a small model is a derived struct,
//! and one generic SGD step (written once, for any pytree of `f64`) trains it.
//! The gradient is taken by central finite differences through
//! flatten/unflatten, so the example needs no autodiff library.
//!
//! Run from the repository root: `cargo run --release --example sgd`.

use pytree_std::{PyTree, TreeDef};

/// One affine layer: `y = w * x + b`.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: f64,
    b: f64,
}

/// A two-layer model with a static (non-trainable) configuration.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    layers: Vec<Linear>,
    #[pytree(static)]
    name: String,
}

impl Model {
    fn predict(&self, x: f64) -> f64 {
        self.layers.iter().fold(x, |h, l| l.w * h + l.b)
    }
}

/// Mean squared error of `model` on `data`.
fn loss(model: &Model, data: &[(f64, f64)]) -> f64 {
    data.iter()
        .map(|&(x, y)| (model.predict(x) - y).powi(2))
        .sum::<f64>()
        / data.len() as f64
}

/// The gradient of `f` at `params`, as a tree of the same structure, by
/// central differences: works for any pytree of `f64` leaves.
fn numerical_grad<P: PyTree<Leaf = f64> + Clone>(f: impl Fn(&P) -> f64, params: &P) -> P {
    let (leaves, def): (Vec<f64>, TreeDef) = pytree_std::flatten(params.clone());
    let eps = 1e-6;
    let grads: Vec<f64> = (0..leaves.len())
        .map(|i| {
            let shifted = |delta: f64| {
                let mut moved = leaves.clone();
                moved[i] += delta;
                pytree_std::unflatten::<P>(&def, moved).expect("same TreeDef, same leaf count")
            };
            (f(&shifted(eps)) - f(&shifted(-eps))) / (2.0 * eps)
        })
        .collect();
    pytree_std::unflatten(&def, grads).expect("one gradient per leaf")
}

/// One SGD step on any pytree: `p -= lr * g`, leaf by leaf, in place.
fn sgd_step<P: PyTree<Leaf = f64>>(
    params: &mut P,
    grads: &P,
    lr: f64,
) -> Result<(), pytree_std::Error> {
    pytree_std::zip_mut([params], [grads], |[p], [g]| *p -= lr * g)
}

fn main() -> Result<(), pytree_std::Error> {
    // Data from y = 6x + 1, which the composition of two layers can fit.
    let data: Vec<(f64, f64)> = (-10..=10)
        .map(|i| i as f64 / 10.0)
        .map(|x| (x, 6.0 * x + 1.0))
        .collect();
    let mut model = Model {
        layers: vec![Linear { w: 0.5, b: 0.0 }, Linear { w: 0.5, b: 0.0 }],
        name: "two-layer".into(),
    };

    println!("structure: {}", pytree_std::structure(&model));
    println!("leaves:    {:?}", pytree_std::leaves(&model));
    let start = loss(&model, &data);
    for step in 0..=300 {
        let grads = numerical_grad(|m: &Model| loss(m, &data), &model);
        sgd_step(&mut model, &grads, 0.05)?;
        if step % 100 == 0 {
            println!("step {step:3}: loss {:.6}", loss(&model, &data));
        }
    }
    let end = loss(&model, &data);
    println!(
        "loss {start:.4} -> {end:.6}; model computes y = {:.3}x + {:.3}",
        model.predict(1.0) - model.predict(0.0),
        model.predict(0.0)
    );

    // Errors are values: the TreeDef of a Model does not describe a Vec.
    if let Err(e) = pytree_std::walk::map_into::<Model, Vec<f32>, _>(model.clone(), |x| x as f32) {
        println!("a Model is not a Vec<f32>: {e}");
    }
    let total: f64 = pytree_std::flatten(model).0.iter().map(|x| x.abs()).sum();
    println!("sum of |params| = {total:.3}");
    Ok(())
}
