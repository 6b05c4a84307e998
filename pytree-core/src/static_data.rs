//! Type-erased static (meta) data: the configuration fields of a struct and
//! the keys of a map, kept in a [`TreeDef`](crate::TreeDef) rather than as
//! leaves. Erased values keep `Clone`, `Eq`, `Hash`, `Debug`, `Send` and
//! `Sync`, so a TreeDef that holds them can be compared, hashed, printed and
//! sent across threads.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::any::{Any, TypeId};
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};

/// What a type needs to be static data: JAX's requirement that aux data be
/// hashable and comparable, plus `Clone` (to rebuild values), `Debug` (to
/// print TreeDefs) and `Send + Sync + 'static` (to erase it and share it).
///
/// Implemented for every type that meets the bounds.
///
/// ```
/// fn is_static<T: pytree_std::Static>() {}
/// is_static::<String>();
/// is_static::<(u8, bool)>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be static data of a pytree",
    label = "static fields must be Clone + Eq + Hash + Debug + Send + Sync + 'static",
    note = "static (meta) fields are kept in the TreeDef, which is compared, hashed and printed"
)]
pub trait Static: Any + Clone + Eq + Hash + fmt::Debug + Send + Sync {}

impl<T: Any + Clone + Eq + Hash + fmt::Debug + Send + Sync> Static for T {}

/// The object-safe face of an erased value.
trait DynStatic: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn eq_dyn(&self, other: &dyn DynStatic) -> bool;
    fn hash_dyn(&self, state: &mut dyn Hasher);
    fn fmt_whole(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn item_count(&self) -> usize;
    fn fmt_item(&self, index: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn item(&self, index: usize) -> Option<StaticValue>;
    fn type_name(&self) -> &'static str;
    /// True for map keys (made by `StaticValue::keys`/`ordered_keys`).
    fn is_keys(&self) -> bool {
        false
    }
    /// Map keys only: compares item `i` with item `j` of `other` (keys of
    /// the same type). `None` when the types differ; `Some(None)` when the
    /// keys are equal-comparable but carry no order.
    fn key_cmp(&self, _i: usize, _other: &dyn DynStatic, _j: usize) -> Option<KeyOrder> {
        None
    }
    /// Map keys only: new keys made of `picks` (source, item) from
    /// `sources`, all holding keys of this type; keeps this value's order.
    fn select_keys(
        &self,
        _picks: &[(usize, usize)],
        _sources: &[&StaticValue],
    ) -> Option<StaticValue> {
        None
    }
}

/// How two map keys compare: by their order if the keys carry one,
/// else only equal or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    Ordered(Ordering),
    Unordered { equal: bool },
}

/// One erased value.
struct Single<T>(T);
/// The keys of a map, erased as one value whose items print one by one;
/// `order` is the keys' `Ord` when they were erased with
/// [`StaticValue::ordered_keys`] (operations that merge key sets keep the
/// result sorted with it).
struct Keys<K> {
    keys: Vec<K>,
    order: Option<fn(&K, &K) -> Ordering>,
}

