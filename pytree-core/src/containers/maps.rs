//! The keyed maps, `BTreeMap`, `HashMap` (feature `std`) and `IndexMap`
//! (feature `indexmap`), share one body: what they differ in is the
//! private trait [`KeyedMap`] (the order entries are walked in, how keys
//! are recorded, how the values of other maps are paired with this one's,
//! how a map is rebuilt), and `Flatten` / `Unflatten` are written once over
//! it, as the generic functions below; `keyed_map_impls!` gives each map
//! type the two impls that call them.
//!
//! A map is one `Map(len)` node whose keys are static data; its children
//! are the values in leaf order (sorted for `BTreeMap` and `HashMap`, the
//! map's own order for `IndexMap`), keyed `[key]`. `map_leaves` maps the
//! values in place (see [`map_value_in_place`]): the map keeps its nodes or
//! table and its keys, and nothing is rehashed.

use alloc::format;
use alloc::vec::Vec;
use core::mem::ManuallyDrop;

use crate::__private::elements_hint;
use crate::error::{Error, ErrorKind};
use crate::leaf::{LeafMut, LeafRef};
use crate::paths::key_path::{KeyEntry, KeyRef};
use crate::sources::source::Source;
use crate::static_data::{Static, StaticValue};
use crate::traits::flatten::defaults::all_some;
use crate::traits::flatten::unwind::{drop_deep, Unwinding};
use crate::traits::flatten::{Flatten, Unflatten};
use crate::traits::visit::{Sink, Visit, VisitMut};
use crate::treedef::node::NodeRef;

/// What a keyed map type is to the shared body. Every method is
/// `#[inline]` and called once per map or per entry, so each map's code is
/// what it was when each had its own body.
pub(super) trait KeyedMap: Sized + FromIterator<(Self::Key, Self::Value)> {
    /// The key type.
    type Key: Static;
    /// The value type.
    type Value;
    /// Values of other maps are paired by position (`BTreeMap`: the keys
    /// were checked equal, so the orders are too), not looked up by key;
    /// a map of another length (a skipped check) is not paired at all.
    const POSITIONAL: bool;
    /// `zip_check` checks the values in the table's order first (no
    /// sort), and only after a failure again in leaf order, so that the
    /// error is the first mismatch in leaf order on every run (`HashMap`).
    const CHECK_UNORDERED_FIRST: bool;

    /// The number of entries.
    fn len(&self) -> usize;
    /// The entries by value, in leaf order.
    fn into_entries(self) -> impl Iterator<Item = (Self::Key, Self::Value)>;
    /// The entries in leaf order, as a value that can be walked twice
    /// (the map itself, or `HashMap`'s sorted references).
    type Entries<'a>
    where
        Self: 'a;
    /// This map's [`Entries`](KeyedMap::Entries).
    fn entries(&self) -> Self::Entries<'_>;
    /// A walk over `entries`.
    fn iter<'s, 'a: 's>(
        entries: &'s Self::Entries<'a>,
    ) -> impl ExactSizeIterator<Item = (&'a Self::Key, &'a Self::Value)> + 's
    where
        Self: 'a;
    /// The entries by mutable reference, in leaf order.
    fn entries_mut(&mut self) -> impl Iterator<Item = (&Self::Key, &mut Self::Value)>;
    /// The entries in the table's order (`CHECK_UNORDERED_FIRST`).
    fn unordered(&self) -> impl Iterator<Item = (&Self::Key, &Self::Value)>;
    /// The value under `key` (`CHECK_UNORDERED_FIRST`).
    fn get(&self, key: &Self::Key) -> Option<&Self::Value>;
    /// Where the values of another map are taken from, in leaf order.
    type Cursor<'a>
    where
        Self: 'a;
    /// A cursor over `other`'s values.
    fn cursor(other: &Self) -> Self::Cursor<'_>;
    /// The value of the cursor's map paired with this map's entry `key`:
    /// the next value (`POSITIONAL`) or the value under `key`.
    fn partner<'a>(cursor: &mut Self::Cursor<'a>, key: &Self::Key) -> Option<&'a Self::Value>
    where
        Self: 'a;
    /// Checks that every other map has exactly the first map's keys.
    fn check_keys<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error>;
    /// The keys recorded as static data: sorted
    /// ([`StaticValue::ordered_keys`]) or in the map's order
    /// ([`StaticValue::keys`]).
    fn record_keys(keys: Vec<Self::Key>) -> StaticValue;

    /// A map under construction (by `unflatten_from` and
    /// `zip_with_prechecked`): its entries so far, which a guard drops
    /// with a walk if the construction stops (`unwind.rs`).
    type Builder: IntoIterator<Item = (Self::Key, Self::Value)>;
    /// Checks the keys read from a TreeDef (a value would be lost under a
    /// repeated key).
    fn check_read_keys(keys: &[Self::Key]) -> Result<(), Error>;
    /// Starts a map of `len` entries.
    fn builder(len: usize) -> Self::Builder;
    /// Adds an entry; a repeated key is an error, which hands the value
    /// back (to be dropped with a walk).
    fn push(
        builder: &mut Self::Builder,
        key: Self::Key,
        value: Self::Value,
    ) -> Result<(), (Error, Self::Value)>;
    /// The map built.
    fn finish(builder: Self::Builder) -> Self;
}

