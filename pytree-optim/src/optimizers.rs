//! The optimizers: [`sgd`] (with momentum and Nesterov), [`adam`] and
//! [`adamw`], each one fused pass over the parameters, the state and the
//! gradients. Outside their mask a leaf is frozen: its update is zero and
//! its state is left alone.

use pytree_std::{Error, Flatten, PyTree, Std};

use crate::element::Float;
use crate::gradient_transformation::{
    check_mask, check_masked, check_updates, GradientTransformation, Scalar,
};
use crate::kernel::Exec;
use crate::leaf::FloatLeaf;
use crate::mask::{LeafMask, Mask};
use crate::op::ElementOp;
use crate::options::{options, zeros};
use crate::schedule::Schedule;

/// Stochastic gradient descent (optax's `sgd`): the update is
/// `-lr * g`; with [`momentum`](Sgd::momentum) `mu`, a trace
/// `t = g + mu * t` is kept and the update is `-lr * t` (or, with
/// [`nesterov`](Sgd::nesterov), `-lr * (g + mu * t)`).
/// `learning_rate` is a number or a [`Schedule`].
///
/// ```
/// use pytree_optim::{sgd, GradientTransformation};
/// let opt = sgd(0.1).momentum(0.9);
/// let mut p = vec![1.0f64];
/// let mut state = opt.init(&p)?;
/// opt.step(&mut p, &mut vec![1.0], &mut state)?;   // t = 1,   p = 1 - 0.1
/// opt.step(&mut p, &mut vec![1.0], &mut state)?;   // t = 1.9, p = 0.9 - 0.19
/// assert!((p[0] - 0.71).abs() < 1e-12);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn sgd<S: Schedule>(learning_rate: S) -> Sgd<S> {
    Sgd {
        learning_rate,
        momentum: None,
        nesterov: false,
        mask: Mask::params(),
        exec: Exec::Sequential,
    }
}

/// See [`sgd`].
///
/// ```
/// let opt = pytree_optim::sgd(0.1).momentum(0.9).nesterov();
/// assert_eq!((opt.momentum, opt.nesterov), (Some(0.9), true));
/// ```
#[derive(Clone, Debug)]
pub struct Sgd<S> {
    /// The learning rate, a number or a schedule of the step count.
    pub learning_rate: S,
    /// The momentum decay, if any.
    pub momentum: Option<f64>,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// Where it acts (default [`Mask::params`]).
    pub mask: Mask,
    /// How the loops run.
    pub exec: Exec,
}

impl<S> Sgd<S> {
    /// With momentum `decay` (a trace of the gradients).
    ///
    /// ```
    /// assert_eq!(pytree_optim::sgd(1.0).momentum(0.5).momentum, Some(0.5));
    /// ```
    #[must_use]
    pub fn momentum(mut self, decay: f64) -> Self {
        self.momentum = Some(decay);
        self
    }

    /// Nesterov momentum (with [`momentum`](Sgd::momentum); alone it does
    /// nothing, as optax's).
    ///
    /// ```
    /// use pytree_optim::{sgd, GradientTransformation};
    /// let opt = sgd(1.0).momentum(0.5).nesterov();
    /// let mut p = vec![0.0f64];
    /// let mut state = opt.init(&p)?;
    /// opt.step(&mut p, &mut vec![1.0], &mut state)?;   // t = 1, update -(1 + 0.5 * 1)
    /// assert_eq!(p, [-1.5]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn nesterov(mut self) -> Self {
        self.nesterov = true;
        self
    }
}

options!(
    Sgd<S>,
    "pytree_optim::sgd(0.1)",
    "elsewhere a leaf is frozen (its update is zero)"
);

/// The state of [`sgd`]: the step count, the momentum trace (a tree of the
/// parameters' structure, with momentum only) and the mask on the tree.
/// It is a pytree whose leaves are the trace's, so
/// `pytree_std::checkpoint::save` and `load` work on it (see
/// [`AdamState`]).
///
/// ```
/// use pytree_optim::GradientTransformation;
/// let s = pytree_optim::sgd(0.1).init(&(1.0f32, 2.0f32))?;
/// assert_eq!((s.count, s.trace), (0, None));
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct SgdState<P> {
    /// Updates done so far (a static field: kept in the TreeDef, so in a
    /// checkpoint's metadata).
    #[pytree(static)]
    pub count: u64,
    /// The momentum trace (leaves named `trace.<path>` in a checkpoint).
    pub trace: Option<P>,
    /// The mask, on the parameters (not saved: see [`LeafMask`]).
    #[pytree(skip(recomputed))]
    pub mask: LeafMask,
}

