//! Every rank checked to hold the same tree before a collective on it,
//! and [`Op`], what the collective is for, as a value: the ranks hash it
//! with the tree, the plan cache keys on it ([`Dist`](crate::Dist)'s
//! plans), and messages (mismatches, timeouts) print it.
//!
//! Each rank hashes what it is about to do (the operation, the tree's
//! TreeDef with its static data, each leaf's signature and whether it is
//! sent) and the hashes are all-gathered: 24 bytes per rank, one small
//! collective per call. When they differ (or a rank failed before the
//! collective), every rank all-gathers a description of its tree (key
//! paths, signatures, the TreeDef) and computes the same [`Error`], which
//! names the ranks and the first key path where they differ. No bucket is
//! sent then: never a hang in mismatched collectives, never a sum of
//! different leaves.

use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use pytree_std::ByteLeaf;
use pytree_std::{Error, Flatten, KeyPath, Std, TreeDef};
use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::message::gather;
use crate::sizes::Sizes;

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

/// What one rank is about to do with one tree.
pub(crate) struct Intent {
    /// The operation.
    pub op: Op,
    /// The sizes its plan is made with (`None`: no plan).
    pub sizes: Option<Sizes>,
    /// The tree's structure (`None`: not compared, as for a broadcast,
    /// whose receivers take the root's static data).
    pub def: Option<TreeDef>,
    /// Each leaf's key path, signature (`f32[2,3]`) and whether it is sent.
    pub leaves: Vec<(KeyPath, String, bool)>,
    /// A failure of this rank before the collective.
    pub error: Option<String>,
}

impl Intent {
    /// The intent of `op` on `tree`, `sent(i, signature)` saying whether
    /// leaf `i` takes part.
    pub fn of<T>(
        op: Op,
        sizes: Option<Sizes>,
        tree: &T,
        with_def: bool,
        sent: impl Fn(usize) -> bool,
    ) -> Intent
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        let mut leaves = Vec::new();
        let mut error = None;
        let mut i = 0;
        pytree_std::paths::for_each_with_path(tree, |path, leaf| {
            let sig = match <T::Leaf as ByteLeaf>::signature(&leaf) {
                Ok(s) => s.to_string(),
                Err(e) => {
                    if error.is_none() {
                        error = Some(format!("at {path}: {}", e.kind()));
                    }
                    "?".to_string()
                }
            };
            leaves.push((path.clone(), sig, sent(i)));
            i += 1;
        });
        Intent {
            op,
            sizes,
            def: with_def.then(|| pytree_std::structure(tree)),
            leaves,
            error,
        }
    }

    /// The hash every rank compares (the same on every rank that runs
    /// the same binary on an equal tree).
    pub fn hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.op.hash(&mut h);
        self.sizes.hash(&mut h);
        self.def.hash(&mut h);
        for (path, sig, sent) in &self.leaves {
            path.to_string().hash(&mut h);
            sig.hash(&mut h);
            sent.hash(&mut h);
        }
        h.finish()
    }

    /// What the other ranks are told when the hashes differ.
    fn describe(&self) -> Description {
        Description {
            op: self.op.to_string(),
            sizes: self.sizes.map(|s| (s.bucket_bytes, s.in_place_bytes)),
            def: self.def.as_ref().map(|d| Structure {
                display: d.to_string(),
                serde: serde_json::to_string(d).ok(),
            }),
            leaves: self
                .leaves
                .iter()
                .map(|(path, signature, sent)| LeafDescription {
                    path: path.to_string(),
                    signature: signature.clone(),
                    sent: *sent,
                })
                .collect(),
            error: self.error.clone(),
        }
    }
}

/// An [`Intent`] as the message the ranks exchange when they disagree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Description {
    op: String,
    sizes: Option<(usize, usize)>,
    def: Option<Structure>,
    leaves: Vec<LeafDescription>,
    error: Option<String>,
}

/// A TreeDef in a [`Description`]: as printed, and as serde writes it
/// when its static data can be written (to name the first difference).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Structure {
    display: String,
    serde: Option<String>,
}

