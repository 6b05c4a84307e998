//! [`Context`]: what a transformation runs under, passed down as a value
//! by the wrappers: the leaves it acts on (the masks of the enclosing
//! [`masked`](crate::masked), [`Wrap::mask`](crate::Wrap::mask) and
//! [`multi_transform`](crate::multi_transform) groups), how its element
//! loops run ([`Wrap::exec`](crate::Wrap::exec)) and the reduction that
//! completes per-leaf sums held by several processes (a sharded
//! optimizer's global norm).
//!
//! And the walks every transformation is written with, which run under
//! it: [`walk`] (one pass over several trees, an [`ElementUpdate`] on the
//! leaves a [`Context`] selects, its loops run as it says), the sum of
//! squares of a norm, trees of zeros and copies.

use std::fmt;

use pytree_std::elements::{ElementUpdate, Exec, FloatLeaf};
use pytree_std::{Error, Flatten, PyTree, Std};

use crate::mask::LeafMask;

/// A reduction of per-leaf partial sums, in place: see
/// [`Context::leaf_sums`].
pub type LeafSums<'a> = dyn Fn(&mut [f64]) -> Result<(), Error> + 'a;

/// What a transformation runs under: the selected leaves, the [`Exec`]
/// mode of its element loops and the reduction of per-leaf sums across
/// processes. A value, passed down by the wrappers
/// ([`Fused::update_in`](crate::Fused::update_in) takes it), never kept on a
/// thread: a transformation run inside a rayon task or a thread of its own
/// behaves as on the caller's thread. [`update_in`](crate::update_in) and
/// [`step_in`](crate::step_in) run any transformation under one;
/// `Context::default()` selects every leaf, runs sequentially and reduces
/// nothing (what `update` and `step` use).
///
/// ```
/// use pytree_optim::{adam, step_in, Context, Exec, GradientTransformation, Mask};
/// use pytree_std::KeyPath;
///
/// let mut params = vec![1.0f32, 1.0];
/// let only_first = Mask::new(|p: &KeyPath| p.to_string() == "[0]").on(&params);
/// let cx = Context::default().exec(Exec::Sequential).select(&only_first);
/// let opt = adam(0.1);
/// let mut state = opt.init(&params)?;
/// step_in(&opt, &cx, &mut params, &mut vec![1.0, 1.0], &mut state)?;
/// assert_eq!(params, [0.9, 1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct Context<'a> {
    selection: Option<LeafMask>,
    exec: Exec,
    leaf_sums: Option<&'a LeafSums<'a>>,
}

impl fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("selection", &self.selection)
            .field("exec", &self.exec)
            .field("leaf_sums", &self.leaf_sums.is_some())
            .finish()
    }
}

impl<'a> Context<'a> {
    /// This context with the element loops running as `exec` says.
    ///
    /// ```
    /// use pytree_optim::{Context, Exec};
    /// assert_eq!(Context::default().exec(Exec::Sequential).exec_mode(), Exec::Sequential);
    /// ```
    pub fn exec(mut self, exec: Exec) -> Self {
        self.exec = exec;
        self
    }

