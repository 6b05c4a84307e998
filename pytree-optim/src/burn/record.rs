//! [`PerParameterState`]: the state of a [`PerParameter`](super::PerParameter)
//! for one parameter, as burn's optimizer record holds it.
//!
//! burn saves a per-parameter state through [`RecordState`]: named tensors
//! and number scalars under the parameter's prefix, read back by name with
//! no optimizer at hand (`state_unflatten` is an associated function). A
//! pytree-optim state is a pytree whose structure its transformation
//! gives (`init`), so the record holds what the structure does not: the
//! state's tensors in leaf order (`<prefix>.leaf.<i>`, their count
//! `<prefix>.leaves`) and its static fields that are integers or booleans
//! (the step counts: `<prefix>.static.<i>`, their count
//! `<prefix>.statics`). A loaded state is rebuilt at the parameter's next
//! step against the transformation's initial state for it (as
//! `pytree_std::checkpoint`'s `load_like` reads against a template),
//! which checks the number of tensors and their shapes. This needs no
//! serde and no TreeDef in the record; a key path in the names would
//! have needed one (burn's `StateSource` is read by exact names only).

use pytree_std::burn::optim::{RecordState, StateSink, StateSource};
use pytree_std::burn::tensor::{Device, Tensor, TensorData};
use pytree_std::custom::StaticValue;
use pytree_std::{BurnTensor, Error, NodeView, PyTree, TreeDef};

use crate::gradient_transformation::GradientTransformation;

/// The state of a [`PerParameter`](super::PerParameter) for one parameter:
/// the transformation's state of that tensor, or one loaded from burn's
/// optimizer record and not yet rebuilt (at the parameter's next step,
/// see [`into_state`](PerParameterState::into_state)).
///
/// In the record (burn's `ModuleOptimizer::to_record`, `save`,
/// `into_bytes`), under the parameter's id: the state's tensors in leaf
/// order (`<id>.leaf.0`, `<id>.leaf.1`, ..., their number the scalar
/// `<id>.leaves`) and its integer and boolean static fields (the step
/// counts: `<id>.static.<i>`, their number `<id>.statics`); other static
/// fields are not saved and keep the value `init` gives. Training resumed
/// from a record continues bit for bit.
///
/// ```
/// use burn::nn::LinearConfig;
/// use burn::optim::{GradientsParams, ModuleOptimizer};
/// use burn::tensor::{Device, Tensor};
/// use pytree_optim::burn::PerParameter;
///
/// let device = Device::default().autodiff();
/// let linear = LinearConfig::new(2, 1).init(&device);
/// let grads = |m: &burn::nn::Linear| GradientsParams::from_grads(m.forward(Tensor::<2>::ones([1, 2], &device)).sum().backward(), m);
/// let new = || ModuleOptimizer::from(PerParameter::new(pytree_optim::adam(0.1)).unwrap());
/// let mut optim = new();
/// let linear = optim.step(1.0, linear.clone(), grads(&linear));
/// assert_eq!(optim.to_record().len(), 4); // Adam's mu and nu, of the weight and the bias
///
/// // Saved and loaded: the next steps are the same bits.
/// let mut loaded = new().from_bytes(optim.into_bytes().unwrap()).unwrap();
/// let (a, b) = (optim.step(1.0, linear.clone(), grads(&linear)), loaded.step(1.0, linear.clone(), grads(&linear)));
/// assert_eq!(a.weight.val().into_data(), b.weight.val().into_data());
/// ```
pub struct PerParameterState<S> {
    inner: Inner<S>,
}

#[derive(Clone)]
enum Inner<S> {
    /// The transformation's state.
    Ready(S),
    /// Read from a record, to be rebuilt against the transformation's
    /// initial state.
    Loaded {
        leaves: Vec<BurnTensor>,
        statics: Vec<Option<Number>>,
    },
}

impl<S: Clone> Clone for PerParameterState<S> {
    fn clone(&self) -> Self {
        PerParameterState {
            inner: self.inner.clone(),
        }
    }
}

