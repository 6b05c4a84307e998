//! Parameter groups (optax's `multi_transform` and `set_to_zero`, torch's
//! param groups): a label per leaf from its key path (and kind), a
//! transformation per label, each with its own state; and frozen groups.

use std::sync::Arc;

use pytree_std::{Error, KeyPath, PyTree};

use crate::context::{copy_tree, walk, Context};
use crate::gradient_transformation::{update_through_fused, Fused, GradientTransformation};
use crate::mask::Mask;
use crate::wrappers::{Masked, Wrap};
use pytree_std::elements::FloatLeaf;

/// The labeller of a [`multi_transform`].
type Labeller = Arc<dyn Fn(&KeyPath) -> &'static str + Send + Sync>;

/// Parameter groups (optax's `multi_transform`): `label` names the group
/// of each leaf from its key path (and [`kind`](KeyPath::kind)), and
/// [`group`](MultiTransform::group) gives each label its transformation,
/// which acts on that group's leaves only, with its own state (a global
/// norm, say, is the group's). Every leaf must have a group: a label
/// without one is an error of `init` naming the leaf. Typical groups: no
/// weight decay on biases and norms, a smaller learning rate for the
/// embeddings, a frozen encoder ([`set_to_zero`](crate::transform::set_to_zero)).
///
/// The state is the tuple of the groups' states, in the order they were
/// added (a pytree, so a checkpoint holds it: `0.mu.<path>`, ...); the
/// first group's state alone when there is one.
///
/// `step` is one pass over the elements when every group's
/// transformation is a fused optimizer (`sgd`, `adam`, `adamw`,
/// [`set_to_zero`](crate::transform::set_to_zero); see
/// [`Fused::step_is_fused`]): the groups
/// step one after the other, each on its own leaves. Otherwise, and in
/// `update`, each group but one updates a copy of the gradients, and the
/// results are gathered by label.
///
/// A group's transformation may be one written elsewhere, with its own
/// loop over the leaves: it is wrapped as with [`Wrap::mask`], which
/// hands it zeros as the updates outside the group (a norm it computes is
/// the group's, as in optax) and keeps the group's updates only; its
/// state holds entries for every leaf (see [`masked`](crate::masked)).
///
/// ```
/// use pytree_optim::{adam, adamw, multi_transform, set_to_zero, GradientTransformation};
/// use pytree_std::{KeyPath, PyTree};
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// struct Model { embed: Vec<f32>, w: Vec<f32>, b: Vec<f32>, encoder: Vec<f32> }
///
/// let opt = multi_transform(|p: &KeyPath| match p.to_string().as_str() {
///         s if s.starts_with(".embed") => "embed",
///         s if s.starts_with(".encoder") => "frozen",
///         s if s.starts_with(".b") => "no_decay",
///         _ => "decay",
///     })
///     .group("embed", adam(1e-3))
///     .group("decay", adamw(1e-2, 0.1))
///     .group("no_decay", adam(1e-2))
///     .group("frozen", set_to_zero());
/// let mut model = Model { embed: vec![1.0], w: vec![1.0], b: vec![1.0], encoder: vec![1.0] };
/// let mut state = opt.init(&model)?;
/// let mut g = Model { embed: vec![1.0], w: vec![1.0], b: vec![1.0], encoder: vec![1.0] };
/// opt.step(&mut model, &mut g, &mut state)?;
/// assert!((model.embed[0] - (1.0 - 1e-3)).abs() < 1e-6);
/// assert!((model.w[0] - (1.0 - 1e-2 * (1.0 + 0.1))).abs() < 1e-6);
/// assert!((model.b[0] - (1.0 - 1e-2)).abs() < 1e-6);
/// assert_eq!(model.encoder, [1.0]);
///
/// let unlabelled = multi_transform(|_: &KeyPath| "other").group("decay", adam(0.1));
/// assert_eq!(unlabelled.init(&model).unwrap_err().to_string(),
///     "at .embed[0]: multi_transform: the label `other` has no group (the groups are `decay`)");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn multi_transform(
    label: impl Fn(&KeyPath) -> &'static str + Send + Sync + 'static,
) -> MultiTransform<()> {
    MultiTransform {
        label: Arc::new(label),
        groups: (),
    }
}

/// See [`multi_transform`]; `G` is the list of groups ([`Group`], then
/// pairs `(earlier, Group)`).
///
/// ```
/// use pytree_optim::{multi_transform, sgd};
/// let opt = multi_transform(|_| "all").group("all", sgd(0.1));
/// assert_eq!(opt.labels(), ["all"]);
/// ```
#[derive(Clone)]
pub struct MultiTransform<G> {
    label: Labeller,
    groups: G,
}

impl<G> std::fmt::Debug for MultiTransform<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiTransform").finish_non_exhaustive()
    }
}

/// One group of a [`multi_transform`]: its label and its transformation,
/// narrowed to the label's leaves ([`Wrap::mask`]: the other leaves do not
/// change).
///
/// ```
/// use pytree_optim::{multi_transform, sgd};
/// let opt = multi_transform(|_| "all").group("all", sgd(0.1));
/// assert_eq!(opt.labels().len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Group<T> {
    label: &'static str,
    where_: Mask,
    transform: Masked<T>,
}

