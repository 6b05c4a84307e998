//! serde for any pytree (feature `serde`) as its TreeDef and its leaves:
//! the [`Serialized`] wrapper, and [`serialize`] / [`deserialize`] for
//! `#[serde(with = "pytree_std::serialized")]`.
//!
//! The document is `{"treedef": <TreeDef>, "leaves": [...]}`; reading it
//! unflattens with the TreeDef read, so a document of another structure is
//! an error (naming the path), not a wrong value. The TreeDef's static
//! fields must be of the types its serde supports (see `TreeDef`'s
//! `Serialize`): `()`, `bool`, `char`, integers, `String`, `&'static str`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::std_namespace::Std;
use pytree_core::{Flatten, LeafRef, TreeDef, Unflatten};

/// A pytree that (de)serializes as its TreeDef and leaves.
///
/// ```
/// use pytree_std::{serialized::Serialized, PyTree};
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: f32, b: f32, #[pytree(static)] name: String }
/// let json = serde_json::to_string(&Serialized(Linear { w: 1.0, b: 2.0, name: "l".into() })).unwrap();
/// let Serialized(back): Serialized<Linear> = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, Linear { w: 1.0, b: 2.0, name: "l".into() });
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Serialized<T>(pub T);

#[derive(Serialize)]
struct Written<R> {
    treedef: TreeDef,
    leaves: Vec<R>,
}

#[derive(Deserialize)]
struct Read<L> {
    treedef: TreeDef,
    leaves: Vec<L>,
}

/// Writes `value` as `{"treedef": ..., "leaves": [...]}`. In a
/// human-readable format a NaN or infinite float leaf is an error naming its
/// key path: JSON would write `null`, which does not read back as a float
/// (binary formats keep such leaves exactly).
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Checkpoint { #[serde(serialize_with = "pytree_std::serialized::serialize")] params: Vec<f32> }
/// let json = serde_json::to_string(&Checkpoint { params: vec![1.0] }).unwrap();
/// assert_eq!(json, r#"{"params":{"treedef":{"schemas":[],"nodes":[{"seq":1},{"leaves":1}]},"leaves":[1.0]}}"#);
/// let err = serde_json::to_string(&Checkpoint { params: vec![1.0, f32::NAN] }).unwrap_err();
/// assert!(err.to_string().starts_with("at [1]: the leaf NaN cannot be written"), "{err}");
/// ```
pub fn serialize<T, S>(value: &T, serializer: S) -> Result<S::Ok, S::Error>
where
    T: Flatten<Std>,
    for<'a> LeafRef<'a, Std, T::Leaf>: Serialize,
    S: Serializer,
{
    let leaves = crate::walk::leaves(value);
    if serializer.is_human_readable() {
        if let Some((i, v)) = leaves
            .iter()
            .enumerate()
            .find_map(|(i, leaf)| Some((i, crate::finite::non_finite(leaf)?)))
        {
            return Err(unwritable(value, i, v));
        }
    }
    Written {
        treedef: crate::walk::structure(value),
        leaves,
    }
    .serialize(serializer)
}

/// The error for leaf `i` of `value`, a non-finite float, at its path.
#[cold]
fn unwritable<T: Flatten<Std>, E: serde::ser::Error>(value: &T, i: usize, v: f64) -> E {
    let path = crate::paths::leaves_with_path(value)
        .into_iter()
        .nth(i)
        .map(|(path, _)| path.to_string())
        .unwrap_or_else(|| format!("leaf {i}"));
    E::custom(format_args!("at {path}: {}", crate::finite::message(v)))
}

/// Reads what [`serialize`] wrote and unflattens it as a `T`.
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct Checkpoint { #[serde(deserialize_with = "pytree_std::serialized::deserialize")] params: (f32, f32) }
/// let json = r#"{"params":{"treedef":{"schemas":[],"nodes":[{"tuple":2},{"leaves":2}]},"leaves":[1.0,2.0]}}"#;
/// assert_eq!(serde_json::from_str::<Checkpoint>(json).unwrap().params, (1.0, 2.0));
/// let wrong = r#"{"params":{"treedef":{"schemas":[],"nodes":[{"seq":2},{"leaves":2}]},"leaves":[1.0,2.0]}}"#;
/// let err = serde_json::from_str::<Checkpoint>(wrong).err().unwrap();
/// assert!(err.to_string().starts_with("at <root>: node mismatch: expected a tuple of arity 2, found a sequence of length 2"));
/// ```
pub fn deserialize<'de, T, D>(deserializer: D) -> Result<T, D::Error>
where
    T: Unflatten<Std>,
    T::Leaf: Deserialize<'de>,
    D: Deserializer<'de>,
{
    let read = Read::<T::Leaf>::deserialize(deserializer)?;
    crate::walk::unflatten(&read.treedef, read.leaves).map_err(D::Error::custom)
}

impl<T> Serialize for Serialized<T>
where
    T: Flatten<Std>,
    for<'a> LeafRef<'a, Std, T::Leaf>: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize(&self.0, serializer)
    }
}

impl<'de, T> Deserialize<'de> for Serialized<T>
where
    T: Unflatten<Std>,
    T::Leaf: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer).map(Serialized)
    }
}