impl<S> std::fmt::Debug for PerParameterState<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Ready(_) => f.write_str("PerParameterState::Ready(..)"),
            Inner::Loaded { leaves, .. } => {
                write!(f, "PerParameterState::Loaded({} tensors)", leaves.len())
            }
        }
    }
}

/// A static field's value as the record holds it (burn's scalars; only
/// integers and booleans are statics: a static is `Eq`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Number {
    U(u64),
    I(i64),
    B(bool),
}

impl<S> PerParameterState<S> {
    /// The state `state`.
    pub(super) fn ready(state: S) -> Self {
        PerParameterState {
            inner: Inner::Ready(state),
        }
    }

    /// The transformation's state, or `None` for one loaded from a record
    /// that no step has rebuilt yet.
    ///
    /// ```
    /// use burn::optim::Optimizer;
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_optim::burn::PerParameter;
    /// let opt = PerParameter::new(pytree_optim::adam(0.1))?;
    /// let d = Device::default();
    /// let (_, state) = opt.step(1.0, Tensor::<1>::zeros([2], &d), Tensor::<1>::ones([2], &d), None);
    /// assert_eq!(state.unwrap().state().unwrap().0.count, 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn state(&self) -> Option<&S> {
        match &self.inner {
            Inner::Ready(s) => Some(s),
            Inner::Loaded { .. } => None,
        }
    }

    /// The transformation's state for `params`: a loaded one rebuilt
    /// against `transformation.init(params)` (its structure, dtypes, the
    /// static fields the record lacks), on `params`' device; an error if
    /// the record's tensors are not as many, or not of the shapes, as that
    /// state's, or a static field's value does not fit its type (the
    /// record of another optimizer).
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::optim::{GradientsParams, ModuleOptimizer};
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_optim::burn::PerParameter;
    ///
    /// let device = Device::default().autodiff();
    /// let linear = LinearConfig::new(2, 1).init(&device);
    /// let grads = |m: &burn::nn::Linear| GradientsParams::from_grads(m.forward(Tensor::<2>::ones([1, 2], &device)).sum().backward(), m);
    /// let mut adam = ModuleOptimizer::from(PerParameter::new(pytree_optim::adam(0.1))?);
    /// let linear = adam.step(1.0, linear.clone(), grads(&linear));
    /// // Adam's record loaded into momentum SGD: at the next step, the
    /// // state does not fit.
    /// let bytes = adam.into_bytes().unwrap();
    /// let mut sgd = ModuleOptimizer::from(PerParameter::new(pytree_optim::sgd(0.1).momentum(0.9))?).from_bytes(bytes).unwrap();
    /// let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sgd.step(1.0, linear.clone(), grads(&linear))));
    /// assert!(panicked.is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn into_state<T>(self, transformation: &T, params: &BurnTensor) -> Result<S, Error>
    where
        T: GradientTransformation<BurnTensor, State = S>,
        S: PyTree<Leaf = BurnTensor>,
    {
        let (leaves, statics) = match self.inner {
            Inner::Ready(s) => return Ok(s),
            Inner::Loaded { leaves, statics } => (leaves, statics),
        };
        let (template, def) = pytree_std::flatten(transformation.init(params)?);
        if template.len() != leaves.len()
            || template
                .iter()
                .zip(&leaves)
                .any(|(t, l)| t.shape() != l.shape())
        {
            return Err(Error::custom(format!(
                "the optimizer record holds a state of tensors of shapes {:?} for this \
                 parameter, the transformation's state has {:?} (a record of another optimizer?)",
                leaves
                    .iter()
                    .map(|l| l.shape().to_vec())
                    .collect::<Vec<_>>(),
                template
                    .iter()
                    .map(|t| t.shape().to_vec())
                    .collect::<Vec<_>>(),
            )));
        }
        let device = params.device();
        let mut built = Vec::with_capacity(leaves.len());
        for (like, leaf) in template.iter().zip(leaves) {
            let mut flat = leaf.flat().to_device(&device);
            if flat.dtype() != like.dtype() {
                flat = flat.cast(like.dtype());
            }
            built.push(BurnTensor::from_flat(flat, like.shape())?);
        }
        let ours = statics_of(&def)?;
        if ours.len() != statics.len() {
            return Err(Error::custom(format!(
                "the optimizer record holds {} static fields for this parameter, the \
                 transformation's state has {} (a record of another optimizer?)",
                statics.len(),
                ours.len()
            )));
        }
        let mut values = Vec::with_capacity(ours.len());
        for (like, theirs) in ours.into_iter().zip(statics) {
            values.push(match theirs {
                None => like,
                Some(n) => n.as_static_like(&like).ok_or_else(|| {
                    Error::custom(format!(
                        "the optimizer record's static field {n:?} does not fit the state's \
                         {like:?} (a {})",
                        like.type_name()
                    ))
                })?,
            });
        }
        pytree_std::unflatten(&with_statics(&def, values)?, built)
    }

    /// The state with its tensors on `device`.
    pub(super) fn moved_to(self, device: &Device) -> Self
    where
        S: PyTree<Leaf = BurnTensor>,
    {
        let inner = match self.inner {
            Inner::Ready(s) => Inner::Ready(pytree_std::map(s, |t| on_device(t, device))),
            Inner::Loaded { leaves, statics } => Inner::Loaded {
                leaves: leaves.into_iter().map(|t| on_device(t, device)).collect(),
                statics,
            },
        };
        PerParameterState { inner }
    }
}