impl MultiTransform<()> {
    /// The first group: leaves labelled `label` are transformed by
    /// `transform`.
    ///
    /// ```
    /// use pytree_optim::{multi_transform, sgd, GradientTransformation};
    /// let opt = multi_transform(|_| "all").group("all", sgd(0.5));
    /// let mut p = vec![1.0f64];
    /// let mut s = opt.init(&p)?;
    /// opt.step(&mut p, &mut vec![1.0], &mut s)?;
    /// assert_eq!(p, [0.5]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn group<T>(self, label: &'static str, transform: T) -> MultiTransform<Group<T>> {
        MultiTransform {
            groups: self.group_of(label, transform),
            label: self.label,
        }
    }
}

impl<G> MultiTransform<G> {
    fn group_of<T>(&self, label: &'static str, transform: T) -> Group<T> {
        let f = Arc::clone(&self.label);
        let where_ = Mask::new(move |p: &KeyPath| f(p) == label);
        Group {
            label,
            transform: transform.mask(where_.clone()),
            where_,
        }
    }

    /// The labels of the groups, in order.
    ///
    /// ```
    /// use pytree_optim::{adam, multi_transform, set_to_zero};
    /// let opt = multi_transform(|_| "a").group("a", adam(0.1)).group("b", set_to_zero());
    /// assert_eq!(opt.labels(), ["a", "b"]);
    /// ```
    pub fn labels(&self) -> Vec<&'static str>
    where
        G: Groups,
    {
        let mut out = Vec::new();
        self.groups.labels(&mut out);
        out
    }
}

impl<G: Groups> MultiTransform<G> {
    /// Another group: leaves labelled `label` are transformed by
    /// `transform`.
    ///
    /// ```
    /// use pytree_optim::{multi_transform, set_to_zero, sgd, GradientTransformation};
    /// use pytree_std::KeyPath;
    /// let opt = multi_transform(|p: &KeyPath| if p.to_string() == "[0]" { "train" } else { "frozen" })
    ///     .group("train", sgd(0.5))
    ///     .group("frozen", set_to_zero());
    /// let mut p = vec![1.0f64, 1.0];
    /// let mut s = opt.init(&p)?;
    /// opt.step(&mut p, &mut vec![1.0, 1.0], &mut s)?;
    /// assert_eq!(p, [0.5, 1.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn group<T>(self, label: &'static str, transform: T) -> MultiTransform<(G, Group<T>)> {
        let last = self.group_of(label, transform);
        MultiTransform {
            groups: (self.groups, last),
            label: self.label,
        }
    }
}

/// The state of one group of a [`multi_transform`]: its transformation's,
/// with the group's leaves ([`MaskedState`](crate::MaskedState)).
pub type GroupState<P, T> = <Masked<T> as GradientTransformation<P>>::State;

/// The labels of a list of groups (the bound of
/// [`MultiTransform::labels`]); the running of them is
/// [`GroupList`].
///
/// ```
/// use pytree_optim::{multi_transform, sgd, Groups};
/// let opt = multi_transform(|_| "a").group("a", sgd(0.1));
/// assert_eq!(opt.labels(), ["a"]);
/// ```
pub trait Groups {
    /// Appends the labels, in order.
    fn labels(&self, out: &mut Vec<&'static str>);
}

impl<T> Groups for Group<T> {
    fn labels(&self, out: &mut Vec<&'static str>) {
        out.push(self.label);
    }
}

impl<G: Groups, T> Groups for (G, Group<T>) {
    fn labels(&self, out: &mut Vec<&'static str>) {
        self.0.labels(out);
        out.push(self.1.label);
    }
}

/// How [`MultiTransform`] runs its list of groups (implemented for one
/// [`Group`] and for pairs `(earlier groups, Group)`): each method is each
/// group's, in turn.
///
/// ```
/// use pytree_optim::{adam, multi_transform, GradientTransformation};
/// let opt = multi_transform(|_| "a").group("a", adam(0.1));
/// let s = opt.init(&vec![1.0f32])?;      // the group's own state
/// assert_eq!(s.inner.0.count, 0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait GroupList<P>: Groups {
    /// The states of the groups.
    type State;
    /// Each group's `init`.
    fn init_each(&self, params: &P) -> Result<Self::State, Error>;
    /// Each group's `validate`.
    fn validate_each(&self, updates: &P, s: &Self::State, params: &P) -> Result<(), Error>;
    /// Whether every group's `step` is fused ([`Fused::step_is_fused`]).
    fn all_fused(&self) -> bool;
    /// Each group's `step` under `cx`, one after the other (all fused).
    fn step_each(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        s: &mut Self::State,
    ) -> Result<(), Error>;
    /// Each group's `update` under `cx`: the last group's on `updates` in place if
    /// `last_in_place`; every other group's on a copy of `original` (the
    /// gradients), whose leaves in the group are then copied into
    /// `updates`.
    fn update_each(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        original: &P,
        s: &mut Self::State,
        params: &P,
        last_in_place: bool,
    ) -> Result<(), Error>;
}