/// The error for maps whose key sets differ; lists both key sets.
#[cold]
pub(super) fn key_mismatch<'k, K: Static + 'k>(
    expected: impl IntoIterator<Item = &'k K>,
    found: impl IntoIterator<Item = &'k K>,
    tree: usize,
) -> Error {
    let show = |keys: &mut dyn Iterator<Item = &'k K>| keys.map(|k| format!("{k:?}")).collect();
    Error::new(ErrorKind::KeyMismatch {
        expected: show(&mut expected.into_iter()),
        found: show(&mut found.into_iter()),
    })
    .in_tree(tree)
}

/// Checks that keys read from a TreeDef are strictly increasing, so that
/// no value is dropped by a repeated key (the sorted maps).
pub(super) fn check_sorted<K: Static + Ord>(keys: &[K]) -> Result<(), Error> {
    match keys.windows(2).position(|w| w[0] >= w[1]) {
        None => Ok(()),
        Some(i) => Err(Error::custom(format!(
            "map keys in the TreeDef are not sorted and unique: {:?} then {:?}",
            keys[i],
            keys[i + 1]
        ))),
    }
}

/// Replaces the value in `slot` by `value.map_leaves(f)`, moving it out of
/// the slot and back: the way a map's values are mapped without rebuilding
/// the map (`map_leaves` takes its leaves by value, so `values_mut` alone
/// cannot do it).
///
/// # Safety
///
/// While `f` runs, the slot's value has been moved out. If `f` panics, the
/// slot is left holding a value that has been (or is being) dropped
/// elsewhere, so the caller must never drop or read it after an unwind:
/// the map that owns the slot must be held in [`ManuallyDrop`] while its
/// values are mapped, so that a panic leaks the map (sound) instead of
/// dropping that value a second time (unsound).
#[inline(always)]
unsafe fn map_value_in_place<Ns, V: Unflatten<Ns>, F: FnMut(V::Leaf) -> V::Leaf>(
    slot: &mut V,
    f: &mut F,
) {
    // SAFETY: `slot` is valid for reads and writes (a `&mut`); the value is
    // read out once and a value is written back before the slot is used
    // again. On unwind the caller leaks the slot's owner (see above).
    unsafe {
        let value = core::ptr::read(slot);
        core::ptr::write(slot, value.map_leaves(f));
    }
}

/// The leaf type of map `M`'s values in namespace `Ns`.
type LeafOf<Ns, M> = <<M as KeyedMap>::Value as Flatten<Ns>>::Leaf;

/// [`Flatten::leaf_count_hint`] of a map.
#[inline]
pub(super) fn leaf_count_hint<Ns, M: KeyedMap>(map: &M) -> usize
where
    M::Value: Flatten<Ns>,
{
    elements_hint::<Ns, M::Value>(map.len())
}

/// [`Flatten::flatten_into`] of a map.
#[inline]
pub(super) fn flatten_into<Ns, M: KeyedMap, S: Sink<LeafOf<Ns, M>>>(map: M, sink: &mut S)
where
    M::Value: Flatten<Ns>,
{
    sink.node(NodeRef::Map(map.len()));
    let mut keys = Vec::with_capacity(map.len());
    // The entries not handed on yet are held in a guard (a sink that
    // panics drops deep values with a walk, `unwind.rs`).
    let mut rest = Unwinding::entries::<Ns, _, _>(map.into_entries());
    while let Some((k, v)) = rest.get_mut().next() {
        sink.enter(KeyRef::Key(&k));
        v.flatten_into(sink);
        sink.exit();
        keys.push(k);
    }
    drop(rest.take());
    sink.map_keys(move || M::record_keys(keys));
}

