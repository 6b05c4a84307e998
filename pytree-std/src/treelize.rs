//! [`Treelize`]: a plain function of leaves applied to trees (treevalue's
//! `func_treelize`), with treevalue's [`mode`]s (`mode::Strict` by default,
//! `Inner`, `Outer`, `Left`), `missing` and `inherit`.

pub use pytree_core::mode;

use crate::std_namespace::Std;

/// [`pytree_core::Treelize`] in the standard namespace.
///
/// ```
/// use std::collections::BTreeMap;
/// use pytree_std::treelize::Treelize;
/// let mut add = Treelize::new(|a: &i32, b: &i32| a + b);
/// let r: BTreeMap<&str, i32> = add.call2(&BTreeMap::from([("a", 1)]), &BTreeMap::from([("a", 2)]))?;
/// assert_eq!(r["a"], 3);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub type Treelize<F, M = mode::Strict, P = mode::NoMissing> = pytree_core::Treelize<Std, F, M, P>;
