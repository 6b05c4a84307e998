//! Arithmetic on trees, as treevalue's `FastTreeValue` offers: `&t1 + &t2`
//! combines two trees leaf by leaf through the strict structural map
//! ([`map_n`](crate::walk::map_n): same kinds, sequence lengths and map keys; map
//! entries paired by key), `t * 2` applies a scalar to every leaf, `-t`
//! negates. The `try_*` methods return the mismatch as an [`Error`]; the
//! operators panic on it, as `Index` panics on a missing key, since an
//! operator cannot return an error.
//!
//! Leaves need `L: Clone + Add<Output = L>` (and so on): the operands are
//! cloned leaf by leaf, which is free for numbers. (Bounds on references,
//! `for<'x> &'x L: Add<&'x L>`, would avoid the clones but make type
//! inference overflow in unrelated closures such as `map_n(.., |a, [b]| a + b)`.)

use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

use pytree_core::{Error, PlainLeaf};

use crate::std_namespace::Std;

use super::node::Tree;
use super::walk;

macro_rules! tree_op {
    ($Op:ident, $op:ident, $OpAssign:ident, $op_assign:ident, $try_op:ident, $sym:tt, $doc:literal) => {
        impl<L: Clone + PlainLeaf<Std>> Tree<L>
        where
            L: $Op<Output = L>,
        {
            #[doc = concat!("Combines two trees leaf by leaf with `", stringify!($sym), "`; a structural")]
            /// mismatch (kinds, lengths, map keys) is an error naming the
            /// path and the tree.
            ///
            /// ```
            /// use pytree_std::tree;
            #[doc = concat!("let err = tree! { \"a\" => 1 }.", stringify!($try_op), "(&tree! { \"b\" => 1 }).unwrap_err();")]
            /// assert_eq!(err.to_string(), r#"tree 1 at <root>: map key mismatch; expected key(s): ["a"], got key(s): ["b"], missing key(s): ["a"], extra key(s): ["b"]"#);
            #[doc = $doc]
            /// ```
            pub fn $try_op(&self, rhs: &Tree<L>) -> Result<Tree<L>, Error> {
                crate::walk::map_n(self, [rhs], |a, [b]| a.clone() $sym b.clone())
            }
        }

        impl<L: Clone + PlainLeaf<Std>> $Op<&Tree<L>> for &Tree<L>
        where
            L: $Op<Output = L>,
        {
            type Output = Tree<L>;

            #[doc = concat!("Leaf by leaf, see [`Tree::", stringify!($try_op), "`].")]
            ///
            /// # Panics
            /// If the trees' structures differ (the message is the error
            /// the `try_` method returns).
            fn $op(self, rhs: &Tree<L>) -> Tree<L> {
                match self.$try_op(rhs) {
                    Ok(t) => t,
                    Err(e) => panic!(concat!("tree ", stringify!($sym), " tree: {}"), e),
                }
            }
        }

        impl<L: Clone + PlainLeaf<Std>> $Op<Tree<L>> for Tree<L>
        where
            L: $Op<Output = L>,
        {
            type Output = Tree<L>;

            /// As the operator on references.
            ///
            /// # Panics
            /// If the trees' structures differ.
            fn $op(self, rhs: Tree<L>) -> Tree<L> {
                $Op::$op(&self, &rhs)
            }
        }

        impl<L: Clone + PlainLeaf<Std>> $Op<&Tree<L>> for Tree<L>
        where
            L: $Op<Output = L>,
        {
            type Output = Tree<L>;

            /// As the operator on references.
            ///
            /// # Panics
            /// If the trees' structures differ.
            fn $op(self, rhs: &Tree<L>) -> Tree<L> {
                $Op::$op(&self, rhs)
            }
        }

        impl<L: Clone + PlainLeaf<Std>> $Op<Tree<L>> for &Tree<L>
        where
            L: $Op<Output = L>,
        {
            type Output = Tree<L>;

            /// As the operator on references.
            ///
            /// # Panics
            /// If the trees' structures differ.
            fn $op(self, rhs: Tree<L>) -> Tree<L> {
                $Op::$op(self, &rhs)
            }
        }

        impl<L: Clone> $Op<L> for Tree<L>
        where
            L: $Op<Output = L>,
        {
            type Output = Tree<L>;

            /// Every leaf with the scalar (never fails).
            fn $op(self, rhs: L) -> Tree<L> {
                self.map(|x| x $sym rhs.clone())
            }
        }

        impl<L: Clone> $Op<L> for &Tree<L>
        where
            L: $Op<Output = L>,
        {
            type Output = Tree<L>;

            /// Every leaf with the scalar (never fails).
            fn $op(self, rhs: L) -> Tree<L> {
                self.map_ref(|x| x.clone() $sym rhs.clone())
            }
        }

        impl<L: Clone + PlainLeaf<Std>> $OpAssign<&Tree<L>> for Tree<L>
        where
            L: $Op<Output = L>,
        {
            /// In place, leaf by leaf.
            ///
            /// # Panics
            /// If the trees' structures differ (then `self` is
            /// unchanged: the structures are checked before any update).
            fn $op_assign(&mut self, rhs: &Tree<L>) {
                if let Err(e) = crate::walk::zip_mut([self], [rhs], |[a], [b]| *a = a.clone() $sym b.clone()) {
                    panic!(concat!("tree ", stringify!($sym), "= tree: {}"), e);
                }
            }
        }

        impl<L: Clone> $OpAssign<L> for Tree<L>
        where
            L: $Op<Output = L>,
        {
            /// Every leaf with the scalar, in place.
            fn $op_assign(&mut self, rhs: L) {
                walk::for_each_leaf_mut(self, |a| *a = a.clone() $sym rhs.clone());
            }
        }
    };
}

tree_op!(Add, add, AddAssign, add_assign, try_add, +,
    "assert_eq!(tree! { \"a\" => 1 }.try_add(&tree! { \"a\" => 2 })?, tree! { \"a\" => 3 });\n# Ok::<(), pytree_std::Error>(())");
tree_op!(Sub, sub, SubAssign, sub_assign, try_sub, -,
    "assert_eq!(tree! { \"a\" => 1 }.try_sub(&tree! { \"a\" => 2 })?, tree! { \"a\" => -1 });\n# Ok::<(), pytree_std::Error>(())");
tree_op!(Mul, mul, MulAssign, mul_assign, try_mul, *,
    "assert_eq!(tree! { \"a\" => 3 }.try_mul(&tree! { \"a\" => 2 })?, tree! { \"a\" => 6 });\n# Ok::<(), pytree_std::Error>(())");
tree_op!(Div, div, DivAssign, div_assign, try_div, /,
    "assert_eq!(tree! { \"a\" => 7 }.try_div(&tree! { \"a\" => 2 })?, tree! { \"a\" => 3 });\n# Ok::<(), pytree_std::Error>(())");
tree_op!(Rem, rem, RemAssign, rem_assign, try_rem, %,
    "assert_eq!(tree! { \"a\" => 7 }.try_rem(&tree! { \"a\" => 4 })?, tree! { \"a\" => 3 });\n# Ok::<(), pytree_std::Error>(())");

impl<L: Clone> Neg for Tree<L>
where
    L: Neg<Output = L>,
{
    type Output = Tree<L>;

    /// Every leaf negated.
    fn neg(self) -> Tree<L> {
        self.map(|x| -x)
    }
}

impl<L: Clone> Neg for &Tree<L>
where
    L: Neg<Output = L>,
{
    type Output = Tree<L>;

    /// Every leaf negated.
    fn neg(self) -> Tree<L> {
        self.map_ref(|x| -x.clone())
    }
}
