//! Comparing the structures of two trees with the namespace fixed to
//! [`Std`]: every difference, with its key path.

use pytree_core::{Error, Flatten};

use crate::Std;

/// Checks that two trees (of any types, any leaf types) have the same
/// structure; otherwise the error lists every place where `b` differs from
/// `a` (dm-tree's `assert_same_structure`, as a value).
///
/// ```
/// use std::collections::BTreeMap;
/// let a = BTreeMap::from([("a", vec![1.0f32, 2.0]), ("b", vec![3.0])]);
/// let b = BTreeMap::from([("a", vec![0u8]), ("c", vec![0u8])]);
/// pytree_std::check_same_structure(&a, &a.clone())?;
/// let err = pytree_std::check_same_structure(&a, &b).unwrap_err();
/// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)\
///     \n  tree 1 at <root>: map key mismatch; expected key(s): [\"a\", \"b\"], got key(s): [\"a\", \"c\"], \
///         missing key(s): [\"b\"], extra key(s): [\"c\"]\
///     \n  tree 1 at [\"a\"]: sequence length mismatch: expected 2, found 1");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn check_same_structure<A: Flatten<Std>, B: Flatten<Std>>(a: &A, b: &B) -> Result<(), Error> {
    pytree_core::check_same_structure::<Std, A, B>(a, b)
}