/// One leaf in a [`Description`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct LeafDescription {
    path: String,
    signature: String,
    sent: bool,
}

/// Checks that every rank has the same intent: one all-gather of `hash`
/// and `failed` (whether this rank failed before the collective); when
/// they differ anywhere, a second one of every rank's description
/// (`intent()`, made only then), and the same error on every rank. Every
/// rank makes the same collectives whatever the outcome.
pub(crate) fn agree(
    backend: &dyn Backend,
    hash: u64,
    failed: bool,
    intent: impl FnOnce() -> Intent,
) -> Result<(), Error> {
    let mut mine = Vec::with_capacity(16);
    mine.extend_from_slice(&hash.to_le_bytes());
    mine.extend_from_slice(&u64::from(failed).to_le_bytes());
    let all = backend.all_gather(&mine)?;
    let any_failed = all.iter().any(|m| m.get(8..16) != Some(&[0u8; 8][..]));
    if all.iter().all(|m| *m == all[0]) && !any_failed {
        return Ok(());
    }
    let intent = intent();
    let descriptions = gather(backend, &intent.describe())?;
    Err(Error::custom(explain(
        &intent.op.to_string(),
        &descriptions,
    )))
}

/// The message every rank returns: each rank that failed, and each rank
/// whose tree differs from rank 0's with the first difference.
fn explain(op: &str, ranks: &[Option<Description>]) -> String {
    let mut lines = Vec::new();
    for (r, d) in ranks.iter().enumerate() {
        match d {
            None => lines.push(format!("rank {r}'s description did not read")),
            Some(Description { error: Some(e), .. }) => lines.push(format!("rank {r} failed: {e}")),
            Some(_) => {}
        }
    }
    if let Some(Some(first)) = ranks.first() {
        for (r, d) in ranks.iter().enumerate().skip(1) {
            if let Some(diff) = d.as_ref().and_then(|d| first_difference(first, d, r)) {
                lines.push(diff);
            }
        }
    }
    if lines.is_empty() {
        lines.push("the ranks' hashes differ, yet their descriptions are equal".to_string());
    }
    format!(
        "{op}: the ranks do not hold the same tree, nothing was sent: {}",
        lines.join("; ")
    )
}