/// The per-step constants of SGD, in the element type.
#[derive(Clone, Copy)]
struct SgdK<T> {
    neg_lr: T,
    mu: T,
}

impl<S: Schedule> Sgd<S> {
    /// The momentum update by name (see [`ElementOp::SgdMomentum`]).
    fn momentum_op(&self, count: u64, fused: bool) -> ElementOp {
        ElementOp::SgdMomentum {
            neg_lr: -self.learning_rate.value(count),
            mu: self.momentum.unwrap_or(0.0),
            nesterov: self.nesterov,
            fused,
        }
    }

    fn constants<T: Float>(&self, count: u64) -> SgdK<T> {
        SgdK {
            neg_lr: T::from_f64(-self.learning_rate.value(count)),
            mu: T::from_f64(self.momentum.unwrap_or(0.0)),
        }
    }

    /// The update direction (before `-lr`) from the gradient and trace.
    #[inline(always)]
    fn traced<T: Float>(k: SgdK<T>, nesterov: bool, g: T, t: &mut T) -> T {
        *t = g + k.mu * *t;
        if nesterov {
            g + k.mu * *t
        } else {
            *t
        }
    }
}

impl<P, S> GradientTransformation<P> for Sgd<S>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    S: Schedule,
{
    type State = SgdState<P>;

    fn init(&self, params: &P) -> Result<SgdState<P>, Error> {
        Ok(SgdState {
            count: 0,
            trace: match self.momentum {
                Some(_) => Some(zeros(params)?),
                None => None,
            },
            mask: self.mask.on_params(params),
        })
    }

    fn step_is_fused(&self) -> bool {
        true
    }

    fn check(&self, updates: &P, state: &SgdState<P>, params: &P) -> Result<(), Error> {
        check_masked(params, updates, &state.mask)?;
        if let Some(trace) = &state.trace {
            check_updates(params, trace)?;
        }
        Ok(())
    }

    fn update(&self, updates: &mut P, state: &mut SgdState<P>, params: &P) -> Result<(), Error> {
        let k = self.constants::<Scalar<P>>(state.count);
        check_updates(params, updates)?;
        let fresh = state.mask.fresh(&self.mask, params);
        let mask = fresh.as_ref().unwrap_or(&state.mask);
        let zero = &|[u]: [&mut Scalar<P>; 1], [_]: [Scalar<P>; 1]| *u = Scalar::<P>::ZERO;
        match &mut state.trace {
            None => crate::gradient_transformation::walk(
                [updates],
                [params],
                mask,
                self.exec,
                (
                    &|[u], [_]| *u = k.neg_lr * *u,
                    &ElementOp::Scale {
                        factor: -self.learning_rate.value(state.count),
                    },
                ),
                Some((zero, &ElementOp::Zero)),
            )?,
            Some(trace) => {
                let nesterov = self.nesterov;
                walk_split(
                    [updates, trace],
                    [params],
                    mask,
                    self.exec,
                    (
                        &|[u, t], [_]| *u = k.neg_lr * Self::traced(k, nesterov, *u, t),
                        &self.momentum_op(state.count, false),
                    ),
                    (&|[u, _], [_]| *u = Scalar::<P>::ZERO, &ElementOp::Zero),
                )?
            }
        }
        if let Some(m) = fresh {
            state.mask = m;
        }
        state.count += 1;
        Ok(())
    }

    /// Fused: reads the gradients, writes the parameters (and the trace)
    /// in one pass; `grads` is unchanged.
    fn step(&self, params: &mut P, grads: &mut P, state: &mut SgdState<P>) -> Result<(), Error> {
        let k = self.constants::<Scalar<P>>(state.count);
        check_updates(params, grads)?;
        let fresh = state.mask.fresh(&self.mask, &*params);
        let mask = fresh.as_ref().unwrap_or(&state.mask);
        let none = None::<(&crate::gradient_transformation::NoOff<P, 1, 1>, &ElementOp)>;
        match &mut state.trace {
            None => crate::gradient_transformation::walk(
                [params],
                [&*grads],
                mask,
                self.exec,
                (
                    &|[p], [g]| *p += k.neg_lr * g,
                    &ElementOp::Axpby {
                        a: 1.0,
                        b: -self.learning_rate.value(state.count),
                    },
                ),
                none,
            )?,
            Some(trace) => {
                let nesterov = self.nesterov;
                crate::gradient_transformation::walk(
                    [params, trace],
                    [&*grads],
                    mask,
                    self.exec,
                    (
                        &|[p, t], [g]| *p += k.neg_lr * Self::traced(k, nesterov, g, t),
                        &self.momentum_op(state.count, true),
                    ),
                    None::<(&crate::gradient_transformation::NoOff<P, 2, 1>, &ElementOp)>,
                )?
            }
        }
        if let Some(m) = fresh {
            state.mask = m;
        }
        state.count += 1;
        Ok(())
    }
}

