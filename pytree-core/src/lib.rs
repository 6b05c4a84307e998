//! # pytree-core
//!
//! The core of pytree: JAX-style pytrees for Rust. A pytree is a value made
//! of containers (structs, sequences, tuples, maps, `Option`, enums) whose
//! non-container parts are *leaves*; flattening splits it into its leaves
//! and a [`TreeDef`], and unflattening puts them back together.
//!
//! This crate is `no_std` (with `alloc`) and defines the traits, the TreeDef
//! and the operations generically over a *namespace*. Users depend on
//! `pytree-std`, which fixes the namespace to `Std`, implements the traits
//! for std types and re-exports everything here.
//!
//! ## Contents
//! - [`Flatten`], [`Unflatten`], [`Source`]: the traits (module `flatten`).
//! - [`Sink`], [`Visit`], [`VisitMut`], [`NodeRef`]: the walk callbacks
//!   (module `visit`).
//! - [`TreeDef`], [`TreeDefBuilder`], [`NodeKind`]: the structure
//!   (module `treedef`); [`DefSource`] reads it back (module `source`).
//! - [`Schema`], [`FieldSchema`], [`FieldStyle`]: what the derive records
//!   about a struct (module `schema`).
//! - [`StaticValue`], [`Static`]: type-erased meta data (module `static_data`).
//! - [`KeyPath`], [`KeyEntry`], [`KeyRef`]: places in a tree (module `key_path`).
//! - [`Error`], [`ErrorKind`] (module `error`).
//! - [`flatten`], [`unflatten`], [`structure`], [`leaves`], [`map`],
//!   [`try_map`], [`for_each`], [`for_each_mut`] (module `ops`).
//! - [`impl_leaf!`]: declare leaf types of a namespace (module `leaf`).
//! - `Box<T>` impls for every namespace (module `fundamental`).
//! - Deep recursion: walks continue on a heap-allocated stack segment when
//!   the stack runs low, with the `std` feature (module `stack`).
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod error;
mod flatten;
mod fundamental;
mod key_path;
mod leaf;
mod ops;
mod schema;
mod source;
mod stack;
mod static_data;
mod treedef;
mod visit;

#[doc(hidden)]
pub mod __private;

pub use error::{Error, ErrorKind};
pub use flatten::{Flatten, Source, Unflatten};
pub use key_path::{ErasableKey, KeyEntry, KeyPath, KeyRef};
pub use ops::{flatten, for_each, for_each_mut, leaves, map, structure, try_map, unflatten};
pub use schema::{FieldSchema, FieldStyle, Schema};
pub use source::DefSource;
pub use static_data::{Static, StaticValue};
pub use treedef::{NodeKind, TreeDef, TreeDefBuilder};
pub use visit::{NodeRef, Sink, Visit, VisitMut};
