//! Places in a tree.
//!
//! - `key_path`: [`KeyPath`](crate::KeyPath) and its entries.
//! - `key_str`: a path as a string in JAX's `keystr` styles.
//! - `tracker`: the path a walk is at, kept as it goes.

pub(crate) mod key_path;
pub(crate) mod key_str;
pub(crate) mod tracker;
