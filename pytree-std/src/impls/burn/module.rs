//! [`BurnModule`]: any burn `Module` as a pytree of its float parameters.
//!
//! burn walks a module with its own visitor and mapper (`Module::visit`,
//! `Module::map`), naming each sub-module as it enters it: the names
//! burn-store writes (`fc1.weight`, `layers.0.bias`). Taking a module apart
//! is one `Module::map` that records those names as a [`Tree`] (a map per
//! struct or enum variant, a sequence per `Vec`, array or tuple) and moves
//! each float parameter out into it, leaving an empty tensor in the
//! module; putting it back is one `Module::map` that moves them in again.
//! Integer and bool parameters (buffers) stay in the module.

use std::sync::Arc;

use burn::module::{Module, ModuleMapper, Param, ParamId};
use burn::tensor::{Shape, Tensor};
use pytree_core::{Error, Flatten, LeafMut, LeafRef, Sink, Source, Unflatten, Visit, VisitMut};

use super::BurnTensor;
use crate::std_namespace::Std;
use crate::tree::Tree;

/// Any burn `Module` as a pytree: its float parameters are the leaves
/// ([`BurnTensor`]), keyed by the names burn gives them (burn-store's
/// tensor names), everything else (configuration, integer and bool
/// buffers, parameter ids, autodiff settings) stays in the module.
///
/// No impl per layer type: burn's own visitor takes any module apart, a
/// `#[derive(Module)]` struct of burn-nn layers as well as a `Vec` of them.
/// A struct of your own that holds a burn model beside plain fields
/// derives `PyTree` with a `BurnModule<Model>` field.
///
/// Every pytree operation works on it: flatten, paths, `map` and `map_n`
/// (which keep the module's structure and build a new one), `zip_mut`,
/// summaries, partitions by key path, ravel, stacking, pytree-optim's
/// optimizers and pytree-std's checkpoints (by template or in place).
/// One thing needs the module: a `BurnModule` cannot be built from a
/// `TreeDef` and leaves alone (`unflatten` is an error saying so), since a
/// burn module is made from its config and a device; build one with
/// [`BurnModule::new`], then map or load into it.
///
/// The leaves are the parameters without autodiff (as burn's optimizers
/// step them); [`into_module`](BurnModule::into_module) puts each back
/// as it was taken (autodiff, `require_grad`, checkpointing), after
/// checking that every leaf still has its parameter's shape and a float
/// dtype.
///
/// ```
/// use burn::module::Module;
/// use burn::nn::{Linear, LinearConfig};
/// use burn::tensor::Device;
/// use pytree_std::BurnModule;
///
/// #[derive(Module, Debug)]
/// struct Mlp { fc1: Linear, fc2: Linear }
///
/// let device = Device::default();
/// let model = Mlp { fc1: LinearConfig::new(4, 8).init(&device), fc2: LinearConfig::new(8, 2).init(&device) };
/// let tree = BurnModule::new(model);
/// let paths: Vec<String> = pytree_std::paths::leaves_with_path(&tree).into_iter()
///     .map(|(p, _)| p.keystr(pytree_std::paths::KeyStr::SIMPLE)).collect();
/// assert_eq!(paths, ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]);
/// let halved = pytree_std::map(tree, |w| w.map_flat(|x| x * 0.5).unwrap());
/// let model: Mlp = halved.into_module()?;
/// assert_eq!(model.fc1.weight.dims(), [4, 8]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct BurnModule<M> {
    /// The module, each float parameter an empty tensor.
    module: M,
    /// The float parameters, by name.
    params: Tree<BurnTensor>,
    /// Per leaf, in order: how to put it back.
    slots: Arc<[Slot]>,
}