impl<T: Static> DynStatic for Single<T> {
    fn as_any(&self) -> &dyn Any {
        &self.0
    }
    fn eq_dyn(&self, other: &dyn DynStatic) -> bool {
        other.as_any().downcast_ref::<T>() == Some(&self.0)
    }
    fn hash_dyn(&self, mut state: &mut dyn Hasher) {
        TypeId::of::<T>().hash(&mut state);
        self.0.hash(&mut state);
    }
    fn fmt_whole(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
    fn item_count(&self) -> usize {
        1
    }
    fn fmt_item(&self, _index: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
    fn item(&self, index: usize) -> Option<StaticValue> {
        (index == 0).then(|| StaticValue::new(self.0.clone()))
    }
    fn type_name(&self) -> &'static str {
        core::any::type_name::<T>()
    }
}

impl<K: Static> DynStatic for Keys<K> {
    fn as_any(&self) -> &dyn Any {
        &self.keys
    }
    fn eq_dyn(&self, other: &dyn DynStatic) -> bool {
        other.as_any().downcast_ref::<Vec<K>>() == Some(&self.keys)
    }
    fn hash_dyn(&self, mut state: &mut dyn Hasher) {
        TypeId::of::<Vec<K>>().hash(&mut state);
        self.keys.hash(&mut state);
    }
    fn fmt_whole(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.keys, f)
    }
    fn item_count(&self) -> usize {
        self.keys.len()
    }
    fn is_keys(&self) -> bool {
        true
    }
    fn fmt_item(&self, index: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.keys.get(index) {
            Some(key) => fmt::Debug::fmt(key, f),
            None => f.write_str("?"),
        }
    }
    fn key_cmp(&self, i: usize, other: &dyn DynStatic, j: usize) -> Option<KeyOrder> {
        let a = self.keys.get(i)?;
        let b = other.as_any().downcast_ref::<Vec<K>>()?.get(j)?;
        Some(match self.order {
            Some(cmp) => KeyOrder::Ordered(cmp(a, b)),
            None => KeyOrder::Unordered { equal: a == b },
        })
    }
    fn select_keys(
        &self,
        picks: &[(usize, usize)],
        sources: &[&StaticValue],
    ) -> Option<StaticValue> {
        let keys = picks
            .iter()
            .map(|&(s, j)| sources.get(s)?.downcast_ref::<Vec<K>>()?.get(j).cloned())
            .collect::<Option<Vec<K>>>()?;
        Some(StaticValue(Arc::new(Keys {
            keys,
            order: self.order,
        })))
    }
    fn item(&self, index: usize) -> Option<StaticValue> {
        self.keys
            .get(index)
            .map(|key| StaticValue::new(key.clone()))
    }
    fn type_name(&self) -> &'static str {
        core::any::type_name::<Vec<K>>()
    }
}

/// A type-erased static value, shared (cloning is a reference-count bump).
///
/// ```
/// use pytree_std::StaticValue;
/// let a = StaticValue::new(String::from("relu"));
/// assert_eq!(a, StaticValue::new(String::from("relu")));
/// assert_ne!(a, StaticValue::new(7u8));
/// assert_eq!(a.downcast_ref::<String>().map(String::as_str), Some("relu"));
/// assert_eq!(format!("{a:?}"), "\"relu\"");
/// ```
#[derive(Clone)]
pub struct StaticValue(Arc<dyn DynStatic>);

impl StaticValue {
    /// Erases one value. Erasing a `StaticValue` returns it unchanged (an
    /// erased value is never wrapped twice, so it still compares equal and
    /// downcasts to what it holds).
    ///
    /// ```
    /// use pytree_std::StaticValue;
    /// let v = StaticValue::new(3u32);
    /// assert_eq!(v.downcast_ref::<u32>(), Some(&3));
    /// assert_eq!(StaticValue::new(v.clone()), v);
    /// assert_eq!(StaticValue::new(v).downcast_ref::<u32>(), Some(&3));
    /// ```
    pub fn new<T: Static>(value: T) -> Self {
        if let Some(already) = (&value as &dyn Any).downcast_ref::<StaticValue>() {
            return already.clone();
        }
        StaticValue(Arc::new(Single(value)))
    }

    /// Erases the keys of a map, in the map's flattening order. The value
    /// downcasts to `Vec<K>` and prints key by key.
    ///
    /// ```
    /// let v = pytree_std::StaticValue::keys(vec!["a", "b"]);
    /// assert_eq!(v.downcast_ref::<Vec<&str>>().map(Vec::len), Some(2));
    /// assert_eq!(v.item_count(), 2);
    /// ```
    pub fn keys<K: Static>(keys: Vec<K>) -> Self {
        StaticValue(Arc::new(Keys { keys, order: None }))
    }

