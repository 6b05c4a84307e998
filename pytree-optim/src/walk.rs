//! The walks every transformation is written with: [`walk`] (one pass
//! over several trees, an [`ElementUpdate`] on the leaves a [`Context`]
//! selects, its loops run as it says), the sum of squares of a norm, trees
//! of zeros and copies.

use pytree_std::{Error, Flatten, PyTree, Std};

use crate::context::Context;
use crate::mask::LeafMask;
use pytree_std::elements::ElementUpdate;
use pytree_std::elements::Exec;
use pytree_std::elements::FloatLeaf;

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