/// What a parameter was when taken: its id, shape, and autodiff settings.
#[derive(Clone, Debug)]
struct Slot {
    id: ParamId,
    shape: Shape,
    autodiff: bool,
    require_grad: bool,
    checkpointing: Option<burn::tensor::GradientCheckpointingStrategy>,
    distributed: bool,
    /// The 2-d `weight` of a burn-nn `Linear` (`[d_in, d_out]`, PyTorch's
    /// transposed): see [`BurnModule::linear_weights`].
    linear_weight: bool,
}

impl Slot {
    /// Captures `t`'s settings (burn-optim's `ParameterContext::capture`).
    fn of<const D: usize>(id: ParamId, t: &Tensor<D>) -> Slot {
        // burn answers the autodiff questions for autodiff tensors only.
        let autodiff = t.is_autodiff();
        Slot {
            id,
            shape: t.shape(),
            autodiff,
            require_grad: autodiff && t.is_require_grad(),
            checkpointing: if autodiff {
                t.gradient_checkpointing_strategy()
            } else {
                None
            },
            distributed: autodiff && t.is_distributed(),
            linear_weight: false,
        }
    }

    /// `t` (without autodiff) as the parameter was: burn-optim's
    /// `ParameterContext::restore`.
    fn restore<const D: usize>(&self, t: Tensor<D>) -> Tensor<D> {
        if !self.autodiff {
            return t;
        }
        let mut p = Tensor::from_inner(t);
        if let Some(strategy) = self.checkpointing {
            p = p.with_gradient_checkpointing_strategy(strategy);
        }
        if self.require_grad {
            p = p.require_grad();
        }
        if self.distributed {
            p = p.set_distributed(self.id);
        }
        p
    }
}

impl<M: Module> BurnModule<M> {
    /// Takes `module` apart: its float parameters move into the tree
    /// (without autodiff), an empty tensor takes each one's place.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::tensor::Device;
    /// let tree = pytree_std::BurnModule::new(LinearConfig::new(3, 2).init(&Device::default()));
    /// assert_eq!(pytree_std::leaves(&tree).len(), 2); // weight, bias
    /// assert_eq!(pytree_std::structure(&tree).to_string(), r#"{"weight": *, "bias": *}"#);
    /// ```
    pub fn new(module: M) -> Self {
        let mut apart = TakeApart {
            frames: vec![Frame::root()],
            slots: Vec::new(),
        };
        let module = module.map(&mut apart);
        let root = apart.frames.pop().map(Frame::into_tree);
        BurnModule {
            module,
            params: root
                .flatten()
                .unwrap_or_else(|| Tree::dict(Vec::<(String, _)>::new())),
            slots: apart.slots.into(),
        }
    }