    /// This context with `reduce` completing the per-leaf sums of every
    /// global reduction over the leaves (the squared norm of
    /// [`clip_by_global_norm`](crate::clip_by_global_norm),
    /// [`global_norm_in`](crate::global_norm_in)): such a reduction
    /// computes each leaf's sum (of squares, for a norm) as usual, then
    /// calls `reduce` with the sums in leaf order (0 for leaves outside
    /// the selection), then adds them up in leaf order. A sharded
    /// optimizer (pytree-dist's ZeRO-1) makes `reduce` an all-reduce in
    /// which each leaf's owner contributes its sum and the others 0, so
    /// that every process gets exactly the sums, and the norm, of the
    /// unsharded tree: the same bits, the additions being in the same
    /// order.
    ///
    /// Only the reductions that are given the context call `reduce`: this
    /// crate's, and [`global_norm_in`](crate::global_norm_in) in a
    /// transformation written elsewhere that implements
    /// [`Fused`](crate::Fused) (which receives the context). A
    /// transformation without it, or that sums the leaves with a loop of
    /// its own, sums the leaves this process holds only: under a sharded
    /// optimizer its norm is its shard's, not the tree's.
    ///
    /// ```
    /// use pytree_optim::{global_norm_in, Context};
    /// // Another process holds a leaf with a sum of squares of 9 at index 1.
    /// let other = |sums: &mut [f64]| { sums[1] += 9.0; Ok(()) };
    /// let cx = Context::default().leaf_sums(&other);
    /// assert_eq!(global_norm_in(&cx, &vec![4.0f32, 0.0])?, 5.0);
    /// assert_eq!(global_norm_in(&Context::default(), &vec![4.0f32, 0.0])?, 4.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn leaf_sums(mut self, reduce: &'a LeafSums<'a>) -> Self {
        self.leaf_sums = Some(reduce);
        self
    }

    /// This context narrowed to the leaves where `mask` holds too (the
    /// masks AND together; every leaf selected before, `mask`).
    ///
    /// ```
    /// use pytree_optim::{Context, LeafMask, Mask};
    /// use pytree_std::KeyPath;
    /// let tree = vec![0.0f32; 3];
    /// let not_first = Mask::new(|p: &KeyPath| p.to_string() != "[0]").on(&tree);
    /// let not_last = Mask::new(|p: &KeyPath| p.to_string() != "[2]").on(&tree);
    /// let cx = Context::default().select(&not_first).select(&not_last);
    /// let m: &LeafMask = cx.selection().unwrap();
    /// assert_eq!((m.get(0), m.get(1), m.get(2)), (false, true, false));
    /// ```
    pub fn select(&self, mask: &LeafMask) -> Context<'a> {
        let selection = match &self.selection {
            None => mask.clone(),
            Some(outer) => outer.and(mask),
        };
        self.only(selection)
    }

    /// This context with exactly `mask` selected (the enclosing selection
    /// ignored, and not cloned only to be dropped).
    pub(crate) fn only(&self, mask: LeafMask) -> Context<'a> {
        Context {
            selection: Some(mask),
            exec: self.exec,
            leaf_sums: self.leaf_sums,
        }
    }

    /// The selected leaves (`None`: every leaf).
    ///
    /// ```
    /// assert!(pytree_optim::Context::default().selection().is_none());
    /// ```
    pub fn selection(&self) -> Option<&LeafMask> {
        self.selection.as_ref()
    }

    /// How the element loops run.
    ///
    /// ```
    /// use pytree_optim::{Context, Exec};
    /// assert_eq!(Context::default().exec_mode(), Exec::Sequential);
    /// ```
    pub fn exec_mode(&self) -> Exec {
        self.exec
    }

    /// Whether a reduction of per-leaf sums is set ([`Context::leaf_sums`]).
    ///
    /// ```
    /// use pytree_optim::Context;
    /// let none = |_: &mut [f64]| Ok(());
    /// assert!(Context::default().leaf_sums(&none).reduces_leaf_sums());
    /// assert!(!Context::default().reduces_leaf_sums());
    /// ```
    pub fn reduces_leaf_sums(&self) -> bool {
        self.leaf_sums.is_some()
    }

    /// Applies the reduction of per-leaf sums (if any) to `sums`, in leaf
    /// order ([`Context::leaf_sums`]).
    ///
    /// ```
    /// use pytree_optim::Context;
    /// let double = |s: &mut [f64]| { s.iter_mut().for_each(|x| *x *= 2.0); Ok(()) };
    /// let mut sums = [1.0, 2.0];
    /// Context::default().leaf_sums(&double).reduce_leaf_sums(&mut sums)?;
    /// assert_eq!(sums, [2.0, 4.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn reduce_leaf_sums(&self, sums: &mut [f64]) -> Result<(), Error> {
        match self.leaf_sums {
            Some(reduce) => reduce(sums),
            None => Ok(()),
        }
    }
}

/// The element type a tree of leaves `P::Leaf` computes in.
pub(crate) type Scalar<P> = <<P as Flatten<Std>>::Leaf as FloatLeaf>::Scalar;

/// The leaves of `tree` that `cx` selects: the enclosing wrappers'
/// masks (checked against `tree`), or every leaf; either way without the
/// leaves that share memory with an earlier one ([`first_occurrences`]),
/// so that a tied variable is updated once.
pub(crate) fn selected<P>(cx: &Context<'_>, tree: &P) -> Result<LeafMask, Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    let mask = match cx.selection() {
        Some(m) => {
            m.ensure_fits(tree)?;
            m.clone()
        }
        None => crate::mask::Mask::all().on(tree),
    };
    Ok(first_occurrences(mask, tree))
}

/// `mask` without the leaves that share memory with an earlier leaf of
/// `params` (a candle variable held by two fields).
pub(crate) fn first_occurrences<P>(mask: LeafMask, params: &P) -> LeafMask
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    if !<P::Leaf as FloatLeaf>::MAY_SHARE_MEMORY {
        return mask;
    }
    let leaves = pytree_std::leaves(params);
    let tied: Vec<bool> = (0..leaves.len())
        .map(|i| {
            leaves[..i]
                .iter()
                .any(|e| <P::Leaf as FloatLeaf>::shares_memory(e.clone(), leaves[i].clone()))
        })
        .collect();
    if !tied.contains(&true) {
        return mask;
    }
    mask.map_bits(|i| mask.get(i) && !tied.get(i).copied().unwrap_or(false))
}

