//! `IndexMap<K, V, S>`: an insertion-ordered map node (optree's
//! `dict_insertion_ordered`, Python's dict order), as the maps of
//! [`Tree`](crate::Tree) are. One `Map(len)` node whose children are the
//! values in the map's own order, keyed `[key]`; the keys are static data
//! recorded *unordered*
//! ([`StaticValue::keys`](pytree_core::StaticValue::keys)), so operations
//! that merge key sets (`Treelize`, prefix trees) follow the first tree's
//! order rather than sorting. Keys need `Clone + Eq + Hash + Debug + Send + Sync`, not
//! `Ord`.
//!
//! In multi-tree operations (`zip_check`, `map_n`, `zip_mut`)
//! entries pair by key: two maps with the same keys in different orders
//! zip, and the result has the first map's order. Their TreeDefs still
//! differ (the order is part of the structure), so `tree_equal` and
//! `TreeDef::diff` tell them apart, as they do for `Tree`s.
//!
//! Always available: pytree-std depends on indexmap for `Tree`, so a
//! feature gate would save nothing. The impls are pytree-core's (its
//! feature `indexmap`, which this crate turns on), for every namespace
//! with the std containers ([`std_containers!`](crate::std_containers)).
//!
//! ```
//! use pytree_std::indexmap::IndexMap;
//! let m = IndexMap::from([("z", 1), ("a", 2)]);
//! let (leaves, def) = pytree_std::flatten(m.clone());
//! assert_eq!(leaves, [1, 2]); // insertion order, not sorted
//! assert_eq!(def.to_string(), r#"{"z": *, "a": *}"#);
//! let back: IndexMap<&str, i32> = pytree_std::unflatten(&def, leaves)?;
//! assert!(back.keys().eq(&["z", "a"]));
//! // Entries pair by key in multi-tree operations.
//! let other = IndexMap::from([("a", 20), ("z", 10)]);
//! let sum = pytree_std::walk::map_n(&m, [&other], |x, [y]| x + y)?;
//! assert_eq!(sum, IndexMap::from([("z", 11), ("a", 22)]));
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! Paths name the keys; values are mapped in place, in the map's order; a
//! map is rebuilt in the TreeDef's key order, and a key that appears twice
//! there is an error (a value would be lost).
//!
//! ```
//! use pytree_std::indexmap::IndexMap;
//! let mut m = IndexMap::from([("b".to_string(), vec![1.0f32]), ("a".to_string(), vec![2.0])]);
//! pytree_std::for_each_mut(&mut m, |x| *x *= 10.0);
//! assert_eq!(m["b"], [10.0]);
//! let paths: Vec<String> =
//!     pytree_std::paths::leaves_with_path(&m).iter().map(|(p, _)| p.to_string()).collect();
//! assert_eq!(paths, [r#"["b"][0]"#, r#"["a"][0]"#]);
//! let def = pytree_std::structure(&IndexMap::from([(2u8, 0.0f32), (1, 0.0)]));
//! let back: IndexMap<u8, f32> = pytree_std::unflatten(&def, [5.0, 6.0])?;
//! assert!(back.keys().eq(&[2, 1]));
//! # Ok::<(), pytree_std::Error>(())
//! ```