/// [`walk`](crate::gradient_transformation::walk) with an `off` function of its own type.
fn walk_split<P, const N: usize, const M: usize, F, G>(
    muts: [&mut P; N],
    refs: [&P; M],
    mask: &LeafMask,
    exec: Exec,
    on: (&F, &ElementOp),
    off: (&G, &ElementOp),
) -> Result<(), Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
    F: Fn([&mut Scalar<P>; N], [Scalar<P>; M]) + Sync,
    G: Fn([&mut Scalar<P>; N], [Scalar<P>; M]) + Sync,
{
    crate::gradient_transformation::walk(muts, refs, mask, exec, on, Some(off))
}

/// Adam (optax's `adam`): moments `m = b1 m + (1 - b1) g`,
/// `v = b2 v + (1 - b2) g²`, bias-corrected, and the update
/// `-lr * m̂ / (sqrt(v̂ + eps_root) + eps)`; defaults `b1 = 0.9`,
/// `b2 = 0.999`, `eps = 1e-8`, `eps_root = 0`. One pass over the
/// parameters, both moments and the gradients (with
/// [`step`](GradientTransformation::step): 28 bytes per `f32` parameter).
///
/// ```
/// use pytree_optim::{adam, GradientTransformation};
/// use pytree_std::PyTree;
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// struct Model { w: Vec<f64>, b: f64 }
///
/// let opt = adam(0.01).b1(0.8);
/// let mut params = Model { w: vec![1.0, 2.0], b: 0.0 };
/// let mut state = opt.init(&params)?;
/// for _ in 0..3 {
///     let mut grads = Model { w: vec![1.0, -1.0], b: 0.0 };
///     opt.step(&mut params, &mut grads, &mut state)?;
/// }
/// // A constant gradient moves each parameter by lr per step, against its sign.
/// assert!((params.w[0] - 0.97).abs() < 1e-9 && (params.w[1] - 2.03).abs() < 1e-9);
/// assert_eq!(params.b, 0.0);
/// assert_eq!(state.count, 3);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn adam<S: Schedule>(learning_rate: S) -> Adam<S> {
    Adam {
        learning_rate,
        b1: 0.9,
        b2: 0.999,
        eps: 1e-8,
        eps_root: 0.0,
        weight_decay: 0.0,
        weight_decay_mask: Mask::all(),
        mask: Mask::params(),
        exec: Exec::Sequential,
    }
}

/// AdamW (optax's `adamw`): Adam with decoupled weight decay, the update
/// `-lr * (m̂ / (sqrt(v̂ + eps_root) + eps) + weight_decay * p)`, fused in
/// the same one pass. Decay applies where
/// [`weight_decay_mask`](Adam::weight_decay_mask) holds (default: every
/// leaf the optimizer updates); optax's default `weight_decay` is `1e-4`.
///
/// ```
/// use pytree_optim::{adamw, GradientTransformation, Mask};
/// use pytree_std::{KeyPath, PyTree};
///
/// #[derive(PyTree, Clone, Debug)]
/// struct Linear { w: Vec<f32>, b: Vec<f32> }
///
/// // No decay on biases.
/// let opt = adamw(1e-3, 0.1).weight_decay_mask(Mask::new(|p: &KeyPath| !p.to_string().starts_with(".b")));
/// let mut params = Linear { w: vec![10.0], b: vec![10.0] };
/// let mut state = opt.init(&params)?;
/// opt.step(&mut params, &mut Linear { w: vec![1.0], b: vec![1.0] }, &mut state)?;
/// assert!((params.w[0] - (10.0 - 1e-3 * (1.0 + 0.1 * 10.0))).abs() < 1e-6);
/// assert!((params.b[0] - (10.0 - 1e-3)).abs() < 1e-6);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn adamw<S: Schedule>(learning_rate: S, weight_decay: f64) -> Adam<S> {
    Adam {
        weight_decay,
        ..adam(learning_rate)
    }
}

