//! Tuples of arity 1 to 12: one `Tuple(n)` node; element `i` has the key
//! `[i]` (JAX's `SequenceKey`). All elements share one leaf type.

use super::StdContainers;
use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::paths::key_path::{KeyEntry, KeyRef};
use crate::sources::source::Source;
use crate::traits::flatten::unwind::Unwinding;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::traits::visit::{Sink, Visit, VisitMut};
use crate::treedef::node::NodeRef;

/// The body of `visit` and `visit_mut` (`$walk`): the tuple node, then
/// each element at its index.
macro_rules! tuple_walk {
    ($self:ident, $visitor:ident, $walk:ident; $n:expr; $($i:tt),*) => {
        $visitor.node(NodeRef::Tuple($n));
        $(
            $visitor.enter(KeyRef::Index($i));
            $self.$i.$walk($visitor);
            $visitor.exit();
        )*
    };
}

/// The impls for the tuple of the listed arity and element types, for every
/// namespace with the std containers.
macro_rules! tuple_impls {
    ($n:expr; $A:ident $a:ident 0 $(, $T:ident $t:ident $i:tt)*) => {
        impl<Ns: StdContainers, $A: Flatten<Ns>, $($T: Flatten<Ns, Leaf = $A::Leaf>),*> Flatten<Ns> for ($A, $($T,)*) {
            type Leaf = $A::Leaf;
            const UNIFORM_LEAVES: Option<usize> =
                crate::__private::uniform_sum(&[$A::UNIFORM_LEAVES $(, $T::UNIFORM_LEAVES)*]);

            #[inline]
            fn leaf_count_hint(&self) -> usize {
                self.0.leaf_count_hint() $(+ self.$i.leaf_count_hint())*
            }

            #[inline]
            fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
                sink.node(NodeRef::Tuple($n));
                // Elements not handed on yet are held in guards (a sink
                // that panics drops deep elements with a walk).
                let ($a, $($t,)*) = self;
                let ($a, $($t,)*) = (
                    Unwinding::tree::<Ns>($a),
                    $(Unwinding::tree::<Ns>($t),)*
                );
                sink.enter(KeyRef::Index(0));
                $a.take().flatten_into(sink);
                sink.exit();
                $(
                    sink.enter(KeyRef::Index($i));
                    $t.take().flatten_into(sink);
                    sink.exit();
                )*
            }
            #[inline]
            fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V) {
                tuple_walk!(self, visitor, visit; $n; 0 $(, $i)*);
            }
            #[inline]
            fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V) {
                tuple_walk!(self, visitor, visit_mut; $n; 0 $(, $i)*);
            }
            #[inline]
            fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
                self.0.zip_check(others.map(|o| &o.0)).map_err(|e| e.at(KeyEntry::Index(0)))?;
                $(self.$i.zip_check(others.map(|o| &o.$i)).map_err(|e| e.at(KeyEntry::Index($i)))?;)*
                Ok(())
            }
            #[inline]
            fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
            where
                F: FnMut(LeafMut<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]),
            {
                self.0.zip_mut_prechecked(others.map(|o| &o.0), f);
                $(self.$i.zip_mut_prechecked(others.map(|o| &o.$i), f);)*
            }
        }

        impl<Ns: StdContainers, $A: Unflatten<Ns>, $($T: Unflatten<Ns> + Flatten<Ns, Leaf = $A::Leaf>),*> Unflatten<Ns> for ($A, $($T,)*) {
            #[inline]
            fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
                source.tuple_node($n)?;
                // Each element built is held in a guard until the tuple
                // is (a later element's error or panic drops a deep one
                // with a walk, `unwind.rs`).
                let $a = Unwinding::tree::<Ns>($A::unflatten_from(source).map_err(|e| e.at(KeyEntry::Index(0)))?);
                $( let $t = Unwinding::tree::<Ns>($T::unflatten_from(source).map_err(|e| e.at(KeyEntry::Index($i)))?); )*
                Ok(($a.take(), $($t.take(),)*))
            }
            #[inline]
            fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
                // Held in guards until the tuple is built, so that a
                // panic in `f` drops deep elements with a walk
                // (pytree-core's `unwind.rs`).
                let ($a, $($t,)*) = self;
                let ($a, $($t,)*) = (Unwinding::tree::<Ns>($a), $(Unwinding::tree::<Ns>($t),)*);
                let $a = Unwinding::tree::<Ns>($a.take().map_leaves(f));
                $( let $t = Unwinding::tree::<Ns>($t.take().map_leaves(f)); )*
                ($a.take(), $($t.take(),)*)
            }
            #[inline]
            fn zip_with_prechecked<'a, const N: usize, F>(&'a self, others: [&'a Self; N], f: &mut F) -> Self
            where
                F: FnMut(LeafRef<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]) -> Self::Leaf,
            {
                // Held in guards until the tuple is built (see `map_leaves`).
                let $a = Unwinding::tree::<Ns>(self.0.zip_with_prechecked(others.map(|o| &o.0), f));
                $( let $t = Unwinding::tree::<Ns>(self.$i.zip_with_prechecked(others.map(|o| &o.$i), f)); )*
                ($a.take(), $($t.take(),)*)
            }
        }
    };
}

tuple_impls!(1; A a 0);
tuple_impls!(2; A a 0, B b 1);
tuple_impls!(3; A a 0, B b 1, C c 2);
tuple_impls!(4; A a 0, B b 1, C c 2, D d 3);
tuple_impls!(5; A a 0, B b 1, C c 2, D d 3, E e 4);
tuple_impls!(6; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5);
tuple_impls!(7; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6);
tuple_impls!(8; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7);
tuple_impls!(9; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8);
tuple_impls!(10; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8, K k 9);
tuple_impls!(11; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8, K k 9, M m 10);
tuple_impls!(12; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8, K k 9, M m 10, P p 11);