/// The first difference between rank 0's description and rank `r`'s.
fn first_difference(a: &Description, b: &Description, r: usize) -> Option<String> {
    if a.op != b.op {
        return Some(format!("rank 0 called {}, rank {r} called {}", a.op, b.op));
    }
    if a.sizes != b.sizes {
        let shown = |s: Option<(usize, usize)>| match s {
            Some((bucket, in_place)) => {
                format!("{bucket}-byte buckets, in place from {in_place} bytes")
            }
            None => "no sizes".to_string(),
        };
        return Some(format!(
            "rank {r} differs: rank 0 uses {}, rank {r} {} (Dist::with_sizes must be the same on every rank)",
            shown(a.sizes),
            shown(b.sizes)
        ));
    }
    for (x, y) in a.leaves.iter().zip(&b.leaves) {
        if x == y {
            continue;
        }
        let (px, py) = (&x.path, &y.path);
        if px != py {
            return Some(format!(
                "rank {r} differs from rank 0 at {px}: rank 0 has a leaf at {px}, rank {r} at {py}"
            ));
        }
        if x.signature != y.signature {
            return Some(format!(
                "rank {r} differs from rank 0 at {px}: {} on rank 0, {} on rank {r}",
                x.signature, y.signature
            ));
        }
        let says = |l: &LeafDescription| {
            if l.sent {
                "sends it"
            } else {
                "leaves it out (masked)"
            }
        };
        return Some(format!(
            "rank {r} differs from rank 0 at {px}: rank 0 {}, rank {r} {}",
            says(x),
            says(y)
        ));
    }
    let (la, lb) = (&a.leaves, &b.leaves);
    if la.len() != lb.len() {
        let (longer, who) = if la.len() > lb.len() {
            (la, 0)
        } else {
            (lb, r)
        };
        let at = &longer[la.len().min(lb.len())].path;
        return Some(format!(
            "rank {r} differs from rank 0 at {at}: rank 0 has {} leaves, rank {r} has {}; the first extra one, on rank {who}, is at {at}",
            la.len(),
            lb.len()
        ));
    }
    if a.def != b.def {
        let parse = |d: &Description| {
            d.def
                .as_ref()
                .and_then(|s| s.serde.as_deref())
                .and_then(|s| serde_json::from_str::<TreeDef>(s).ok())
        };
        if let (Some(da), Some(db)) = (parse(a), parse(b)) {
            if let Some(e) = da.diff(&db).into_iter().next() {
                return Some(format!(
                    "rank {r} differs from rank 0 (expected rank 0's, found rank {r}'s) {e}"
                ));
            }
        }
        let shown = |d: &Description| {
            d.def
                .as_ref()
                .map_or("?", |s| s.display.as_str())
                .to_string()
        };
        return Some(format!(
            "rank {r} differs from rank 0 in structure or static data: rank 0 has {}, rank {r} has {}",
            shown(a),
            shown(b)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const OP: Op = Op::CheckReplicated;

    fn describe<T>(tree: &T) -> Option<Description>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        Some(Intent::of(OP, None, tree, true, |_| true).describe())
    }

    #[test]
    fn a_differing_shape_is_named_by_its_path_and_ranks() {
        use pytree_std::ndarray::Array1;
        let a = describe(&(Array1::<f32>::ones(2), Array1::<f32>::zeros(2)));
        let b = describe(&(Array1::<f32>::ones(2), Array1::<f32>::zeros(3)));
        assert_eq!(
            explain("all_reduce_mean", &[a.clone(), a.clone(), b]),
            "all_reduce_mean: the ranks do not hold the same tree, nothing was sent: \
             rank 2 differs from rank 0 at [1]: f32[2] on rank 0, f32[3] on rank 2"
        );
    }

    #[test]
    fn a_missing_leaf_and_a_failed_rank_are_named() {
        let a = describe(&vec![1.0f32, 2.0]);
        let mut b = describe(&vec![1.0f32]);
        b.as_mut().unwrap().error = Some("at [0]: boom".into());
        assert_eq!(
            explain("x", &[a, b]),
            "x: the ranks do not hold the same tree, nothing was sent: rank 1 failed: at [0]: boom; \
             rank 1 differs from rank 0 at [1]: rank 0 has 2 leaves, rank 1 has 1; the first extra one, on rank 0, is at [1]"
        );
    }

    #[test]
    fn equal_trees_hash_equal_and_static_data_counts() {
        #[derive(pytree_std::PyTree)]
        struct S {
            w: f32,
            #[pytree(static)]
            n: usize,
        }
        let h = |t: &S| Intent::of(OP, None, t, true, |_| true).hash();
        assert_eq!(h(&S { w: 1.0, n: 1 }), h(&S { w: 2.0, n: 1 }));
        assert_ne!(h(&S { w: 1.0, n: 1 }), h(&S { w: 1.0, n: 2 }));
        let d = |t: &S| describe(t);
        let msg = explain("op", &[d(&S { w: 1.0, n: 1 }), d(&S { w: 1.0, n: 2 })]);
        assert!(msg.contains("rank 1 differs from rank 0"), "{msg}");
        assert!(msg.contains(".n"), "{msg}");
    }

    #[test]
    fn differing_sizes_and_an_unreadable_description_are_named() {
        let tree = vec![1.0f32];
        let with = |bucket_bytes| {
            Some(
                Intent::of(
                    OP,
                    Some(Sizes {
                        bucket_bytes,
                        in_place_bytes: 8,
                    }),
                    &tree,
                    true,
                    |_| true,
                )
                .describe(),
            )
        };
        let msg = explain("op", &[with(64), with(128), None]);
        assert_eq!(
            msg,
            "op: the ranks do not hold the same tree, nothing was sent: \
             rank 2's description did not read; rank 1 differs: rank 0 uses 64-byte buckets, \
             in place from 8 bytes, rank 1 128-byte buckets, in place from 8 bytes \
             (Dist::with_sizes must be the same on every rank)"
        );
    }

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