    /// The module with its parameters put back, each as it was taken
    /// (autodiff, `require_grad`, checkpointing). A leaf of another shape
    /// than its parameter's, or not a float tensor, is an error naming its
    /// path, and nothing is lost: the error is returned with `self`.
    ///
    /// ```
    /// use burn::nn::{Linear, LinearConfig};
    /// use burn::tensor::Device;
    /// use pytree_std::BurnModule;
    /// let linear = LinearConfig::new(3, 2).init(&Device::default());
    /// let id = linear.weight.id;
    /// let back: Linear = BurnModule::new(linear).into_module()?;
    /// assert_eq!((back.weight.id, back.weight.dims()), (id, [3, 2]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn into_module(self) -> Result<M, Error> {
        self.into_module_or_self().map_err(|(e, _)| e)
    }

    /// [`into_module`](BurnModule::into_module), giving `self` back with
    /// the error.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_std::{BurnModule, BurnTensor};
    /// let tree = BurnModule::new(LinearConfig::new(3, 2).init(&Device::default()));
    /// let wrong = pytree_std::map(tree, |_| BurnTensor::new(Tensor::<1>::zeros([5], &Device::default())));
    /// let (err, tree) = wrong.into_module_or_self().unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["weight"]: expected a burn parameter of shape [3, 2], found f32[5]"#);
    /// assert_eq!(pytree_std::leaves(&tree).len(), 2);
    /// ```
    #[allow(clippy::result_large_err)]
    pub fn into_module_or_self(self) -> Result<M, (Error, Self)> {
        if let Err(e) = self.check_leaves() {
            return Err((e, self));
        }
        let (leaves, _) = crate::walk::flatten(self.params);
        let mut put = PutBack {
            leaves: leaves.into_iter(),
            slots: self.slots.iter(),
        };
        Ok(self.module.map(&mut put))
    }

    /// The module with clones of the parameters put back (handles: no
    /// element is copied), for a forward pass while keeping the tree.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::tensor::{Device, Tensor};
    /// let d = Device::default();
    /// let tree = pytree_std::BurnModule::new(LinearConfig::new(3, 2).init(&d));
    /// let y = tree.to_module()?.forward(Tensor::<2>::ones([1, 3], &d));
    /// assert_eq!(y.dims(), [1, 2]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn to_module(&self) -> Result<M, Error> {
        self.clone().into_module()
    }

    /// The ids of the parameters, in the order of the leaves, with their
    /// paths: how a gradient of burn's (`GradientsParams`, keyed by id)
    /// finds its leaf.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::tensor::Device;
    /// let linear = LinearConfig::new(3, 2).init(&Device::default());
    /// let id = linear.bias.as_ref().unwrap().id;
    /// let tree = pytree_std::BurnModule::new(linear);
    /// assert_eq!(tree.param_ids().nth(1), Some(id));
    /// ```
    pub fn param_ids(&self) -> impl ExactSizeIterator<Item = ParamId> + '_ {
        self.slots.iter().map(|s| s.id)
    }

    /// The same module structure with other leaves (`leaves[i]` for the
    /// `i`-th parameter: a gradient, a state), each checked to have its
    /// parameter's shape: a wrong count or shape is an error naming the
    /// path.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_std::{BurnModule, BurnTensor};
    /// let d = Device::default();
    /// let tree = BurnModule::new(LinearConfig::new(3, 2).init(&d));
    /// let ones = vec![BurnTensor::new(Tensor::<2>::ones([3, 2], &d)), BurnTensor::new(Tensor::<1>::ones([2], &d))];
    /// let other = tree.with_leaves(ones)?;
    /// assert!(!pytree_std::elements::tree_equal(&other, &tree, pytree_std::elements::Tolerance::EXACT));
    /// assert!(tree.with_leaves(vec![]).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn with_leaves(&self, leaves: Vec<BurnTensor>) -> Result<Self, Error> {
        if leaves.len() != self.slots.len() {
            return Err(Error::custom(format!(
                "expected {} leaves for this burn module, found {}",
                self.slots.len(),
                leaves.len()
            )));
        }
        let def = crate::walk::structure(&self.params);
        let params: Tree<BurnTensor> = crate::walk::unflatten(&def, leaves)?;
        let out = BurnModule {
            module: self.module.clone(),
            params,
            slots: self.slots.clone(),
        };
        out.check_leaves()?;
        Ok(out)
    }

    /// burn's gradients (`GradientsParams`, from `loss.backward()`) as a
    /// tree of this module's structure, each leaf the gradient of its
    /// parameter (without autodiff). A parameter with no gradient (frozen
    /// with `set_require_grad(false)`, or unused by the loss) gets zeros,
    /// and its path is in the second value: burn's own optimizers skip
    /// such a parameter (neither it nor its state changes), a zero
    /// gradient leaves it alone under plain SGD but not under momentum,
    /// Adam or weight decay. To freeze parameters as burn does, mask them
    /// by key path (pytree-optim's `.mask(...)`: the parameters and their
    /// state are left alone). A gradient of another shape than its
    /// parameter's is an error naming the path.
    ///
    /// ```
    /// use burn::module::{Module, Param};
    /// use burn::nn::LinearConfig;
    /// use burn::optim::GradientsParams;
    /// use burn::tensor::{Device, Tensor};
    /// let device = Device::default().autodiff();
    /// let linear = LinearConfig::new(2, 1).init(&device);
    /// let loss = linear.forward(Tensor::<2>::ones([1, 2], &device)).sum();
    /// let grads = GradientsParams::from_grads(loss.backward(), &linear);
    /// let params = pytree_std::BurnModule::new(linear);
    /// let (g, missing) = params.gradients(&grads)?;
    /// assert!(missing.is_empty());
    /// assert_eq!(pytree_std::walk::leaves(&g)[0].to_data().try_to_vec::<f32>().unwrap(), [1.0, 1.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn gradients(
        &self,
        grads: &burn::optim::GradientsParams,
    ) -> Result<(Self, Vec<pytree_core::KeyPath>), Error> {
        fn get<const D: usize>(
            grads: &burn::optim::GradientsParams,
            id: ParamId,
        ) -> Option<BurnTensor> {
            grads.get::<D>(id).map(|g| BurnTensor::new(g.inner()))
        }
        let mut leaves = Vec::with_capacity(self.slots.len());
        let mut missing = Vec::new();
        for ((path, param), slot) in crate::paths::leaves_with_path(&self.params)
            .into_iter()
            .zip(self.slots.iter())
        {
            let grad = super::rank::for_rank!(slot.shape.len(), get(grads, slot.id), else None);
            match grad {
                Some(g) => leaves.push(g),
                None => {
                    leaves.push(<BurnTensor as crate::elements::FloatLeaf>::zeros_like(
                        param,
                    )?);
                    missing.push(path);
                }
            }
        }
        Ok((self.with_leaves(leaves)?, missing))
    }

    /// The names (key paths as a checkpoint names them, `encoder.0.fc.weight`)
    /// of the weights of the burn-nn `Linear` layers in the module: the
    /// 2-d parameter `weight` of a module of type `Linear`, the rule of
    /// burn-store's `PyTorchToBurnAdapter`. burn keeps such a weight as
    /// `[d_in, d_out]` (its forward is `x W + b`), PyTorch's `nn.Linear`
    /// as `[d_out, d_in]`: these are the leaves
    /// [`Load::transpose_linear`](crate::checkpoint::Load::transpose_linear)
    /// reads transposed from a PyTorch or Hugging Face file (and
    /// [`Save::transpose_linear`](crate::checkpoint::Save::transpose_linear)
    /// writes back). A struct of one's own named `Linear` counts too, as it
    /// does for burn-store: burn names a module by its type's name.
    ///
    /// ```
    /// use burn::module::Module;
    /// use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig};
    /// use burn::tensor::Device;
    ///
    /// #[derive(Module, Debug)]
    /// struct Net { emb: Embedding, layers: Vec<Linear> }
    ///
    /// let d = Device::default();
    /// let net = Net {
    ///     emb: EmbeddingConfig::new(10, 4).init(&d),
    ///     layers: vec![LinearConfig::new(4, 8).init(&d), LinearConfig::new(8, 2).init(&d)],
    /// };
    /// let tree = pytree_std::BurnModule::new(net);
    /// assert_eq!(tree.linear_weights(), ["layers.0.weight", "layers.1.weight"]);
    /// ```
    pub fn linear_weights(&self) -> Vec<String> {
        crate::paths::leaves_with_path(&self.params)
            .into_iter()
            .zip(self.slots.iter())
            .filter(|(_, slot)| slot.linear_weight)
            .map(|((path, _), _)| path.keystr(pytree_core::KeyStr::SIMPLE))
            .collect()
    }

    /// Every leaf a float tensor of its parameter's shape.
    fn check_leaves(&self) -> Result<(), Error> {
        let mut slots = self.slots.iter();
        let mut problem = None;
        crate::paths::zip_mut_with_path([], [&self.params], |path, [], [leaf]| {
            if problem.is_some() {
                return;
            }
            let Some(slot) = slots.next() else {
                problem = Some(Error::custom("more leaves than parameters").under(path));
                return;
            };
            let float = leaf.dtype().is_float();
            if leaf.shape() != slot.shape.as_slice() || !float {
                problem = Some(
                    Error::custom(format!(
                        "expected a burn parameter of shape {:?}, found {}",
                        slot.shape.as_slice(),
                        leaf.signature_without_device()
                    ))
                    .under(path),
                );
            }
        })?;
        match problem {
            Some(e) => Err(e),
            None if slots.next().is_some() => Err(Error::custom("fewer leaves than parameters")),
            None => Ok(()),
        }
    }
}

