//! A multi-layer perceptron as a derived pytree: `Vec<Linear>` with
//! ndarray leaves, a static activation and name. Forward and backward are
//! written by hand, so the gradient is a value of the model's own type
//! (a pytree of the same structure), which any optimizer written over
//! pytrees can use. Generic over the float type so that the backward pass
//! can be checked by finite differences in `f64` (`tests/backward.rs`).

use pytree_std::ndarray::{Array1, Array2, Axis, NdFloat};
use pytree_std::{Error, PyTree};

use crate::digits::Rng;

/// The nonlinearity between layers: static data of the model (kept in
/// its TreeDef, compared when trees are zipped, never a leaf).
///
/// ```
/// use pytree_examples::mlp::{Activation, Mlp};
/// let m = Mlp::<f32>::new(&[2, 2], Activation::Tanh, "m", 0);
/// assert!(pytree_std::structure(&m).to_string().contains("activation: Tanh"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `max(0, x)`.
    Relu,
    /// `tanh(x)`.
    Tanh,
}

impl Activation {
    fn apply<F: NdFloat>(self, z: &Array2<F>) -> Array2<F> {
        match self {
            Activation::Relu => z.mapv(|v| v.max(F::zero())),
            Activation::Tanh => z.mapv(F::tanh),
        }
    }

    /// `d activation / dz`, from the pre-activation `z` and the output `a`.
    fn derivative<F: NdFloat>(self, z: &Array2<F>, a: &Array2<F>) -> Array2<F> {
        match self {
            Activation::Relu => z.mapv(|v| if v > F::zero() { F::one() } else { F::zero() }),
            Activation::Tanh => a.mapv(|v| F::one() - v * v),
        }
    }
}

/// One affine layer, `y = x w + b` (`x` is a batch of rows).
///
/// ```
/// use pytree_examples::mlp::Linear;
/// use pytree_std::ndarray::{Array1, Array2};
/// let l = Linear { w: Array2::<f32>::zeros((3, 2)), b: Array1::zeros(2) };
/// assert_eq!(pytree_std::leaves(&l).len(), 2);
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(bound = "F: NdFloat")]
pub struct Linear<F: NdFloat> {
    /// `inputs x outputs`.
    pub w: Array2<F>,
    /// `outputs`.
    pub b: Array1<F>,
}

/// The model: layers, and two static fields.
///
/// ```
/// use pytree_examples::mlp::{Activation, Mlp};
/// let m = Mlp::<f32>::new(&[64, 32, 10], Activation::Relu, "digits", 0);
/// assert_eq!(pytree_std::elements::summary(&m).num_elements(), 64 * 32 + 32 + 32 * 10 + 10);
/// assert_eq!(pytree_std::structure(&m).to_string(),
///     r#"Mlp { layers: [Linear { w: *, b: * }, Linear { w: *, b: * }], activation: Relu, name: "digits" }"#);
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(bound = "F: NdFloat")]
pub struct Mlp<F: NdFloat> {
    /// The layers, input first.
    pub layers: Vec<Linear<F>>,
    /// Between layers (not after the last, whose outputs are logits).
    #[pytree(static)]
    pub activation: Activation,
    /// A name, printed in the TreeDef.
    #[pytree(static)]
    pub name: String,
}

/// What the backward pass needs from the forward pass.
struct Trace<F> {
    /// The input of each layer (the data, then each hidden activation).
    inputs: Vec<Array2<F>>,
    /// The pre-activation of each hidden layer.
    pre: Vec<Array2<F>>,
    logits: Array2<F>,
}

impl<F: NdFloat> Mlp<F> {
    /// Layers of these sizes (`[64, 128, 10]`: two layers), weights drawn
    /// from a normal of variance `2 / inputs` (He), biases zero.
    ///
    /// ```
    /// let m = pytree_examples::mlp::Mlp::<f64>::new(&[3, 2], pytree_examples::mlp::Activation::Tanh, "m", 1);
    /// assert_eq!(m.layers[0].w.dim(), (3, 2));
    /// ```
    pub fn new(sizes: &[usize], activation: Activation, name: &str, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let layers = sizes
            .windows(2)
            .map(|io| {
                let scale = (2.0 / io[0] as f64).sqrt();
                Linear {
                    w: Array2::from_shape_simple_fn((io[0], io[1]), || {
                        F::from(rng.normal() * scale).unwrap_or_else(F::zero)
                    }),
                    b: Array1::zeros(io[1]),
                }
            })
            .collect();
        Mlp {
            layers,
            activation,
            name: name.to_string(),
        }
    }

    /// Checks that `x` fits the first layer and the layers chain.
    fn check(&self, x: &Array2<F>) -> Result<(), Error> {
        let mut width = x.ncols();
        for (i, l) in self.layers.iter().enumerate() {
            if l.w.nrows() != width || l.b.len() != l.w.ncols() {
                return Err(Error::custom(format!(
                    "layer {i} takes {} inputs and has {} biases for {} outputs; it is given {width} inputs",
                    l.w.nrows(),
                    l.b.len(),
                    l.w.ncols()
                )));
            }
            width = l.w.ncols();
        }
        Ok(())
    }

    fn trace(&self, x: &Array2<F>) -> Result<Trace<F>, Error> {
        self.check(x)?;
        let mut inputs = vec![x.clone()];
        let mut pre = Vec::new();
        let last = self.layers.len().saturating_sub(1);
        let mut h = x.clone();
        for (i, l) in self.layers.iter().enumerate() {
            let z = h.dot(&l.w) + &l.b;
            if i == last {
                return Ok(Trace {
                    inputs,
                    pre,
                    logits: z,
                });
            }
            h = self.activation.apply(&z);
            pre.push(z);
            inputs.push(h.clone());
        }
        Ok(Trace {
            inputs,
            pre,
            logits: h,
        })
    }

