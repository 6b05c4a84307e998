//! treevalue's figure 2 (seed 004), which `modes.rs` (nested `BTreeMap`s)
//! and `treevalue_parity.rs` (`Tree`) both build: two trees whose keys
//! differ at two levels, `t1` without `b`, `t2` without `x.c`.

/// The strict mode's error on figure 2's trees: both mismatches, each at
/// its path.
pub const STRICT_ERROR: &str = "tree structures differ (2 mismatches found)\n  \
    tree 1 at <root>: map key mismatch; expected key(s): [\"a\", \"x\"], \
    got key(s): [\"a\", \"b\", \"x\"], extra key(s): [\"b\"]\n  \
    tree 1 at [\"x\"]: map key mismatch; expected key(s): [\"c\", \"d\"], \
    got key(s): [\"d\"], missing key(s): [\"c\"]";
