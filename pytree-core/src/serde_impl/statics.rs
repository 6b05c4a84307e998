//! Static values and map keys as serde writes them: tagged with their type
//! (`{"usize": 3}`, `{"String": ["a", "b"]}`), so that reading them back
//! gives values of the same Rust type, which `unflatten` downcasts. Only
//! `()`, `bool`, `char`, the integer types, `String` and `&'static str`
//! are supported; `&'static str` values are leaked once per distinct
//! string.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::schema::leak;
use crate::static_data::StaticValue;

/// Every `&'static str` deserialization has created (a hash set: a lookup
/// costs the string's length).
static STRS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

/// The `&'static str` with this content, leaked at most once. Called only
/// once the document has been read and checked (`into_value`).
fn intern_str(s: String) -> &'static str {
    let mut guard = STRS.lock().unwrap_or_else(PoisonError::into_inner);
    let table = guard.get_or_insert_with(HashSet::new);
    if let Some(known) = table.get(s.as_str()) {
        return known;
    }
    let leaked = leak(s);
    table.insert(leaked);
    leaked
}

fn unsupported(value: &StaticValue) -> String {
    format!(
        "the static value {value:?} of type {} cannot be serialized: a TreeDef's static data \
         must be (), bool, char, an integer, String or &'static str",
        value.type_name()
    )
}

macro_rules! tagged {
    ($( $variant:ident $tag:literal $t:ty ),* $(,)?) => {
        /// One static value, tagged with its type.
        #[derive(Serialize, Deserialize)]
        pub(super) enum StaticRepr {
            #[serde(rename = "()")]
            Unit,
            #[serde(rename = "&str")]
            Str(String),
            $( #[serde(rename = $tag)] $variant($t), )*
        }

        impl StaticRepr {
            pub(super) fn of(value: &StaticValue) -> Result<Self, String> {
                if value.downcast_ref::<()>().is_some() {
                    return Ok(StaticRepr::Unit);
                }
                if let Some(s) = value.downcast_ref::<&'static str>() {
                    return Ok(StaticRepr::Str(String::from(*s)));
                }
                $( if let Some(v) = value.downcast_ref::<$t>() {
                    return Ok(StaticRepr::$variant(v.clone()));
                } )*
                Err(unsupported(value))
            }

            pub(super) fn into_value(self) -> StaticValue {
                match self {
                    StaticRepr::Unit => StaticValue::new(()),
                    StaticRepr::Str(s) => StaticValue::new(intern_str(s)),
                    $( StaticRepr::$variant(v) => StaticValue::new(v), )*
                }
            }
        }

        /// The keys of one map, tagged with their type.
        #[derive(Serialize, Deserialize)]
        pub(super) enum KeysRepr {
            #[serde(rename = "&str")]
            Str(Vec<String>),
            $( #[serde(rename = $tag)] $variant(Vec<$t>), )*
        }

        impl KeysRepr {
            pub(super) fn of(value: &StaticValue) -> Result<Self, String> {
                if let Some(keys) = value.downcast_ref::<Vec<&'static str>>() {
                    return Ok(KeysRepr::Str(keys.iter().map(|k| String::from(*k)).collect()));
                }
                $( if let Some(keys) = value.downcast_ref::<Vec<$t>>() {
                    return Ok(KeysRepr::$variant(keys.clone()));
                } )*
                Err(unsupported(value))
            }

            pub(super) fn len(&self) -> usize {
                match self {
                    KeysRepr::Str(keys) => keys.len(),
                    $( KeysRepr::$variant(keys) => keys.len(), )*
                }
            }

            pub(super) fn into_value(self) -> StaticValue {
                match self {
                    KeysRepr::Str(keys) => {
                        StaticValue::keys(keys.into_iter().map(intern_str).collect::<Vec<_>>())
                    }
                    $( KeysRepr::$variant(keys) => StaticValue::keys(keys), )*
                }
            }
        }
    };
}

tagged!(
    Bool "bool" bool,
    Char "char" char,
    I8 "i8" i8, I16 "i16" i16, I32 "i32" i32, I64 "i64" i64, I128 "i128" i128, Isize "isize" isize,
    U8 "u8" u8, U16 "u16" u16, U32 "u32" u32, U64 "u64" u64, U128 "u128" u128, Usize "usize" usize,
    String "String" String,
);