    /// The logits of a batch of rows.
    ///
    /// ```
    /// use pytree_std::ndarray::Array2;
    /// let m = pytree_examples::mlp::Mlp::<f32>::new(&[4, 3], pytree_examples::mlp::Activation::Relu, "m", 0);
    /// assert_eq!(m.forward(&Array2::zeros((5, 4)))?.dim(), (5, 3));
    /// assert!(m.forward(&Array2::zeros((5, 2))).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn forward(&self, x: &Array2<F>) -> Result<Array2<F>, Error> {
        Ok(self.trace(x)?.logits)
    }

    /// The class of highest logit for each row.
    ///
    /// ```
    /// use pytree_std::ndarray::Array2;
    /// let m = pytree_examples::mlp::Mlp::<f32>::new(&[4, 3], pytree_examples::mlp::Activation::Relu, "m", 0);
    /// assert_eq!(m.predict(&Array2::zeros((2, 4)))?.len(), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn predict(&self, x: &Array2<F>) -> Result<Vec<usize>, Error> {
        let logits = self.forward(x)?;
        Ok(logits
            .rows()
            .into_iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .fold((0, F::neg_infinity()), |best, (k, &v)| {
                        if v > best.1 {
                            (k, v)
                        } else {
                            best
                        }
                    })
                    .0
            })
            .collect())
    }

    /// The fraction of rows whose predicted class is the label.
    ///
    /// ```
    /// use pytree_std::ndarray::Array2;
    /// let m = pytree_examples::mlp::Mlp::<f32>::new(&[4, 3], pytree_examples::mlp::Activation::Relu, "m", 0);
    /// let acc = m.accuracy(&Array2::zeros((2, 4)), &[0, 0])?;
    /// assert!((0.0..=1.0).contains(&acc));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn accuracy(&self, x: &Array2<F>, labels: &[usize]) -> Result<f64, Error> {
        let predicted = self.predict(x)?;
        let right = predicted.iter().zip(labels).filter(|(p, l)| p == l).count();
        Ok(right as f64 / labels.len().max(1) as f64)
    }

    /// The mean softmax cross-entropy of a batch.
    ///
    /// ```
    /// use pytree_std::ndarray::Array2;
    /// let m = pytree_examples::mlp::Mlp::<f64>::new(&[4, 3], pytree_examples::mlp::Activation::Relu, "m", 0);
    /// // Zero inputs and zero biases: equal logits, loss ln 3.
    /// assert!((m.loss(&Array2::zeros((2, 4)), &[0, 2])? - 3f64.ln()).abs() < 1e-12);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn loss(&self, x: &Array2<F>, labels: &[usize]) -> Result<F, Error> {
        let logits = self.forward(x)?;
        Ok(cross_entropy(&logits, labels)?.0)
    }

    /// The loss of a batch and its gradient with respect to every
    /// parameter, as a model of the same structure (the backward pass,
    /// by hand).
    ///
    /// ```
    /// use pytree_std::ndarray::Array2;
    /// let m = pytree_examples::mlp::Mlp::<f64>::new(&[4, 5, 3], pytree_examples::mlp::Activation::Tanh, "m", 0);
    /// let (loss, grad) = m.loss_and_grad(&Array2::ones((2, 4)), &[0, 2])?;
    /// assert!(loss > 0.0);
    /// assert_eq!(pytree_std::structure(&m), pytree_std::structure(&grad)); // same structure, statics included
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn loss_and_grad(&self, x: &Array2<F>, labels: &[usize]) -> Result<(F, Mlp<F>), Error> {
        let trace = self.trace(x)?;
        let (loss, mut dz) = cross_entropy(&trace.logits, labels)?;
        let mut grads: Vec<Linear<F>> = Vec::with_capacity(self.layers.len());
        for i in (0..self.layers.len()).rev() {
            let input = &trace.inputs[i];
            grads.push(Linear {
                w: input.t().dot(&dz),
                b: dz.sum_axis(Axis(0)),
            });
            if i > 0 {
                let da = dz.dot(&self.layers[i].w.t());
                dz = da
                    * self
                        .activation
                        .derivative(&trace.pre[i - 1], &trace.inputs[i]);
            }
        }
        grads.reverse();
        Ok((
            loss,
            Mlp {
                layers: grads,
                activation: self.activation,
                name: self.name.clone(),
            },
        ))
    }
}

/// Mean cross-entropy of `softmax(logits)` against `labels`, and its
/// gradient with respect to the logits.
fn cross_entropy<F: NdFloat>(
    logits: &Array2<F>,
    labels: &[usize],
) -> Result<(F, Array2<F>), Error> {
    let (n, classes) = logits.dim();
    if labels.len() != n {
        return Err(Error::custom(format!(
            "{} labels for {n} rows",
            labels.len()
        )));
    }
    if let Some(bad) = labels.iter().find(|&&l| l >= classes) {
        return Err(Error::custom(format!("label {bad} for {classes} classes")));
    }
    let scale = F::one() / F::from(n.max(1)).unwrap_or_else(F::one);
    let mut grad = Array2::zeros((n, classes));
    let mut total = F::zero();
    for ((row, mut g), &label) in logits.rows().into_iter().zip(grad.rows_mut()).zip(labels) {
        let max = row.fold(F::neg_infinity(), |m, &v| m.max(v));
        let sum = row.fold(F::zero(), |s, &v| s + (v - max).exp());
        let log_sum = max + sum.ln();
        total += log_sum - row[label];
        for (gk, &v) in g.iter_mut().zip(row) {
            *gk = (v - log_sum).exp() * scale;
        }
        g[label] -= scale;
    }
    Ok((total * scale, grad))
}