impl<S> RecordState for PerParameterState<S>
where
    S: PyTree<Leaf = BurnTensor> + Send + Sync + 'static,
{
    fn state_flatten(&self, prefix: &str, out: &mut StateSink) {
        let (leaves, statics): (Vec<TensorData>, Vec<Option<Number>>) = match &self.inner {
            Inner::Ready(s) => (
                pytree_std::leaves(s).into_iter().map(shaped_data).collect(),
                // A TreeDef of this crate's own making: its transform
                // fails only past the work budget, which a state is not.
                statics_of(&pytree_std::structure(s))
                    .unwrap_or_default()
                    .iter()
                    .map(Number::of)
                    .collect(),
            ),
            Inner::Loaded { leaves, statics } => {
                (leaves.iter().map(shaped_data).collect(), statics.clone())
            }
        };
        out.push_scalar(prefix, "leaves", (leaves.len() as u64).into());
        for (i, data) in leaves.into_iter().enumerate() {
            out.push_tensor(prefix, &format!("leaf.{i}"), data);
        }
        out.push_scalar(prefix, "statics", (statics.len() as u64).into());
        for (i, n) in statics.into_iter().enumerate() {
            let name = format!("static.{i}");
            match n {
                Some(Number::U(v)) => out.push_scalar(prefix, &name, v.into()),
                Some(Number::I(v)) => out.push_scalar(prefix, &name, v.into()),
                Some(Number::B(v)) => out.push_scalar(prefix, &name, v.into()),
                None => {}
            }
        }
    }

    fn state_unflatten(prefix: &str, src: &mut StateSource, device: &Device) -> Option<Self> {
        let n = usize::try_from(src.take_scalar(prefix, "leaves")?).ok()?;
        let leaves = (0..n)
            .map(|i| {
                // On the load's device, as burn's own states are: flat,
                // then shaped as recorded.
                let (bytes, shape, dtype) =
                    src.take_tensor(prefix, &format!("leaf.{i}"))?.into_parts();
                let flat = TensorData::from_bytes(bytes, [shape.num_elements()], dtype);
                let flat = Tensor::<1>::from_data(flat, (device, dtype));
                BurnTensor::from_flat(flat, shape.as_slice()).ok()
            })
            .collect::<Option<Vec<_>>>()?;
        let m = usize::try_from(src.take_scalar(prefix, "statics")?).ok()?;
        let statics = (0..m)
            .map(|i| {
                src.take_scalar(prefix, &format!("static.{i}"))
                    .and_then(Number::from_scalar)
            })
            .collect();
        Some(PerParameterState {
            inner: Inner::Loaded { leaves, statics },
        })
    }
}