    /// Erases the keys of a map whose keys are ordered, sorted ascending (as
    /// `BTreeMap` and the sorted flattening of `HashMap` give them). Equal to
    /// [`keys`](StaticValue::keys) of the same keys; in addition, operations
    /// that merge the key sets of several trees (the outer mode of
    /// `Treelize`) keep the merged keys sorted.
    ///
    /// ```
    /// use pytree_std::StaticValue;
    /// let v = StaticValue::ordered_keys(vec!["a", "b"]);
    /// assert_eq!(v, StaticValue::keys(vec!["a", "b"]));
    /// assert_eq!(v.item_debug(1), "\"b\"");
    /// ```
    pub fn ordered_keys<K: Static + Ord>(keys: Vec<K>) -> Self {
        StaticValue(Arc::new(Keys {
            keys,
            order: Some(K::cmp),
        }))
    }

    /// The value, if it is a `T` (for keys: a `Vec<K>`).
    ///
    /// ```
    /// let v = pytree_std::StaticValue::new(1i8);
    /// assert!(v.downcast_ref::<i16>().is_none());
    /// ```
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }

    /// The number of items: the number of keys for map keys, else 1.
    ///
    /// ```
    /// assert_eq!(pytree_std::StaticValue::new("x").item_count(), 1);
    /// ```
    pub fn item_count(&self) -> usize {
        self.0.item_count()
    }

    /// Item `index` as a value of its own: one key of a map's keys (a `K`),
    /// or the value itself for index 0 of a single value.
    ///
    /// ```
    /// let keys = pytree_std::StaticValue::keys(vec![String::from("a"), String::from("b")]);
    /// let b = keys.item(1).unwrap();
    /// assert_eq!(b.downcast_ref::<String>().map(String::as_str), Some("b"));
    /// assert!(keys.item(2).is_none());
    /// ```
    pub fn item(&self, index: usize) -> Option<StaticValue> {
        self.0.item(index)
    }

    /// The Rust type name of the erased value (`Vec<K>` for map keys), for
    /// messages.
    ///
    /// ```
    /// assert_eq!(pytree_std::StaticValue::new(1u8).type_name(), "u8");
    /// ```
    pub fn type_name(&self) -> &'static str {
        self.0.type_name()
    }

    /// Debug-prints item `index` (one key of a map's keys; the value itself
    /// otherwise).
    ///
    /// ```
    /// let v = pytree_std::StaticValue::keys(vec![10, 20]);
    /// assert_eq!(v.item_debug(1), "20");
    /// ```
    pub fn item_debug(&self, index: usize) -> alloc::string::String {
        alloc::format!("{}", ItemDebug(self, index))
    }

    /// True for map keys (made by [`keys`](StaticValue::keys) or
    /// [`ordered_keys`](StaticValue::ordered_keys)).
    pub(crate) fn is_keys(&self) -> bool {
        self.0.is_keys()
    }

    pub(crate) fn fmt_item(&self, index: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_item(index, f)
    }

    /// Compares key `i` of these map keys with key `j` of `other`; `None`
    /// when either is not map keys or the key types differ.
    pub(crate) fn key_cmp(&self, i: usize, other: &StaticValue, j: usize) -> Option<KeyOrder> {
        self.0.key_cmp(i, &*other.0, j)
    }

    /// Map keys made of `picks` (source index, key index) from `sources`,
    /// which hold keys of the same type as `self`.
    pub(crate) fn select_keys(
        &self,
        picks: &[(usize, usize)],
        sources: &[&StaticValue],
    ) -> Option<StaticValue> {
        self.0.select_keys(picks, sources)
    }

    /// True when both handles share one allocation (a cheap pre-check).
    fn same_allocation(&self, other: &StaticValue) -> bool {
        core::ptr::addr_eq(Arc::as_ptr(&self.0), Arc::as_ptr(&other.0))
    }
}

struct ItemDebug<'a>(&'a StaticValue, usize);

impl fmt::Display for ItemDebug<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_item(self.1, f)
    }
}

impl PartialEq for StaticValue {
    fn eq(&self, other: &Self) -> bool {
        self.same_allocation(other) || self.0.eq_dyn(&*other.0)
    }
}

impl Eq for StaticValue {}

impl Hash for StaticValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash_dyn(state);
    }
}

impl fmt::Debug for StaticValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_whole(f)
    }
}
