//! [`Op`]: what a collective is for, as a value: the ranks hash it to
//! agree that they call the same operation ([`agree`](crate::agree)), the
//! plan cache keys on it ([`plans`](crate::plans)), and messages
//! (mismatches, timeouts) print it.

use std::fmt;

/// One operation of pytree-dist on a tree, with the options that change
/// what travels (a root, a mask). The bucket sizes are not part of it:
/// [`Sizes`](crate::Sizes) is agreed beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    /// [`Dist::all_reduce_sum`](crate::Dist::all_reduce_sum) (`mean`:
    /// `all_reduce_mean`), masked or not.
    AllReduce { mean: bool, masked: bool },
    /// [`Dist::reduce_mean`](crate::Dist::reduce_mean) to `root`.
    ReduceMean { root: usize },
    /// [`Dist::broadcast`](crate::Dist::broadcast) from `root`.
    Broadcast { root: usize },
    /// [`Dist::check_replicated`](crate::Dist::check_replicated).
    CheckReplicated,
    /// `checkpoint::save`.
    #[cfg(feature = "checkpoint")]
    CheckpointSave,
    /// [`Zero1::new`](crate::Zero1::new), split by element or by whole
    /// leaves ([`Partition`](crate::Partition)).
    ZeroNew { by_element: bool },
    /// A ZeRO step by whole leaves: the gradients all-reduced.
    ZeroAllReduce,
    /// A ZeRO step by element: the gradients reduce-scattered.
    ZeroReduceScatter,
    /// A ZeRO step by element: the float scalars' gradients all-reduced.
    ZeroScalars,
    /// A ZeRO step: the parameters all-gathered (by element) or each
    /// leaf broadcast from its owner (by whole leaves).
    ZeroAllGather,
    /// `Zero1::save_state`.
    #[cfg(feature = "checkpoint")]
    ZeroSaveState,
    /// [`run`](crate::run) telling the other ranks this one leaves.
    Leave,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Op::AllReduce { mean, masked } => write!(
                f,
                "all_reduce_{}{}",
                if mean { "mean" } else { "sum" },
                if masked { ", masked" } else { "" }
            ),
            Op::ReduceMean { root } => write!(f, "reduce_mean to rank {root}"),
            Op::Broadcast { root } => write!(f, "broadcast from rank {root}"),
            Op::CheckReplicated => f.write_str("check_replicated"),
            #[cfg(feature = "checkpoint")]
            Op::CheckpointSave => f.write_str("checkpoint save"),
            Op::ZeroNew { by_element } => write!(
                f,
                "zero1 new ({})",
                if by_element { "Elements" } else { "Leaves" }
            ),
            Op::ZeroAllReduce => f.write_str("zero1 all-reduce of the gradients"),
            Op::ZeroReduceScatter => f.write_str("zero1 reduce-scatter of the gradients"),
            Op::ZeroScalars => f.write_str("zero1 all-reduce of the scalar gradients"),
            Op::ZeroAllGather => f.write_str("zero1 all-gather of the parameters"),
            #[cfg(feature = "checkpoint")]
            Op::ZeroSaveState => f.write_str("zero1 save_state"),
            Op::Leave => f.write_str("leaving run"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_operation_as_the_user_called_it() {
        let shown = |op: Op| op.to_string();
        assert_eq!(
            shown(Op::AllReduce {
                mean: true,
                masked: true
            }),
            "all_reduce_mean, masked"
        );
        assert_eq!(
            shown(Op::AllReduce {
                mean: false,
                masked: false
            }),
            "all_reduce_sum"
        );
        assert_eq!(shown(Op::Broadcast { root: 2 }), "broadcast from rank 2");
        assert_eq!(
            shown(Op::ZeroNew { by_element: false }),
            "zero1 new (Leaves)"
        );
    }
}
