//! Which parameter each state leaf follows: split by element, a state
//! leaf that follows a parameter element by element (Adam's `mu` of
//! `layers.0.w`: its key path ends with the parameter's, and its shape is
//! that of this rank's shard of it) is that parameter's elements here;
//! every other state leaf (a step count, the state of a scalar parameter)
//! is the same on every rank. [`Zero1::new`] checks it (a state that
//! follows no parameter element by element cannot be split by element),
//! and the state's checkpoints use it.

use pytree_optim::{FloatLeaf, GradientTransformation};
use pytree_std::KeyPath;
use pytree_std::{ByteLeaf, Error, Flatten, PyTree, Signature, Std};

use super::layout::shard_shape;
use super::{Owner, Zero1};

/// What a state leaf follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Follows {
    /// Parameter leaf `i`, split by element, element by element.
    Param(usize),
    /// Nothing split: the same on every rank (or, by whole leaves, held
    /// by its parameter's owner).
    Whole,
}

pub(crate) type StateLeaf<G, P> = <<G as GradientTransformation<P>>::State as Flatten<Std>>::Leaf;

impl<G, P> Zero1<'_, G, P>
where
    G: GradientTransformation<P>,
    G::State: PyTree,
    StateLeaf<G, P>: ByteLeaf,
    P: PyTree,
    P::Leaf: FloatLeaf + ByteLeaf,
{
    /// The shape of this rank's shard of leaf `i`.
    pub(crate) fn shard_signature(&self, i: usize) -> Signature {
        let sig = &self.signatures[i];
        match &self.split {
            Some(split) if self.owners[i] == Owner::Split => {
                let n = split.ranges[i].len();
                if n == sig.num_elements() {
                    sig.clone()
                } else {
                    Signature::new(sig.dtype(), shard_shape(n, sig.shape()))
                }
            }
            _ => sig.clone(),
        }
    }

    /// By state leaf, what it follows: split by element, the split
    /// parameter whose key path ends its own (the longest such) and whose
    /// shard has its shape; else nothing, which only a scalar or a
    /// non-float state leaf may do. An error names a state leaf that
    /// follows no parameter element by element (a factored moment).
    pub(crate) fn state_leaves(&self) -> Result<Vec<Follows>, Error> {
        if self.split.is_none() {
            return Ok(vec![Follows::Whole; pytree_std::leaves(&self.state).len()]);
        }
        let params: Vec<(usize, KeyPath, Signature)> = (0..self.signatures.len())
            .filter(|&i| self.owners[i] == Owner::Split)
            .filter_map(|i| Some((i, self.def.leaf_path(i)?, self.shard_signature(i))))
            .collect();
        pytree_std::paths::leaves_with_path(&self.state)
            .into_iter()
            .map(|(path, leaf)| {
                let sig = <StateLeaf<G, P> as ByteLeaf>::signature(&leaf)?;
                let found = params
                    .iter()
                    .filter(|(_, p, s)| {
                        s.shape() == sig.shape() && path.entries().ends_with(p.entries())
                    })
                    .max_by_key(|(_, p, _)| p.len());
                match found {
                    Some((i, _, _)) => Ok(Follows::Param(*i)),
                    None if sig.shape().is_empty()
                        || crate::plan::wire_of(sig.dtype()).is_none() =>
                    {
                        Ok(Follows::Whole)
                    }
                    None => Err(Error::custom(format!(
                        "zero1: the state leaf at {path} ({sig}) follows no parameter element by \
                         element, so it cannot be split by element; split by whole leaves \
                         (`Zero1::with_partition(.., Partition::Leaves)`)"
                    ))),
                }
            })
            .collect()
    }
}