impl<P, T> GroupList<P> for Group<T>
where
    P: PyTree + Clone,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    type State = GroupState<P, T>;

    fn init_each(&self, params: &P) -> Result<Self::State, Error> {
        self.transform.init(params)
    }

    fn validate_each(&self, updates: &P, s: &Self::State, params: &P) -> Result<(), Error> {
        Fused::validate(&self.transform, updates, s, params)
    }

    fn all_fused(&self) -> bool {
        Fused::<P, _>::step_is_fused(&self.transform)
    }

    fn step_each(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        s: &mut Self::State,
    ) -> Result<(), Error> {
        Fused::step_in(&self.transform, cx, params, grads, s)
    }

    fn update_each(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        original: &P,
        s: &mut Self::State,
        params: &P,
        in_place: bool,
    ) -> Result<(), Error> {
        if in_place {
            return Fused::update_in(&self.transform, cx, updates, s, params);
        }
        let mut mine = copy_tree(original)?;
        Fused::update_in(&self.transform, cx, &mut mine, s, params)?;
        let group = cx.select(&self.where_.on(params));
        walk(&group, [updates], [&mine], &crate::rules::Assign)
    }
}

impl<P, G, T> GroupList<P> for (G, Group<T>)
where
    P: PyTree + Clone,
    P::Leaf: FloatLeaf,
    G: GroupList<P>,
    T: GradientTransformation<P>,
{
    type State = (G::State, GroupState<P, T>);

    fn init_each(&self, params: &P) -> Result<Self::State, Error> {
        Ok((self.0.init_each(params)?, self.1.init_each(params)?))
    }

    fn validate_each(&self, updates: &P, s: &Self::State, params: &P) -> Result<(), Error> {
        self.0.validate_each(updates, &s.0, params)?;
        self.1.validate_each(updates, &s.1, params)
    }

    fn all_fused(&self) -> bool {
        self.0.all_fused() && self.1.all_fused()
    }

    fn step_each(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        s: &mut Self::State,
    ) -> Result<(), Error> {
        self.0.step_each(cx, params, grads, &mut s.0)?;
        self.1.step_each(cx, params, grads, &mut s.1)
    }

    fn update_each(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        original: &P,
        s: &mut Self::State,
        params: &P,
        last_in_place: bool,
    ) -> Result<(), Error> {
        // The last group first (in place, outside its leaves it may zero
        // the updates), then the others from copies, over their leaves.
        self.1
            .update_each(cx, updates, original, &mut s.1, params, last_in_place)?;
        self.0
            .update_each(cx, updates, original, &mut s.0, params, false)
    }
}

impl<G: Groups> MultiTransform<G> {
    /// An error naming the first leaf whose label has no group.
    fn ensure_labels_have_groups<P: PyTree>(&self, params: &P) -> Result<(), Error> {
        let labels = self.labels();
        let mut missing = None;
        pytree_std::paths::for_each_with_path(params, |path, _| {
            let l = (self.label)(path);
            if missing.is_none() && !labels.contains(&l) {
                missing = Some((path.clone(), l));
            }
        });
        match missing {
            None => Ok(()),
            Some((path, l)) => Err(Error::custom(format!(
                "multi_transform: the label `{l}` has no group (the groups are `{}`)",
                labels.join("`, `")
            ))
            .under(&path)),
        }
    }
}

impl<P, G> GradientTransformation<P> for MultiTransform<G>
where
    P: PyTree + Clone,
    P::Leaf: FloatLeaf,
    G: GroupList<P>,
{
    type State = G::State;

    fn init(&self, params: &P) -> Result<G::State, Error> {
        self.ensure_labels_have_groups(params)?;
        self.groups.init_each(params)
    }

    update_through_fused!();
}

impl<P, G> Fused<P, G::State> for MultiTransform<G>
where
    P: PyTree + Clone,
    P::Leaf: FloatLeaf,
    G: GroupList<P>,
{
    fn validate(&self, updates: &P, state: &G::State, params: &P) -> Result<(), Error> {
        self.groups.validate_each(updates, state, params)
    }

    fn step_is_fused(&self) -> bool {
        self.groups.all_fused()
    }

    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        state: &mut G::State,
        params: &P,
    ) -> Result<(), Error> {
        self.groups.validate_each(updates, state, params)?;
        let original = copy_tree(&*updates)?;
        self.groups
            .update_each(cx, updates, &original, state, params, true)
    }

    fn step_in(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        state: &mut G::State,
    ) -> Result<(), Error> {
        self.groups.validate_each(grads, state, params)?;
        if self.groups.all_fused() {
            self.groups.step_each(cx, params, grads, state)
        } else {
            let original = copy_tree(&*grads)?;
            self.groups
                .update_each(cx, grads, &original, state, params, true)?;
            walk(cx, [params], [&*grads], &crate::rules::AddTo)
        }
    }
}
