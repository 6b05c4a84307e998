//! Tuples of arity 1 to 12: one `Tuple(n)` node; element `i` has the key
//! `[i]` (JAX's `SequenceKey`). All elements share one leaf type.

/// The impls for namespace `$ns` (expanded once for `Std`, and by
/// [`std_containers!`](crate::std_containers) for a user namespace).
#[doc(hidden)]
#[macro_export]
macro_rules! __pytree_tuples {
    ($ns:ty) => {
        $crate::__pytree_tuples!(@tuple $ns; 1; A a 0);
        $crate::__pytree_tuples!(@tuple $ns; 2; A a 0, B b 1);
        $crate::__pytree_tuples!(@tuple $ns; 3; A a 0, B b 1, C c 2);
        $crate::__pytree_tuples!(@tuple $ns; 4; A a 0, B b 1, C c 2, D d 3);
        $crate::__pytree_tuples!(@tuple $ns; 5; A a 0, B b 1, C c 2, D d 3, E e 4);
        $crate::__pytree_tuples!(@tuple $ns; 6; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5);
        $crate::__pytree_tuples!(@tuple $ns; 7; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6);
        $crate::__pytree_tuples!(@tuple $ns; 8; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7);
        $crate::__pytree_tuples!(@tuple $ns; 9; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8);
        $crate::__pytree_tuples!(@tuple $ns; 10; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8, K k 9);
        $crate::__pytree_tuples!(@tuple $ns; 11; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8, K k 9, M m 10);
        $crate::__pytree_tuples!(@tuple $ns; 12; A a 0, B b 1, C c 2, D d 3, E e 4, G g 5, H h 6, I i 7, J j 8, K k 9, M m 10, P p 11);
    };
    (@tuple $ns:ty; $n:expr; $A:ident $a:ident 0 $(, $T:ident $t:ident $i:tt)*) => {
        const _: () = {
            use $crate::{
                Error, Flatten, KeyEntry, KeyRef, LeafMut, LeafRef, NodeRef, Sink, Source, Unflatten,
                Visit, VisitMut,
            };
            /// The namespace these impls are for.
            type Std = $ns;

            impl<$A: Flatten<Std>, $($T: Flatten<Std, Leaf = $A::Leaf>),*> Flatten<Std> for ($A, $($T,)*) {
                type Leaf = $A::Leaf;
                const UNIFORM_LEAVES: Option<usize> =
                    $crate::__private::uniform_sum(&[$A::UNIFORM_LEAVES $(, $T::UNIFORM_LEAVES)*]);

                #[inline]
                fn leaf_count_hint(&self) -> usize {
                    self.0.leaf_count_hint() $(+ self.$i.leaf_count_hint())*
                }

                #[inline]
                fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
                    sink.node(NodeRef::Tuple($n));
                    // Elements not handed on yet are held in guards (a sink
                    // that panics drops deep elements on a fresh stack).
                    let ($a, $($t,)*) = self;
                    let ($a, $($t,)*) = (
                        $crate::__private::Unwinding::new($a),
                        $($crate::__private::Unwinding::new($t),)*
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
                fn visit<'a, V: Visit<LeafRef<'a, Std, Self::Leaf>>>(&'a self, visitor: &mut V) {
                    visitor.node(NodeRef::Tuple($n));
                    visitor.enter(KeyRef::Index(0));
                    self.0.visit(visitor);
                    visitor.exit();
                    $(
                        visitor.enter(KeyRef::Index($i));
                        self.$i.visit(visitor);
                        visitor.exit();
                    )*
                }
                #[inline]
                fn visit_mut<'a, V: VisitMut<LeafMut<'a, Std, Self::Leaf>>>(&'a mut self, visitor: &mut V) {
                    visitor.node(NodeRef::Tuple($n));
                    visitor.enter(KeyRef::Index(0));
                    self.0.visit_mut(visitor);
                    visitor.exit();
                    $(
                        visitor.enter(KeyRef::Index($i));
                        self.$i.visit_mut(visitor);
                        visitor.exit();
                    )*
                }
                #[inline]
                fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
                    // Held in guards until the tuple is built, so that a
                    // panic in `f` drops deep elements on a fresh stack
                    // (pytree-core's `unwind.rs`).
                    use $crate::__private::Unwinding;
                    let ($a, $($t,)*) = self;
                    let ($a, $($t,)*) = (Unwinding::new($a), $(Unwinding::new($t),)*);
                    let $a = Unwinding::new($a.take().map_leaves(f));
                    $( let $t = Unwinding::new($t.take().map_leaves(f)); )*
                    ($a.take(), $($t.take(),)*)
                }
                #[inline]
                fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
                    self.0.zip_check(others.map(|o| &o.0)).map_err(|e| e.at(KeyEntry::Index(0)))?;
                    $(self.$i.zip_check(others.map(|o| &o.$i)).map_err(|e| e.at(KeyEntry::Index($i)))?;)*
                    Ok(())
                }
                #[inline]
                fn zip_with_prechecked<'a, const N: usize, F>(&'a self, others: [&'a Self; N], f: &mut F) -> Self
                where
                    F: FnMut(LeafRef<'a, Std, Self::Leaf>, [LeafRef<'a, Std, Self::Leaf>; N]) -> Self::Leaf,
                {
                    (
                        self.0.zip_with_prechecked(others.map(|o| &o.0), f),
                        $(self.$i.zip_with_prechecked(others.map(|o| &o.$i), f),)*
                    )
                }
                #[inline]
                fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
                where
                    F: FnMut(LeafMut<'a, Std, Self::Leaf>, [LeafRef<'a, Std, Self::Leaf>; N]),
                {
                    self.0.zip_mut_prechecked(others.map(|o| &o.0), f);
                    $(self.$i.zip_mut_prechecked(others.map(|o| &o.$i), f);)*
                }
            }

            impl<$A: Unflatten<Std>, $($T: Unflatten<Std> + Flatten<Std, Leaf = $A::Leaf>),*> Unflatten<Std> for ($A, $($T,)*) {
                #[inline]
                fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
                    source.tuple_node($n)?;
                    Ok((
                        $A::unflatten_from(source).map_err(|e| e.at(KeyEntry::Index(0)))?,
                        $($T::unflatten_from(source).map_err(|e| e.at(KeyEntry::Index($i)))?,)*
                    ))
                }
            }
        };
    };
}