impl<M: Module> From<M> for BurnModule<M> {
    /// [`BurnModule::new`].
    fn from(module: M) -> Self {
        BurnModule::new(module)
    }
}

impl<M: Clone> Clone for BurnModule<M> {
    /// Handles of the same parameters (as `Module::clone`).
    fn clone(&self) -> Self {
        BurnModule {
            module: self.module.clone(),
            params: self.params.clone(),
            slots: self.slots.clone(),
        }
    }
}

impl<M> std::fmt::Debug for BurnModule<M> {
    /// The parameters' tree (signatures, not elements).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BurnModule").field(&self.params).finish()
    }
}

/// One module being entered: its name, container kind, and what it holds
/// so far (`None` names a parameter of the module itself).
struct Frame {
    name: String,
    /// The kind of the module that holds this one (`"Struct:Linear"` for
    /// a field of a `Linear`), as burn names it on entering.
    container: String,
    sequence: bool,
    entries: Vec<(Option<String>, Tree<BurnTensor>)>,
}

impl Frame {
    fn root() -> Frame {
        Frame {
            name: String::new(),
            container: String::new(),
            sequence: false,
            entries: Vec::new(),
        }
    }

    /// The frame's node: the parameter itself when it holds one and
    /// nothing else (a field `weight: Param<Tensor<2>>` is entered as
    /// `weight`), a sequence for `Vec`s, arrays and tuples, else a map;
    /// `None` when it holds no float parameter.
    fn into_tree(self) -> Option<Tree<BurnTensor>> {
        let mut entries = self.entries;
        if entries.is_empty() {
            return None;
        }
        if entries.len() == 1 && entries[0].0.is_none() {
            return entries.pop().map(|(_, t)| t);
        }
        if self.sequence {
            return Some(Tree::seq(entries.into_iter().map(|(_, t)| t)));
        }
        let names: Vec<String> = entries
            .iter()
            .enumerate()
            .map(|(i, (name, _))| name.clone().unwrap_or_else(|| i.to_string()))
            .collect();
        let unique = names.iter().collect::<std::collections::HashSet<_>>().len() == names.len();
        let trees = entries.into_iter().map(|(_, t)| t);
        // Names burn gives are its fields' and variants', so unique; were
        // two the same, a sequence keeps every parameter (never a leaf
        // lost, and the leaves stay in burn's order).
        Some(if unique {
            Tree::dict(names.into_iter().zip(trees))
        } else {
            Tree::seq(trees)
        })
    }
}

