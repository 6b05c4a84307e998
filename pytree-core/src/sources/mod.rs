//! Reading a [`TreeDef`](crate::TreeDef) back into a value.
//!
//! - `def_source`: [`DefSource`](crate::DefSource), which checks every record
//!   against what the target type asks for.
//! - `trusted`: a TreeDef that passed those checks for a type is read again
//!   as that type without them.
//! - `elements`: the elements of a sequence, each built straight into
//!   its `Vec` (the provided `Unflatten::unflatten_vec`).

pub(crate) mod def_source;
pub(crate) mod elements;
pub(crate) mod trusted;
