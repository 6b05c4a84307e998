//! More relations between two TreeDefs, on the alignment engine: strict
//! prefixes, suffixes (optree's `treespec_is_prefix` / `treespec_is_suffix`
//! with `strict`), and the common suffix two structures broadcast to
//! (optree's `PyTreeSpec.broadcast_to_common_suffix`, behind
//! `tree_broadcast_common`).

use super::align::{align, Alignment, Inherit, Policy};
use super::TreeDef;
use crate::error::Error;
use crate::treedef::Mode;

impl TreeDef {
    /// The alignment of `self` as a prefix of `full`, if it is one.
    fn as_prefix_of(&self, full: &TreeDef) -> Option<Alignment> {
        let first_error_only = Policy {
            all_errors: false,
            args: false,
            ..Policy::prefix(0)
        };
        align(&[self, full], first_error_only).ok()
    }

    /// True when `self` is a prefix of `full` and not all of it: at least
    /// one leaf of `self` stands for a subtree of `full` that is not a
    /// single leaf (optree's `treespec_is_prefix(.., strict=True)`). A
    /// structure is never a strict prefix of itself, nor of the same
    /// structure with map entries in another order.
    ///
    /// ```
    /// use pytree_std::TreeDef;
    /// let full = pytree_std::structure(&(1.0, vec![2.0, 3.0]));
    /// assert!(pytree_std::structure(&(0, 0)).is_strict_prefix_of(&full));
    /// assert!(TreeDef::leaf().is_strict_prefix_of(&full));
    /// assert!(!full.is_strict_prefix_of(&full));
    /// // A leaf standing for `None` (a node without children) is strict too.
    /// assert!(TreeDef::leaf().is_strict_prefix_of(&TreeDef::none()));
    /// ```
    pub fn is_strict_prefix_of(&self, full: &TreeDef) -> bool {
        if self == full {
            return false;
        }
        // The merged structure is `self` where both walk, and `full`'s
        // subtree where a leaf of `self` stands for one: it differs from
        // `self` exactly when some leaf stood for more than a leaf.
        self.as_prefix_of(full)
            .is_some_and(|plan| plan.def != *self)
    }

    /// True when `self` is a suffix of `other`: `other` is a prefix of
    /// `self` (optree's `treespec_is_suffix`): `self` is `other` with some
    /// leaves replaced by subtrees.
    ///
    /// ```
    /// use pytree_std::TreeDef;
    /// let full = pytree_std::structure(&(1.0, vec![2.0, 3.0]));
    /// assert!(full.is_suffix_of(&pytree_std::structure(&(0, 0))));
    /// assert!(full.is_suffix_of(&TreeDef::leaf()));
    /// assert!(full.is_suffix_of(&full));
    /// assert!(!TreeDef::leaf().is_suffix_of(&full));
    /// ```
    pub fn is_suffix_of(&self, other: &TreeDef) -> bool {
        other.is_prefix_of(self)
    }

    /// True when `self` is a suffix of `other` and not the same structure
    /// (optree's `treespec_is_suffix(.., strict=True)`): `other` is a
    /// strict prefix of `self`.
    ///
    /// ```
    /// let full = pytree_std::structure(&(1.0, vec![2.0, 3.0]));
    /// assert!(full.is_strict_suffix_of(&pytree_std::structure(&(0, 0))));
    /// assert!(!full.is_strict_suffix_of(&full));
    /// ```
    pub fn is_strict_suffix_of(&self, other: &TreeDef) -> bool {
        other.is_strict_prefix_of(self)
    }

    /// The smallest structure of which both `self` and `other` are
    /// prefixes (optree's `broadcast_to_common_suffix`): where one has a
    /// leaf and the other a subtree, the subtree. Everywhere else the two
    /// must agree as for [`diff`](TreeDef::diff) (kinds, lengths, map keys,
    /// `Some`/`None`, variants, static fields); the error lists every
    /// place where they do not (about tree 1, `other`). Map entries pair
    /// by key; the result keeps `self`'s order where both have a map.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// let a = pytree_std::structure(&(1, (2, 3), 4));
    /// let b = pytree_std::structure(&(5, 6, (7, 8)));
    /// assert_eq!(a.broadcast_to_common_suffix(&b)?.to_string(), "(*, (*, *), (*, *))");
    /// let c = pytree_std::structure(&(1, 2));
    /// let err = a.broadcast_to_common_suffix(&c).unwrap_err();
    /// assert_eq!(err.to_string(), "tree 1 at <root>: node mismatch: expected a tuple of arity 3, \
    ///     found a tuple of arity 2");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn broadcast_to_common_suffix(&self, other: &TreeDef) -> Result<TreeDef, Error> {
        if self == other {
            return Ok(self.clone());
        }
        common_suffix_plan(self, other, false).map(|plan| plan.def)
    }
}

/// The alignment of two TreeDefs where either may broadcast a leaf over
/// the other's subtree (strict otherwise): the common suffix, and for each
/// of its leaves the leaf of each input it comes from (when `args`; the
/// merged structure alone otherwise, which costs the records, not the
/// leaves).
pub(crate) fn common_suffix_plan(a: &TreeDef, b: &TreeDef, args: bool) -> Result<Alignment, Error> {
    let policy = Policy {
        mode: Mode::Strict,
        inherit: Inherit::Everybody,
        all_errors: true,
        fill: false,
        spans: false,
        args,
        def: true,
    };
    align(&[a, b], policy).map_err(Error::from_mismatches)
}