/// The container kind burn's derive gives a field of burn-nn's `Linear`
/// (burn-store keys its PyTorch adapter on the same name).
const LINEAR: &str = "Struct:Linear";

/// The mapper of [`BurnModule::new`].
struct TakeApart {
    frames: Vec<Frame>,
    slots: Vec<Slot>,
}

impl ModuleMapper for TakeApart {
    /// `container_type` is the kind of the module holding the one entered
    /// (`"Vec"` for an element of a `Vec`, `"Struct:Block"` for a field of
    /// `Block`): it sets the parent's node.
    fn enter_module(&mut self, name: &str, container_type: &str) {
        if let Some(parent) = self.frames.last_mut() {
            parent.sequence = matches!(container_type, "Vec" | "Array" | "Tuple");
        }
        self.frames.push(Frame {
            name: name.to_owned(),
            container: container_type.to_owned(),
            sequence: false,
            entries: Vec::new(),
        });
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        if self.frames.len() < 2 {
            return;
        }
        if let Some(frame) = self.frames.pop() {
            let name = frame.name.clone();
            if let (Some(tree), Some(parent)) = (frame.into_tree(), self.frames.last_mut()) {
                parent.entries.push((Some(name), tree));
            }
        }
    }

    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let id = param.id;
        // burn-store's rule (`PyTorchToBurnAdapter`): the 2-d parameter
        // entered as `weight` of a `Struct:Linear`.
        let linear_weight = D == 2
            && self
                .frames
                .last()
                .is_some_and(|f| f.name == "weight" && f.container == LINEAR);
        param.map(|t| {
            let device = t.device();
            self.slots.push(Slot {
                linear_weight,
                ..Slot::of(id, &t)
            });
            let leaf = BurnTensor::new(t.inner());
            if let Some(frame) = self.frames.last_mut() {
                frame.entries.push((None, Tree::leaf(leaf)));
            }
            Tensor::empty([0; D], &device)
        })
    }
}