/// See [`adam`] and [`adamw`]; the builder methods set the
/// hyperparameters.
///
/// ```
/// let opt = pytree_optim::adam(1e-3).b1(0.8).b2(0.99).eps(1e-6).eps_root(1e-12);
/// assert_eq!((opt.b1, opt.b2, opt.eps, opt.eps_root, opt.weight_decay), (0.8, 0.99, 1e-6, 1e-12, 0.0));
/// ```
#[derive(Clone, Debug)]
pub struct Adam<S> {
    /// The learning rate, a number or a schedule of the step count.
    pub learning_rate: S,
    /// The decay of the first moment.
    pub b1: f64,
    /// The decay of the second moment.
    pub b2: f64,
    /// Added to the root of the second moment.
    pub eps: f64,
    /// Added to the second moment under the root.
    pub eps_root: f64,
    /// The decoupled weight decay (0 for Adam).
    pub weight_decay: f64,
    /// Where the weight decay applies (within `mask`).
    pub weight_decay_mask: Mask,
    /// Where it acts (default [`Mask::params`]).
    pub mask: Mask,
    /// How the loops run.
    pub exec: Exec,
}

macro_rules! setter {
    ($name:ident, $doc:literal, $ex:literal) => {
        #[doc = concat!($doc, "\n\n```\nlet opt = pytree_optim::adam(1e-3).", stringify!($name), "(", $ex, ");\nassert_eq!(opt.", stringify!($name), ", ", $ex, ");\n```")]
        #[must_use]
        pub fn $name(mut self, $name: f64) -> Self {
            self.$name = $name;
            self
        }
    };
}

impl<S> Adam<S> {
    setter!(
        b1,
        "Sets the decay of the first moment (default 0.9).",
        "0.8"
    );
    setter!(
        b2,
        "Sets the decay of the second moment (default 0.999).",
        "0.99"
    );
    setter!(eps, "Sets `eps`, added to the root (default 1e-8).", "1e-6");
    setter!(
        eps_root,
        "Sets `eps_root`, added under the root (default 0).",
        "1e-12"
    );
    setter!(
        weight_decay,
        "Sets the decoupled weight decay (AdamW; 0 is Adam).",
        "1e-2"
    );

    /// Applies the weight decay only where `mask` holds (optax's `mask`
    /// argument of `adamw`); the Adam update itself follows
    /// [`mask`](Adam::mask).
    ///
    /// ```
    /// use pytree_optim::{adamw, GradientTransformation, Mask};
    /// let opt = adamw(0.1, 0.5).weight_decay_mask(Mask::kind("decayed"));
    /// let mut p = vec![1.0f64];
    /// let mut s = opt.init(&p)?;
    /// opt.step(&mut p, &mut vec![1.0], &mut s)?;
    /// assert!((p[0] - 0.9).abs() < 1e-9); // no leaf of kind "decayed": plain Adam
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn weight_decay_mask(mut self, mask: Mask) -> Self {
        self.weight_decay_mask = mask;
        self
    }
}

options!(
    Adam<S>,
    "pytree_optim::adam(0.1)",
    "elsewhere a leaf is frozen (its update is zero, its moments stay zero)"
);

/// The state of [`adam`] / [`adamw`] (optax's `ScaleByAdamState`): the step
/// count, the moments as trees of the parameters' structure, the masks on
/// the tree.
///
/// The state is a pytree whose leaves are the moments' (the parameters'
/// leaf type), so it is saved and loaded as a checkpoint like the model:
/// its tensors are named `mu.<path>` and `nu.<path>`, the step count is a
/// static field written with the TreeDef into the file's metadata, and the
/// masks (configuration, not state) are not saved: a loaded state
/// evaluates them again at its first step (see [`LeafMask`]). Load it by
/// its type, `checkpoint::load::<AdamState<_>>`, which takes the count from
/// the file (`load_like` and `load_into` keep their template's static
/// fields, so its count). Training stopped after step k, saved, loaded and
/// continued gives the parameters of an uninterrupted run, bit for bit.
///
/// ```
/// use pytree_optim::GradientTransformation;
/// let s = pytree_optim::adam(1e-3).init(&vec![1.0f32, 2.0])?;
/// assert_eq!((s.count, &s.mu, &s.nu), (0, &vec![0.0, 0.0], &vec![0.0, 0.0]));
/// let names: Vec<String> = pytree_std::paths::leaves_with_path(&s)
///     .into_iter().map(|(p, _)| p.to_string()).collect();
/// assert_eq!(names, [".mu[0]", ".mu[1]", ".nu[0]", ".nu[1]"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct AdamState<P> {
    /// Updates done so far (a static field: kept in the TreeDef, so in a
    /// checkpoint's metadata).
    #[pytree(static)]
    pub count: u64,
    /// The first moment (leaves named `mu.<path>` in a checkpoint).
    pub mu: P,
    /// The second moment (`nu.<path>`).
    pub nu: P,
    /// Where the optimizer acts, on the parameters (not saved: see
    /// [`LeafMask`]).
    #[pytree(skip(recomputed))]
    pub mask: LeafMask,
    /// Where the weight decay applies, on the parameters (with `mask`).
    #[pytree(skip(recomputed))]
    pub decay_mask: LeafMask,
}