/// Walks `N` mutable and `M` shared trees in one pass (structures and leaf
/// shapes checked first: on a mismatch nothing changes), running `update`
/// on the leaves `cx` selects ([`selected`]).
pub(crate) fn walk<P, const N: usize, const M: usize, U>(
    cx: &Context<'_>,
    muts: [&mut P; N],
    refs: [&P; M],
    update: &U,
) -> Result<(), Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
    U: ElementUpdate<Scalar<P>, N, M>,
{
    let Some(first) = muts.first().map(|t| &**t).or(refs.first().copied()) else {
        return Ok(());
    };
    let mask = selected(cx, first)?;
    walk_leaves(cx, muts, refs, |i, ms, rs, exec| {
        if mask.get(i) {
            P::Leaf::zip_update(ms, rs, exec, update)
        } else {
            Ok(())
        }
    })
}

/// Calls `leaf(index, written leaves, read leaves, exec)` on the leaves of
/// `N` mutable and `M` shared trees (structures and leaf shapes checked
/// first), `exec` being `cx`'s; an error names the leaf's path.
pub(crate) fn walk_leaves<P, const N: usize, const M: usize>(
    cx: &Context<'_>,
    muts: [&mut P; N],
    refs: [&P; M],
    mut leaf: impl FnMut(
        usize,
        [pytree_std::LeafMut<'_, Std, P::Leaf>; N],
        [pytree_std::LeafRef<'_, Std, P::Leaf>; M],
        Exec,
    ) -> Result<(), Error>,
) -> Result<(), Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    let exec = cx.exec_mode();
    let mut i = 0;
    pytree_std::walk::zip_mut(muts, refs, |ms, rs| {
        let r = leaf(i, ms, rs, exec);
        i += 1;
        r.map_err(|e| e.kind().to_string())
    })
}

/// Checks that `tree` has the structure and leaf shapes of `params` (the
/// error names `tree` as tree 1, the parameters being tree 0).
pub(crate) fn same_shape<P>(params: &P, tree: &P) -> Result<(), Error>
where
    P: Flatten<Std>,
{
    pytree_std::walk::zip_mut::<P, 0, 2, Result<(), core::convert::Infallible>>(
        [],
        [params, tree],
        |_, _| Ok(()),
    )
}

/// The sum of squares of the elements of `tree`'s selected leaves, in
/// `f64`; `tree` is checked against `params` (structure and leaf shapes)
/// first, and named as tree 1 in the error. With a reduction of leaf
/// sums in `cx` ([`Context::leaf_sums`]), each leaf's sum is completed by
/// it, then the sums are added up in leaf order.
pub(crate) fn sum_squares<P>(
    cx: &Context<'_>,
    params: &P,
    tree: &P,
    mask: &LeafMask,
) -> Result<f64, Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    let exec = cx.exec_mode();
    let sq = |v: Scalar<P>| {
        let v = pytree_std::elements::Float::to_f64(v);
        v * v
    };
    let mut sums = Vec::with_capacity(mask.len());
    let mut i = 0;
    pytree_std::walk::zip_mut::<P, 0, 2, Result<(), String>>([], [params, tree], |[], [_, x]| {
        sums.push(if mask.get(i) {
            P::Leaf::sum_elements(x, exec, &sq).map_err(|e| e.kind().to_string())?
        } else {
            0.0
        });
        i += 1;
        Ok(())
    })?;
    cx.reduce_leaf_sums(&mut sums)?;
    Ok(sums.iter().fold(0.0f64, |total, s| total + s))
}

/// A tree of `params`' structure with every leaf zero (same shapes).
pub(crate) fn zeros<P>(params: &P) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    pytree_std::walk::map_n(params, [], |x, []| {
        P::Leaf::zeros_like(x).map_err(|e| e.kind().to_string())
    })
}

/// A copy of `tree` whose leaves share no memory with it (`Clone`, then
/// [`FloatLeaf::unshare`] where leaves may share memory): writing the copy
/// in place leaves `tree` as it was.
pub(crate) fn copy_tree<P>(tree: &P) -> Result<P, Error>
where
    P: Flatten<Std> + Clone,
    P::Leaf: FloatLeaf,
{
    let mut copy = tree.clone();
    if <P::Leaf as FloatLeaf>::MAY_SHARE_MEMORY {
        pytree_std::walk::for_each_mut(&mut copy, |leaf| {
            P::Leaf::unshare(leaf).map_err(|e| e.kind().to_string())
        })?;
    }
    Ok(copy)
}
