//! Relations between two TreeDefs: the structural diff (every place where
//! they differ, with its key path) and the prefix relation of JAX's prefix
//! trees (a leaf stands for any subtree; `None` only for `None`).

use alloc::vec::Vec;

use super::align::{align, Policy, Span};
use super::TreeDef;
use crate::error::Error;

impl TreeDef {
    /// Every place where `other` differs from `self`, each an [`Error`]
    /// with its key path and what `self` (expected) and `other` (found)
    /// have there: node kinds, sequence lengths, map keys (missing and
    /// extra), `Some` / `None`, enum variants, static fields. Empty when
    /// the structures are equal. Below a place that differs in kind
    /// nothing more is compared; below maps whose keys differ, the common
    /// keys are.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// let a = pytree_std::structure(&(vec![1, 2], BTreeMap::from([("a", 1), ("b", 2)])));
    /// let b = pytree_std::structure(&(vec![1, 2, 3], BTreeMap::from([("a", 1), ("c", 3)])));
    /// let diff: Vec<String> = a.diff(&b).iter().map(|e| e.to_string()).collect();
    /// assert_eq!(diff, [
    ///     "at [0]: sequence length mismatch: expected 2, found 3",
    ///     "at [1]: map key mismatch; expected key(s): [\"a\", \"b\"], got key(s): [\"a\", \"c\"], \
    ///      missing key(s): [\"b\"], extra key(s): [\"c\"]",
    /// ]);
    /// assert!(a.diff(&a).is_empty());
    /// ```
    pub fn diff(&self, other: &TreeDef) -> Vec<Error> {
        if self == other {
            return Vec::new();
        }
        let mismatches_only = Policy {
            args: false,
            def: false,
            ..Policy::diff()
        };
        match align(&[self, other], mismatches_only) {
            Err(errors) => errors.into_iter().map(|e| e.with_tree(None)).collect(),
            // Equal as far as lining up goes, yet not equal: say so rather
            // than report nothing.
            Ok(_) => alloc::vec![Error::custom(alloc::format!(
                "TreeDefs differ: expected {self}, found {other}"
            ))],
        }
    }

    /// True when `self` is a prefix of `full`: `full` is `self` with some
    /// leaves replaced by subtrees (JAX's prefix trees, as `vmap`'s
    /// `in_axes` uses them). A leaf is a prefix of any tree; `None` is a
    /// prefix only of `None` (it is a node without children, not a leaf);
    /// maps need the same keys and structs equal static fields.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// let full = pytree_std::structure(&(1.0, BTreeMap::from([("k1", 2.0), ("k2", 3.0)])));
    /// assert!(pytree_std::structure(&(0, 0)).is_prefix_of(&full));
    /// assert!(pytree_std::TreeDef::leaf().is_prefix_of(&full));
    /// assert!(full.is_prefix_of(&full));
    /// assert!(!pytree_std::structure(&(None::<i32>, 0)).is_prefix_of(&full));
    /// ```
    pub fn is_prefix_of(&self, full: &TreeDef) -> bool {
        let first_error_only = Policy {
            all_errors: false,
            args: false,
            def: false,
            ..Policy::prefix(0)
        };
        self == full || align(&[self, full], first_error_only).is_ok()
    }

    /// For each leaf of the prefix `self`, the subtree of `full` it stands
    /// for and where its leaves start; errors list every place where `self`
    /// is not a prefix (about tree 1, `full`).
    pub(crate) fn prefix_spans(&self, full: &TreeDef) -> Result<Vec<Span>, Vec<Error>> {
        let policy = Policy {
            spans: true,
            def: false,
            ..Policy::prefix(0)
        };
        align(&[self, full], policy).map(|a| a.spans)
    }
}