/// The mapper of [`BurnModule::into_module`]: the leaves in order, each
/// checked before (rank and shape), so the conversions cannot fail.
struct PutBack<'s> {
    leaves: std::vec::IntoIter<BurnTensor>,
    slots: std::slice::Iter<'s, Slot>,
}

impl ModuleMapper for PutBack<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (Some(leaf), Some(slot)) = (self.leaves.next(), self.slots.next()) else {
            return param;
        };
        match leaf.into_tensor::<D>() {
            Ok(t) => param.map(|_| slot.restore(t)),
            Err(_) => param,
        }
    }
}

/// Building one from a `TreeDef` needs the module.
const NEEDS_A_MODULE: &str =
    "a BurnModule cannot be built from a TreeDef and leaves alone (a burn \
     module is made from its config and a device): build one with BurnModule::new, then map over \
     it, or load a checkpoint into it (load_into, or a template)";

impl<M: Module> Flatten<Std> for BurnModule<M> {
    type Leaf = BurnTensor;

    fn flatten_into<S: Sink<BurnTensor>>(self, sink: &mut S) {
        self.params.flatten_into(sink)
    }

    fn leaf_count_hint(&self) -> usize {
        self.slots.len()
    }

    fn visit<'a, V: Visit<LeafRef<'a, Std, BurnTensor>>>(&'a self, visitor: &mut V) {
        self.params.visit(visitor)
    }

    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Std, BurnTensor>>>(&'a mut self, visitor: &mut V) {
        self.params.visit_mut(visitor)
    }

    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        self.params.zip_check(others.map(|o| &o.params))
    }

    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(LeafMut<'a, Std, BurnTensor>, [LeafRef<'a, Std, BurnTensor>; N]),
    {
        self.params.zip_mut_prechecked(others.map(|o| &o.params), f)
    }
}

impl<M: Module> Unflatten<Std> for BurnModule<M> {
    /// An error: see [`BurnModule`] (map over one, or load into one).
    fn unflatten_from<S: Source<BurnTensor>>(_source: &mut S) -> Result<Self, Error> {
        Err(Error::new(pytree_core::ErrorKind::NeedsTemplate(
            NEEDS_A_MODULE.into(),
        )))
    }

    fn map_leaves<F: FnMut(BurnTensor) -> BurnTensor>(self, f: &mut F) -> Self {
        BurnModule {
            module: self.module,
            params: self.params.map_leaves(f),
            slots: self.slots,
        }
    }

    fn zip_with_prechecked<'a, const N: usize, F>(
        &'a self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Self
    where
        F: FnMut(LeafRef<'a, Std, BurnTensor>, [LeafRef<'a, Std, BurnTensor>; N]) -> BurnTensor,
    {
        BurnModule {
            module: self.module.clone(),
            params: self
                .params
                .zip_with_prechecked(others.map(|o| &o.params), f),
            slots: self.slots.clone(),
        }
    }
}
