//! Who holds each leaf: [`Owner`], and [`by_leaf`], the split of whole
//! leaves among the ranks by size (ZeRO by whole leaves, and which rank
//! writes which leaf of a checkpoint).

use pytree_std::Signature;

use crate::plan::wire_of;

/// Where a leaf is updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// By this rank only (a float array of at least one dimension, by
    /// [whole leaves](crate::Partition::Leaves)).
    Rank(usize),
    /// By every rank, each its own elements ([by
    /// element](crate::Partition::Elements)).
    Split,
    /// By every rank (a float scalar or 0-d array), or by none (an
    /// integer or bool leaf, which optimizers leave alone).
    Every { float: bool },
}

/// Each leaf's owner: the largest first, each to the rank holding the
/// fewest bytes so far (ties: the lower rank).
pub(crate) fn by_leaf(signatures: &[Signature], emptiable: &[bool], ranks: usize) -> Vec<Owner> {
    let bytes = |s: &Signature| s.size_in_bytes().unwrap_or(0);
    let mut owners: Vec<Owner> = signatures
        .iter()
        .map(|s| Owner::Every {
            float: wire_of(s.dtype()).is_some(),
        })
        .collect();
    let mut order: Vec<usize> = (0..signatures.len()).filter(|&i| emptiable[i]).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(bytes(&signatures[i])));
    let mut load = vec![0usize; ranks];
    for i in order {
        let r = (0..ranks).min_by_key(|&r| (load[r], r)).unwrap_or(0);
        load[r] += bytes(&signatures[i]);
        owners[i] = Owner::Rank(r);
    }
    owners
}
