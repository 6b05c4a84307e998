//! Reading a [`TreeDef`](crate::TreeDef) back into a value.
//!
//! - `source`: [`Source`](crate::Source), what `Unflatten` reads from.
//! - `def_source`: [`DefSource`](crate::DefSource), which checks every record
//!   against what the target type asks for.
//! - `trusted`: a TreeDef that passed those checks for a type is read again
//!   as that type without them.

pub(crate) mod def_source;
pub(crate) mod source;
pub(crate) mod trusted;
