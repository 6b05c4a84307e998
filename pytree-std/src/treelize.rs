//! [`Treelize`] with the namespace fixed to [`Std`]: a plain function of
//! leaves applied to trees, with treevalue's modes (`mode::Strict` by
//! default, `Inner`, `Outer`, `Left`), `missing` and `inherit`.

use pytree_core::mode::{NoMissing, Strict};

use crate::Std;

/// [`pytree_core::Treelize`] in the standard namespace.
///
/// ```
/// use std::collections::BTreeMap;
/// use pytree_std::Treelize;
/// let mut add = Treelize::new(|a: &i32, b: &i32| a + b);
/// let r: BTreeMap<&str, i32> = add.call2(&BTreeMap::from([("a", 1)]), &BTreeMap::from([("a", 2)]))?;
/// assert_eq!(r["a"], 3);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub type Treelize<F, M = Strict, P = NoMissing> = pytree_core::Treelize<Std, F, M, P>;
