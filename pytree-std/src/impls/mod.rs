//! The impls for std types, one module per family: containers
//! (sequences, maps, `Option`, tuples, `Rc`/`Arc`) are written once as
//! macros over a namespace, expanded here for `Std` and by
//! [`std_containers!`](crate::std_containers) for a user namespace; leaf
//! types (primitives, and the foreign types behind features) are `Std`'s.

mod leaves;
mod maps;
mod option;
mod sequences;
mod shared;
mod tuples;

pub(crate) use pytree_core::__private::all_some;
pub(crate) use pytree_core::__private::check_lengths;

/// Every std container impl for namespace `$ns`: `Vec`, `VecDeque`,
/// arrays, tuples of 1 to 12, `BTreeMap`, `HashMap`, `Option`, `Rc`,
/// `Arc` (`Box` is every namespace's already). With
/// [`impl_leaf!`](crate::impl_leaf) for its leaf types, a user namespace
/// is complete: see [`namespace!`](crate::namespace).
///
/// ```
/// use pytree_std::{Flatten, Visit};
/// pub struct Coarse;
/// pytree_std::std_containers!(Coarse);
/// pytree_std::impl_leaf!(Coarse => f64);
/// struct Sum(f64);
/// impl Visit<&f64> for Sum { fn leaf(&mut self, x: &f64) { self.0 += x } }
/// let mut sum = Sum(0.0);
/// Flatten::<Coarse>::visit(&vec![(Some(1.0f64), 2.0f64)], &mut sum);
/// assert_eq!(sum.0, 3.0);
/// ```
#[macro_export]
macro_rules! std_containers {
    ($ns:ty) => {
        $crate::__pytree_sequences!($ns);
        $crate::__pytree_maps!($ns);
        $crate::__pytree_option!($ns);
        $crate::__pytree_tuples!($ns);
        $crate::__pytree_shared!($ns);
    };
}

std_containers!(crate::Std);
