//! Places in a tree.
//!
//! - `key_path`: [`KeyPath`](crate::KeyPath) and its entries.
//! - `key_str`: a path as a string in JAX's `keystr` styles.

pub(crate) mod key_path;
pub(crate) mod key_str;
