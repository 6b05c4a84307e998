//! The rule for leaves a document cannot hold (feature `serde`): in a
//! human-readable format, a NaN or infinite `f32`/`f64` leaf is an error
//! naming its key path; binary formats write it as it is.
//!
//! Why an error and not a lossless encoding: JSON has no NaN or infinity,
//! and serde_json writes them as `null`, which a [`Tree`](crate::Tree)
//! document reads back as a `None` node (two leaves silently become none)
//! and a [`Serialized`](crate::serialized::Serialized) document cannot read
//! back as a float at all. Encoding them as strings (`"NaN"`) would make a
//! `Tree<f64>` document mean something else to every other JSON reader,
//! and reading it back would need to know the leaf type, which a generic
//! `Tree<L>` does not. A serializer cannot tell which human-readable format
//! it writes, so YAML or RON, which could hold them, refuse them too; a
//! binary format (bincode, postcard, CBOR, MessagePack: `is_human_readable`
//! is false) keeps the IEEE-754 value exactly.

use std::fmt;

use serde::ser::{self, Impossible, Serialize, Serializer};

/// The non-finite float `leaf` serializes as, if it serializes as one (an
/// `f32`, `f64`, or a newtype or `Some` of one).
pub(crate) fn non_finite<L: Serialize + ?Sized>(leaf: &L) -> Option<f64> {
    match leaf.serialize(Probe) {
        Ok(Some(v)) if !v.is_finite() => Some(v),
        _ => None,
    }
}

/// The message for a leaf that `non_finite` caught.
pub(crate) fn message(value: f64) -> String {
    format!(
        "the leaf {value} cannot be written: a human-readable format has no NaN or infinite \
         numbers (JSON would write null, which does not read back as this leaf)"
    )
}

/// A serializer that only looks for a float.
struct Probe;

/// Anything but a float: the probe stops.
#[derive(Debug)]
struct NotFloat;

impl fmt::Display for NotFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a float")
    }
}

impl std::error::Error for NotFloat {}

impl ser::Error for NotFloat {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        NotFloat
    }
}

type Nothing = Impossible<Option<f64>, NotFloat>;

macro_rules! not_a_float {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Option<f64>, NotFloat> {
            Ok(None)
        })*
    };
}

/// A compound value is not a float: the probe stops.
macro_rules! compound {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Nothing, NotFloat> {
            Err(NotFloat)
        })*
    };
}

impl Serializer for Probe {
    type Ok = Option<f64>;
    type Error = NotFloat;
    type SerializeSeq = Nothing;
    type SerializeTuple = Nothing;
    type SerializeTupleStruct = Nothing;
    type SerializeTupleVariant = Nothing;
    type SerializeMap = Nothing;
    type SerializeStruct = Nothing;
    type SerializeStructVariant = Nothing;

    fn serialize_f32(self, v: f32) -> Result<Option<f64>, NotFloat> {
        Ok(Some(f64::from(v)))
    }
    fn serialize_f64(self, v: f64) -> Result<Option<f64>, NotFloat> {
        Ok(Some(v))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Option<f64>, NotFloat> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Option<f64>, NotFloat> {
        value.serialize(self)
    }
    not_a_float!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Option<f64>, NotFloat> {
        Ok(None)
    }
    compound!(
        serialize_seq(Option<usize>),
        serialize_tuple(usize),
        serialize_tuple_struct(&'static str, usize),
        serialize_tuple_variant(&'static str, u32, &'static str, usize),
        serialize_map(Option<usize>),
        serialize_struct(&'static str, usize),
        serialize_struct_variant(&'static str, u32, &'static str, usize),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Meters(f64);

    #[test]
    fn only_non_finite_floats_are_caught() {
        assert!(non_finite(&f64::NAN).is_some_and(f64::is_nan));
        assert_eq!(non_finite(&f32::INFINITY), Some(f64::INFINITY));
        assert_eq!(
            non_finite(&Meters(f64::NEG_INFINITY)),
            Some(f64::NEG_INFINITY)
        );
        assert_eq!(non_finite(&Some(f64::NAN)).map(f64::is_nan), Some(true));
        assert_eq!(non_finite(&1.5f64), None);
        assert_eq!(non_finite(&"NaN"), None);
        assert_eq!(non_finite(&vec![f64::NAN]), None);
        assert_eq!(non_finite(&3u8), None);
    }
}