/// The per-step constants of Adam, in the element type.
#[derive(Clone, Copy)]
struct AdamK<T> {
    b1: T,
    b2: T,
    one_minus_b1: T,
    one_minus_b2: T,
    inv_c1: T,
    inv_c2: T,
    eps: T,
    eps_root: T,
    neg_lr: T,
    wd: T,
}

impl<T: Float> AdamK<T> {
    /// Advances the moments with `g` and returns the update direction
    /// `m̂ / (sqrt(v̂ + eps_root) + eps)`, in optax's order of operations
    /// but for the bias corrections, which multiply by `1 / (1 - b^t)`
    /// (computed once per step in `f64`) where optax divides: one division
    /// and one square root per element instead of three divisions and a
    /// root (the divider is the bottleneck of a loop that is otherwise
    /// memory-bound), at most an ulp or two from optax's numbers.
    #[inline(always)]
    fn direction(self, g: T, m: &mut T, v: &mut T) -> T {
        *m = self.one_minus_b1 * g + self.b1 * *m;
        *v = self.one_minus_b2 * (g * g) + self.b2 * *v;
        let m_hat = *m * self.inv_c1;
        let v_hat = *v * self.inv_c2;
        m_hat / ((v_hat + self.eps_root).sqrt() + self.eps)
    }
}

impl<S: Schedule> Adam<S> {
    /// The constants of the update after `count` updates.
    fn constants<T: Float>(&self, count: u64) -> AdamK<T> {
        let t = (count + 1) as f64;
        AdamK {
            b1: T::from_f64(self.b1),
            b2: T::from_f64(self.b2),
            one_minus_b1: T::from_f64(1.0 - self.b1),
            one_minus_b2: T::from_f64(1.0 - self.b2),
            inv_c1: T::from_f64(1.0 / (1.0 - self.b1.powf(t))),
            inv_c2: T::from_f64(1.0 / (1.0 - self.b2.powf(t))),
            eps: T::from_f64(self.eps),
            eps_root: T::from_f64(self.eps_root),
            neg_lr: T::from_f64(-self.learning_rate.value(count)),
            wd: T::from_f64(self.weight_decay),
        }
    }

    /// The update of one leaf by name (see [`ElementOp::Adam`]).
    fn op(&self, count: u64, decays: bool, fused: bool) -> ElementOp {
        let t = (count + 1) as f64;
        ElementOp::Adam {
            b1: self.b1,
            b2: self.b2,
            inv_c1: 1.0 / (1.0 - self.b1.powf(t)),
            inv_c2: 1.0 / (1.0 - self.b2.powf(t)),
            eps: self.eps,
            eps_root: self.eps_root,
            neg_lr: -self.learning_rate.value(count),
            weight_decay: if decays { self.weight_decay } else { 0.0 },
            fused,
        }
    }

    /// Whether leaf `i` decays.
    fn decays(&self, state_decay: &LeafMask, i: usize) -> bool {
        self.weight_decay != 0.0 && state_decay.get(i)
    }
}

impl<P, S> GradientTransformation<P> for Adam<S>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    S: Schedule,
{
    type State = AdamState<P>;

    fn init(&self, params: &P) -> Result<AdamState<P>, Error> {
        Ok(AdamState {
            count: 0,
            mu: zeros(params)?,
            nu: zeros(params)?,
            mask: self.mask.on_params(params),
            decay_mask: self.weight_decay_mask.on(params),
        })
    }

    fn step_is_fused(&self) -> bool {
        true
    }

    fn check(&self, updates: &P, state: &AdamState<P>, params: &P) -> Result<(), Error> {
        check_masked(params, updates, &state.mask)?;
        check_mask(&state.decay_mask, params)?;
        check_updates(params, &state.mu)?;
        check_updates(params, &state.nu)
    }

