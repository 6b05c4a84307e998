//! Every rank checked to hold the same tree before a collective on it.
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

use std::hash::{DefaultHasher, Hash, Hasher};

use pytree_std::checkpoint::TensorLeaf;
use pytree_std::{Error, Flatten, KeyPath, Std, TreeDef};
use serde_json::{json, Value};

use crate::backend::Backend;

/// What one rank is about to do with one tree.
pub(crate) struct Intent {
    /// The operation and its options (`"all_reduce_mean (25 MiB buckets)"`).
    pub op: String,
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
    pub fn of<T>(op: String, tree: &T, with_def: bool, sent: impl Fn(usize) -> bool) -> Intent
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let mut leaves = Vec::new();
        let mut error = None;
        let mut i = 0;
        pytree_std::paths::leaves_with_path(tree)
            .into_iter()
            .for_each(|(ref path, leaf)| {
                let sig = match <T::Leaf as TensorLeaf>::tensor_signature(&leaf) {
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
        self.def.hash(&mut h);
        for (path, sig, sent) in &self.leaves {
            path.to_string().hash(&mut h);
            sig.hash(&mut h);
            sent.hash(&mut h);
        }
        h.finish()
    }

    fn describe(&self) -> Vec<u8> {
        let def = self.def.as_ref().map(|d| {
            json!({
                "display": d.to_string(),
                "serde": serde_json::to_string(d).ok(),
            })
        });
        let leaves: Vec<Value> = self
            .leaves
            .iter()
            .map(|(p, s, sent)| json!([p.to_string(), s, sent]))
            .collect();
        json!({"op": self.op, "def": def, "leaves": leaves, "error": self.error})
            .to_string()
            .into_bytes()
    }
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
    let descriptions = backend.all_gather(&intent.describe())?;
    let parsed: Vec<Value> = descriptions
        .iter()
        .map(|d| serde_json::from_slice(d).unwrap_or(Value::Null))
        .collect();
    Err(Error::custom(explain(&intent.op, &parsed)))
}

/// The message every rank returns: each rank that failed, and each rank
/// whose tree differs from rank 0's with the first difference.
fn explain(op: &str, ranks: &[Value]) -> String {
    let mut lines = Vec::new();
    for (r, d) in ranks.iter().enumerate() {
        if let Some(e) = d["error"].as_str() {
            lines.push(format!("rank {r} failed: {e}"));
        }
    }
    let first = &ranks[0];
    for (r, d) in ranks.iter().enumerate().skip(1) {
        if let Some(diff) = first_difference(first, d, r) {
            lines.push(diff);
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
fn first_difference(a: &Value, b: &Value, r: usize) -> Option<String> {
    if a["op"] != b["op"] {
        return Some(format!(
            "rank 0 called {}, rank {r} called {}",
            a["op"].as_str().unwrap_or("?"),
            b["op"].as_str().unwrap_or("?")
        ));
    }
    let empty = Vec::new();
    let la = a["leaves"].as_array().unwrap_or(&empty);
    let lb = b["leaves"].as_array().unwrap_or(&empty);
    for (x, y) in la.iter().zip(lb) {
        if x == y {
            continue;
        }
        let (px, py) = (x[0].as_str().unwrap_or("?"), y[0].as_str().unwrap_or("?"));
        if px != py {
            return Some(format!(
                "rank {r} differs from rank 0 at {px}: rank 0 has a leaf at {px}, rank {r} at {py}"
            ));
        }
        if x[1] != y[1] {
            return Some(format!(
                "rank {r} differs from rank 0 at {px}: {} on rank 0, {} on rank {r}",
                x[1].as_str().unwrap_or("?"),
                y[1].as_str().unwrap_or("?")
            ));
        }
        let says = |v: &Value| {
            if v[2] == true {
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
    if la.len() != lb.len() {
        let (longer, who) = if la.len() > lb.len() {
            (la, 0)
        } else {
            (lb, r)
        };
        let at = longer[la.len().min(lb.len())][0].as_str().unwrap_or("?");
        return Some(format!(
            "rank {r} differs from rank 0 at {at}: rank 0 has {} leaves, rank {r} has {}; the first extra one, on rank {who}, is at {at}",
            la.len(),
            lb.len()
        ));
    }
    if a["def"] != b["def"] {
        let parse = |v: &Value| {
            v["def"]["serde"]
                .as_str()
                .and_then(|s| serde_json::from_str::<TreeDef>(s).ok())
        };
        if let (Some(da), Some(db)) = (parse(a), parse(b)) {
            if let Some(e) = da.diff(&db).into_iter().next() {
                return Some(format!(
                    "rank {r} differs from rank 0 (expected rank 0's, found rank {r}'s) {e}"
                ));
            }
        }
        return Some(format!(
            "rank {r} differs from rank 0 in structure or static data: rank 0 has {}, rank {r} has {}",
            a["def"]["display"].as_str().unwrap_or("?"),
            b["def"]["display"].as_str().unwrap_or("?")
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe<T>(tree: &T) -> Value
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        serde_json::from_slice(&Intent::of("op".into(), tree, true, |_| true).describe()).unwrap()
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
        b["error"] = json!("at [0]: boom");
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
        let h = |t: &S| Intent::of("op".into(), t, true, |_| true).hash();
        assert_eq!(h(&S { w: 1.0, n: 1 }), h(&S { w: 2.0, n: 1 }));
        assert_ne!(h(&S { w: 1.0, n: 1 }), h(&S { w: 1.0, n: 2 }));
        let d = |t: &S| describe(t);
        let msg = explain("op", &[d(&S { w: 1.0, n: 1 }), d(&S { w: 1.0, n: 2 })]);
        assert!(msg.contains("rank 1 differs from rank 0"), "{msg}");
        assert!(msg.contains(".n"), "{msg}");
    }
}
