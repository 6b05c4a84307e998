//! The hand-written backward pass of the example's MLP against central
//! finite differences, in f64, leaf by leaf through the pytree API: for
//! every parameter of every layer, (L(p + h) - L(p - h)) / 2h.

use pytree_examples::digits::{Digits, Rng};
use pytree_examples::mlp::{Activation, Mlp};
use pytree_std::ndarray::{Array2, ArrayD};
use pytree_std::TreeDef;

/// The largest relative difference between the analytic and the numeric
/// gradient of `model` on the batch.
fn worst_relative_error(model: &Mlp<f64>, x: &Array2<f64>, labels: &[usize]) -> f64 {
    let (_, grad) = model.loss_and_grad(x, labels).unwrap();
    worst_relative_error_of(model, x, labels, grad)
}

/// The largest relative difference between `grad` and the numeric
/// gradient of `model` on the batch.
fn worst_relative_error_of(
    model: &Mlp<f64>,
    x: &Array2<f64>,
    labels: &[usize],
    grad: Mlp<f64>,
) -> f64 {
    let (leaves, def): (Vec<ArrayD<f64>>, TreeDef) = pytree_std::flatten(model.clone());
    let (grad_leaves, _): (Vec<ArrayD<f64>>, TreeDef) = pytree_std::flatten(grad);
    let h = 1e-5;
    let mut worst = 0.0f64;
    for (i, leaf) in leaves.iter().enumerate() {
        for j in 0..leaf.len() {
            let shifted = |delta: f64| {
                let mut moved = leaves.clone();
                moved[i].as_slice_mut().unwrap()[j] += delta;
                let m: Mlp<f64> = pytree_std::unflatten(&def, moved).unwrap();
                m.loss(x, labels).unwrap()
            };
            let numeric = (shifted(h) - shifted(-h)) / (2.0 * h);
            let analytic = grad_leaves[i].as_slice().unwrap()[j];
            let err = (numeric - analytic).abs() / (numeric.abs() + analytic.abs()).max(1e-6);
            worst = worst.max(err);
        }
    }
    worst
}

fn batch(n: usize, width: usize, seed: u64) -> (Array2<f64>, Vec<usize>) {
    let mut rng = Rng::new(seed);
    let x = Array2::from_shape_simple_fn((n, width), || rng.normal());
    let labels = (0..n).map(|_| (rng.next_u64() % 3) as usize).collect();
    (x, labels)
}

#[test]
fn the_backward_pass_matches_finite_differences_with_tanh() {
    let model = Mlp::<f64>::new(&[5, 4, 4, 3], Activation::Tanh, "fd", 1);
    let (x, labels) = batch(6, 5, 2);
    let err = worst_relative_error(&model, &x, &labels);
    assert!(err < 1e-6, "worst relative error {err}");
}

#[test]
fn the_backward_pass_matches_finite_differences_with_relu() {
    // Random biases move the pre-activations away from ReLU's kink at 0,
    // where finite differences are not the derivative.
    let mut model = Mlp::<f64>::new(&[5, 6, 3], Activation::Relu, "fd", 3);
    let mut rng = Rng::new(9);
    for l in &mut model.layers {
        l.b.mapv_inplace(|_| rng.normal() * 0.5);
    }
    let (x, labels) = batch(6, 5, 4);
    let err = worst_relative_error(&model, &x, &labels);
    assert!(err < 1e-5, "worst relative error {err}");
}

#[test]
fn a_wrong_gradient_is_caught() {
    // The check itself can fail: the right gradient scaled by 1.01, or
    // with one layer's bias gradient zeroed, is far from the numeric one.
    let model = Mlp::<f64>::new(&[3, 4, 3], Activation::Tanh, "fd", 5);
    let (x, labels) = batch(4, 3, 6);
    let (_, grad) = model.loss_and_grad(&x, &labels).unwrap();
    assert!(worst_relative_error_of(&model, &x, &labels, grad.clone()) < 1e-6);
    let scaled = pytree_std::map(grad.clone(), |g| g * 1.01);
    assert!(worst_relative_error_of(&model, &x, &labels, scaled) > 4e-3);
    let mut no_bias = grad;
    no_bias.layers[0].b.fill(0.0);
    assert!(worst_relative_error_of(&model, &x, &labels, no_bias) > 0.5);
}

#[test]
fn the_data_set_is_the_uci_digits_split_deterministically() {
    let d = Digits::bundled().unwrap();
    assert_eq!(d.len(), 1797);
    let mut per_class = [0usize; 10];
    for &l in &d.labels {
        per_class[l] += 1;
    }
    assert_eq!(
        per_class,
        [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    );
    assert!(d.images.iter().all(|&p| (0.0..=1.0).contains(&p)));
    let (train, test) = d.split(0.2, 0);
    assert_eq!((train.len(), test.len()), (1438, 359));
    assert_eq!(d.split(0.2, 0), (train, test));
}

#[test]
fn shapes_that_do_not_fit_are_errors() {
    let model = Mlp::<f32>::new(&[4, 3], Activation::Relu, "m", 0);
    assert!(model.forward(&Array2::zeros((2, 5))).is_err());
    assert!(model.loss_and_grad(&Array2::zeros((2, 4)), &[0]).is_err());
    assert!(model
        .loss_and_grad(&Array2::zeros((2, 4)), &[0, 3])
        .is_err());
    assert!(Digits::from_csv("1,2,3").is_err());
    assert!(Digits::from_csv(&format!("{}17,1", "0,".repeat(63))).is_err());
}