    fn update(&self, updates: &mut P, state: &mut AdamState<P>, params: &P) -> Result<(), Error> {
        let k = self.constants::<Scalar<P>>(state.count);
        check_updates(params, updates)?;
        let fresh = state.mask.fresh(&self.mask, params);
        let fresh_decay = state.decay_mask.fresh(&self.weight_decay_mask, params);
        let mask = fresh.as_ref().unwrap_or(&state.mask);
        let decay = fresh_decay.as_ref().unwrap_or(&state.decay_mask);
        mask.check(params)?;
        decay.check(params)?;
        let (exec, count) = (self.exec, state.count);
        let ops = (self.op(count, true, false), self.op(count, false, false));
        let mut i = 0;
        pytree_std::walk::zip_mut(
            [updates, &mut state.mu, &mut state.nu],
            [params],
            |[u, m, v], [p]| {
                let r = if !mask.get(i) {
                    let zero = &|[u]: [&mut Scalar<P>; 1], []: [Scalar<P>; 0]| {
                        *u = Scalar::<P>::ZERO;
                    };
                    P::Leaf::zip_op([u], [], exec, zero, &ElementOp::Zero)
                } else if self.decays(decay, i) {
                    let f = &|[u, m, v]: [&mut Scalar<P>; 3], [p]: [Scalar<P>; 1]| {
                        *u = k.neg_lr * (k.direction(*u, m, v) + k.wd * p);
                    };
                    P::Leaf::zip_op([u, m, v], [p], exec, f, &ops.0)
                } else {
                    let f = &|[u, m, v]: [&mut Scalar<P>; 3], []: [Scalar<P>; 0]| {
                        *u = k.neg_lr * k.direction(*u, m, v);
                    };
                    P::Leaf::zip_op([u, m, v], [], exec, f, &ops.1)
                };
                i += 1;
                r.map_err(|e| e.kind().to_string())
            },
        )?;
        keep_masks(state, fresh, fresh_decay);
        state.count += 1;
        Ok(())
    }

    /// Fused: reads the gradients, writes the parameters and both moments
    /// in one pass (`p += -lr * (m̂ / (sqrt(v̂ + eps_root) + eps) + wd * p)`);
    /// `grads` is unchanged.
    fn step(&self, params: &mut P, grads: &mut P, state: &mut AdamState<P>) -> Result<(), Error> {
        let k = self.constants::<Scalar<P>>(state.count);
        check_updates(params, grads)?;
        let fresh = state.mask.fresh(&self.mask, &*params);
        let fresh_decay = state.decay_mask.fresh(&self.weight_decay_mask, &*params);
        let mask = fresh.as_ref().unwrap_or(&state.mask);
        let decay = fresh_decay.as_ref().unwrap_or(&state.decay_mask);
        mask.check(&*params)?;
        decay.check(&*params)?;
        let (exec, count) = (self.exec, state.count);
        let ops = (self.op(count, true, true), self.op(count, false, true));
        let mut i = 0;
        pytree_std::walk::zip_mut(
            [params, &mut state.mu, &mut state.nu],
            [&*grads],
            |[p, m, v], [g]| {
                let r = if !mask.get(i) {
                    Ok(())
                } else if self.decays(decay, i) {
                    let f = &|[p, m, v]: [&mut Scalar<P>; 3], [g]: [Scalar<P>; 1]| {
                        *p += k.neg_lr * (k.direction(g, m, v) + k.wd * *p);
                    };
                    P::Leaf::zip_op([p, m, v], [g], exec, f, &ops.0)
                } else {
                    let f = &|[p, m, v]: [&mut Scalar<P>; 3], [g]: [Scalar<P>; 1]| {
                        *p += k.neg_lr * k.direction(g, m, v);
                    };
                    P::Leaf::zip_op([p, m, v], [g], exec, f, &ops.1)
                };
                i += 1;
                r.map_err(|e| e.kind().to_string())
            },
        )?;
        keep_masks(state, fresh, fresh_decay);
        state.count += 1;
        Ok(())
    }
}

/// Keeps the masks a loaded state evaluated at its first step.
fn keep_masks<P>(state: &mut AdamState<P>, mask: Option<LeafMask>, decay: Option<LeafMask>) {
    if let Some(m) = mask {
        state.mask = m;
    }
    if let Some(m) = decay {
        state.decay_mask = m;
    }
}