/// [`Flatten::visit`] of a map.
#[inline]
pub(super) fn visit<'a, Ns, M: KeyedMap, V: Visit<LeafRef<'a, Ns, LeafOf<Ns, M>>>>(
    map: &'a M,
    visitor: &mut V,
) where
    M::Value: Flatten<Ns>,
{
    visitor.node(NodeRef::Map(map.len()));
    visitor.reserve_leaves(elements_hint::<Ns, M::Value>(map.len()));
    let entries = map.entries();
    M::Value::visit_entries(M::iter(&entries), visitor);
    visitor.map_keys(|| M::record_keys(M::iter(&entries).map(|(k, _)| k.clone()).collect()));
}

/// [`Flatten::visit_mut`] of a map.
#[inline]
pub(super) fn visit_mut<'a, Ns, M: KeyedMap, V: VisitMut<LeafMut<'a, Ns, LeafOf<Ns, M>>>>(
    map: &'a mut M,
    visitor: &mut V,
) where
    M::Value: Flatten<Ns>,
{
    visitor.node(NodeRef::Map(map.len()));
    for (k, v) in map.entries_mut() {
        visitor.enter(KeyRef::Key(k));
        v.visit_mut(visitor);
        visitor.exit();
    }
}

/// [`Unflatten::map_leaves`] of a map: the values are mapped in place, in
/// leaf order (for a `HashMap` too, not in the table's order: `f` may count
/// or record what it sees, and the table's order differs from run to run
/// and from map to map, so only the leaf order gives the same calls as
/// `flatten` and the same result every time). The map's nodes or table and
/// its keys are kept and nothing is rehashed. If `f` (or the keys' `Ord`)
/// panics, the map is leaked, not dropped.
#[inline]
pub(super) fn map_leaves<Ns, M: KeyedMap, F: FnMut(LeafOf<Ns, M>) -> LeafOf<Ns, M>>(
    map: M,
    f: &mut F,
) -> M
where
    M::Value: Unflatten<Ns>,
{
    // Held in `ManuallyDrop` while values are moved out and back, so a
    // panic in `f` leaks the map instead of dropping a moved-out value.
    let mut map = ManuallyDrop::new(map);
    for (_, v) in map.entries_mut() {
        // SAFETY: `map` is in `ManuallyDrop`, and nothing but
        // `map_value_in_place` touches the slot until it is refilled.
        unsafe { map_value_in_place(v, f) };
    }
    ManuallyDrop::into_inner(map)
}

/// [`Flatten::zip_check`] of a map.
#[inline]
pub(super) fn zip_check<Ns, M: KeyedMap, const N: usize>(
    map: &M,
    others: [&M; N],
) -> Result<(), Error>
where
    M::Value: Flatten<Ns>,
{
    map.check_keys(others)?;
    if <M::Value as Flatten<Ns>>::UNIFORM_LEAVES.is_some() {
        return Ok(());
    }
    if M::CHECK_UNORDERED_FIRST {
        let check = |k, v: &M::Value| v.zip_check(others.map(|o| o.get(k).unwrap_or(v)));
        if map.unordered().all(|(k, v)| check(k, v).is_ok()) {
            return Ok(());
        }
    }
    // A closure, not `M::cursor` itself, which Rust 1.88 (the MSRV)
    // refuses here ("`M` does not live long enough").
    #[allow(clippy::redundant_closure)]
    let mut cursors = others.map(|o| M::cursor(o));
    let entries = map.entries();
    for (k, v) in M::iter(&entries) {
        // Equal key sets (checked above): every cursor has a value.
        let vs = cursors.each_mut().map(|c| M::partner(c, k).unwrap_or(v));
        v.zip_check(vs)
            .map_err(|e| e.at(KeyEntry::key(k.clone())))?;
    }
    Ok(())
}