impl Number {
    /// A static field's value, if it is an integer or a boolean.
    fn of(v: &StaticValue) -> Option<Number> {
        macro_rules! try_as {
            ($($t:ty => $variant:ident),*) => {$(
                if let Some(x) = v.downcast_ref::<$t>() {
                    return Some(Number::$variant((*x).try_into().ok()?));
                }
            )*};
        }
        try_as!(u64 => U, u32 => U, u16 => U, u8 => U, usize => U,
                i64 => I, i32 => I, i16 => I, i8 => I, isize => I);
        v.downcast_ref::<bool>().map(|b| Number::B(*b))
    }

    /// burn's scalar (its type is burn-pack's, which this crate does not
    /// name) as a number; a float is none (no static is a float).
    fn from_scalar<S: Copy>(s: S) -> Option<Number>
    where
        bool: TryFrom<S>,
        u64: TryFrom<S>,
        i64: TryFrom<S>,
    {
        if let Ok(b) = bool::try_from(s) {
            return Some(Number::B(b));
        }
        if let Ok(u) = u64::try_from(s) {
            return Some(Number::U(u));
        }
        i64::try_from(s).ok().map(Number::I)
    }

    /// The value as a static of `like`'s type, if it fits.
    fn as_static_like(self, like: &StaticValue) -> Option<StaticValue> {
        macro_rules! try_as {
            ($($t:ty),*) => {$(
                if like.downcast_ref::<$t>().is_some() {
                    let v: $t = match self {
                        Number::U(u) => u.try_into().ok()?,
                        Number::I(i) => i.try_into().ok()?,
                        Number::B(_) => return None,
                    };
                    return Some(StaticValue::new(v));
                }
            )*};
        }
        try_as!(u64, u32, u16, u8, usize, i64, i32, i16, i8, isize);
        match (like.downcast_ref::<bool>(), self) {
            (Some(_), Number::B(b)) => Some(StaticValue::new(b)),
            _ => None,
        }
    }
}

/// `t` on `device` (the same handle if it is there).
fn on_device(t: BurnTensor, device: &Device) -> BurnTensor {
    if t.device() == *device {
        return t;
    }
    BurnTensor::from_flat(t.flat().to_device(device), t.shape()).unwrap_or(t)
}

/// A tensor's elements as data of its shape (`BurnTensor::to_data`
/// reads them flat).
fn shaped_data(t: &BurnTensor) -> TensorData {
    let (bytes, _, dtype) = t.to_data().into_parts();
    TensorData::from_bytes(bytes, t.shape().to_vec(), dtype)
}

/// The static fields of `def`'s structs, in the order of its transform.
fn statics_of(def: &TreeDef) -> Result<Vec<StaticValue>, Error> {
    let mut out = Vec::new();
    def.transform(
        |_, node| {
            if let NodeView::Struct { statics, .. } = node.root_node() {
                out.extend(statics);
            }
            Ok(node.clone())
        },
        |_| TreeDef::leaf(),
    )?;
    Ok(out)
}

/// `def` with its static fields `values`, in [`statics_of`]'s order.
fn with_statics(def: &TreeDef, values: Vec<StaticValue>) -> Result<TreeDef, Error> {
    let mut values = values.into_iter();
    def.transform(
        |_, node| match node.root_node() {
            NodeView::Struct { schema, statics } => {
                let statics = statics
                    .into_iter()
                    .map(|own| values.next().unwrap_or(own))
                    .collect();
                TreeDef::from_node(&NodeView::Struct { schema, statics }, node.children()?)
            }
            _ => Ok(node.clone()),
        },
        |_| TreeDef::leaf(),
    )
}