/// [`Unflatten::zip_with_prechecked`] of a map: values paired with the
/// first map's entries (by position or by key, see [`KeyedMap`]); where
/// another map has no partner (the check was skipped), `map`'s own value.
#[inline]
pub(super) fn zip_with_prechecked<'a, Ns, M: KeyedMap, const N: usize, F>(
    map: &'a M,
    others: [&'a M; N],
    f: &mut F,
) -> M
where
    M::Value: Unflatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, LeafOf<Ns, M>>, [LeafRef<'a, Ns, LeafOf<Ns, M>>; N]) -> LeafOf<Ns, M>,
{
    // Paired by position, a map of another size (the check was skipped)
    // is replaced by `map`.
    let others = if M::POSITIONAL {
        others.map(|o| if o.len() == map.len() { o } else { map })
    } else {
        others
    };
    // A closure, not `M::cursor` itself, which Rust 1.88 (the MSRV)
    // refuses here ("`M` does not live long enough").
    #[allow(clippy::redundant_closure)]
    let mut cursors = others.map(|o| M::cursor(o));
    let entries = map.entries();
    // The entries built are held in a guard (a panic in `f` drops deep
    // values with a walk, `unwind.rs`).
    let mut out = Unwinding::entries::<Ns, _, _>(M::builder(map.len()));
    for (k, v) in M::iter(&entries) {
        let vs = cursors.each_mut().map(|c| M::partner(c, k).unwrap_or(v));
        let value = v.zip_with_prechecked(vs, f);
        // The keys are the map's own, so none repeats.
        if let Err((_, value)) = M::push(out.get_mut(), k.clone(), value) {
            drop_deep::<Ns, M::Value>(value);
        }
    }
    M::finish(out.take())
}

/// [`Flatten::zip_mut_prechecked`] of a map; where another map has no
/// partner (the check was skipped), the value is left as it is.
#[inline]
pub(super) fn zip_mut_prechecked<'a, Ns, M: KeyedMap, const N: usize, F>(
    map: &'a mut M,
    others: [&'a M; N],
    f: &mut F,
) where
    M::Value: Flatten<Ns>,
    F: FnMut(LeafMut<'a, Ns, LeafOf<Ns, M>>, [LeafRef<'a, Ns, LeafOf<Ns, M>>; N]),
{
    // Paired by position, maps of another size are not paired at all.
    if M::POSITIONAL && others.iter().any(|o| o.len() != map.len()) {
        return;
    }
    // A closure, not `M::cursor` itself, which Rust 1.88 (the MSRV)
    // refuses here ("`M` does not live long enough").
    #[allow(clippy::redundant_closure)]
    let mut cursors = others.map(|o| M::cursor(o));
    for (k, v) in map.entries_mut() {
        if let Some(vs) = all_some(cursors.each_mut().map(|c| M::partner(c, k))) {
            v.zip_mut_prechecked(vs, f);
        }
    }
}

/// [`Unflatten::unflatten_from`] of a map: rebuilt from the TreeDef's keys
/// (checked by [`KeyedMap::builder`] and [`KeyedMap::push`]: keys that
/// repeat are an error, a value would be lost).
#[inline]
pub(super) fn unflatten_from<Ns, M: KeyedMap, S: Source<LeafOf<Ns, M>>>(
    source: &mut S,
) -> Result<M, Error>
where
    M::Value: Unflatten<Ns>,
{
    let keys = source.map_node::<M::Key>()?;
    M::check_read_keys(&keys)?;
    // The entries built are held in a guard (an error or a panic further
    // on drops deep values with a walk, `unwind.rs`).
    let mut out = Unwinding::entries::<Ns, _, _>(M::builder(keys.len()));
    for k in keys {
        match M::Value::unflatten_from(source) {
            Ok(v) => {
                if let Err((e, v)) = M::push(out.get_mut(), k, v) {
                    drop_deep::<Ns, M::Value>(v);
                    return Err(e);
                }
            }
            Err(e) => return Err(e.at(KeyEntry::key(k))),
        }
    }
    Ok(M::finish(out.take()))
}

/// `Flatten<Ns>` and `Unflatten<Ns>` for a map type that implements
/// [`KeyedMap`], for every namespace with the std containers: each method
/// calls the shared body above. The value type parameter is named `V`.
macro_rules! keyed_map_impls {
    (impl<$($p:ident),*> $ty:ty where [$($bounds:tt)*]) => {
        impl<Ns: $crate::StdContainers, $($p),*> $crate::Flatten<Ns> for $ty
        where
            V: $crate::Flatten<Ns>,
            $($bounds)*
        {
            type Leaf = V::Leaf;

            #[inline]
            fn leaf_count_hint(&self) -> usize {
                super::maps::leaf_count_hint::<Ns, Self>(self)
            }
            #[inline]
            fn flatten_into<S: $crate::Sink<Self::Leaf>>(self, sink: &mut S) {
                super::maps::flatten_into::<Ns, Self, S>(self, sink)
            }
            #[inline]
            fn visit<'a, V2: $crate::Visit<$crate::LeafRef<'a, Ns, Self::Leaf>>>(
                &'a self,
                visitor: &mut V2,
            ) {
                super::maps::visit::<Ns, Self, V2>(self, visitor)
            }
            #[inline]
            fn visit_mut<'a, V2: $crate::VisitMut<$crate::LeafMut<'a, Ns, Self::Leaf>>>(
                &'a mut self,
                visitor: &mut V2,
            ) {
                super::maps::visit_mut::<Ns, Self, V2>(self, visitor)
            }
            #[inline]
            fn zip_check<const N: usize>(
                &self,
                others: [&Self; N],
            ) -> Result<(), $crate::Error> {
                super::maps::zip_check::<Ns, Self, N>(self, others)
            }
            $crate::traits::flatten::zip_mut_method!(N, |this, others, f| {
                super::maps::zip_mut_prechecked::<Ns, Self, N, F>(this, others, f)
            });
        }

        impl<Ns: $crate::StdContainers, $($p),*> $crate::Unflatten<Ns> for $ty
        where
            V: $crate::Unflatten<Ns>,
            $($bounds)*
        {
            #[inline]
            fn unflatten_from<S: $crate::Source<Self::Leaf>>(
                source: &mut S,
            ) -> Result<Self, $crate::Error> {
                super::maps::unflatten_from::<Ns, Self, S>(source)
            }
            #[inline]
            fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
                super::maps::map_leaves::<Ns, Self, F>(self, f)
            }
            $crate::traits::flatten::zip_with_method!(N, |this, others, f| {
                super::maps::zip_with_prechecked::<Ns, Self, N, F>(this, others, f)
            });
        }
    };
}
pub(super) use keyed_map_impls;

/// The [`KeyedMap`] methods of a map walked in its own order (`BTreeMap`'s
/// sorted keys, `IndexMap`'s insertion order), which lends itself as its
/// entries; `$map` names the type, whose own methods they call.
macro_rules! walked_in_own_order {
    ($map:ident) => {
        #[inline]
        fn len(&self) -> usize {
            $map::len(self)
        }
        #[inline]
        fn into_entries(self) -> impl Iterator<Item = (K, V)> {
            self.into_iter()
        }
        type Entries<'a>
            = &'a Self
        where
            Self: 'a;
        #[inline]
        fn entries(&self) -> &Self {
            self
        }
        #[inline]
        fn iter<'s, 'a: 's>(
            entries: &'s &'a Self,
        ) -> impl ExactSizeIterator<Item = (&'a K, &'a V)> + 's
        where
            Self: 'a,
        {
            entries.iter()
        }
        #[inline]
        fn entries_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
            self.iter_mut()
        }
        #[inline]
        fn unordered(&self) -> impl Iterator<Item = (&K, &V)> {
            self.iter()
        }
        #[inline]
        fn get(&self, key: &K) -> Option<&V> {
            $map::get(self, key)
        }
    };
}
pub(super) use walked_in_own_order;

/// The [`KeyedMap`] methods of a map whose values pair with another map's
/// by key (`HashMap`, `IndexMap`), built in place (its own `Builder`).
#[cfg(any(feature = "std", feature = "indexmap"))]
macro_rules! paired_by_key {
    () => {
        type Cursor<'a>
            = &'a Self
        where
            Self: 'a;
        #[inline]
        fn cursor(other: &Self) -> &Self {
            other
        }
        #[inline]
        fn partner<'a>(cursor: &mut &'a Self, key: &K) -> Option<&'a V>
        where
            Self: 'a,
        {
            cursor.get(key)
        }
        #[inline]
        fn finish(builder: Self) -> Self {
            builder
        }
    };
}
#[cfg(any(feature = "std", feature = "indexmap"))]
pub(super) use paired_by_key;
