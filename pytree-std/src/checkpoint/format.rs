//! The safetensors file format, read and written without the `safetensors`
//! crate (so that every failure is an [`Error`] saying what is wrong where,
//! duplicate names are caught, and the writer never panics):
//!
//! ```text
//! [8 bytes: N, u64 little-endian][N bytes: JSON header, UTF-8, padded with spaces][data]
//! header = {"__metadata__": {"k": "v", ...},
//!           "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//! ```
//!
//! Offsets are relative to the start of the data; the tensors tile the
//! data exactly (no holes, no overlap, nothing after the last one), each
//! is little-endian in C order, and a name appears once.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use pytree_core::{DType, Error, Signature};
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::Deserialize;

use super::storage::{file_error, Storage};

/// Bytes before the header: its length as a little-endian `u64`.
pub(crate) const N_LEN: usize = 8;

/// The largest header read by default: 100 MB, the format's own limit
/// (the `safetensors` crate and package refuse larger headers).
///
/// ```
/// assert_eq!(pytree_std::checkpoint::DEFAULT_MAX_HEADER_BYTES, 100_000_000);
/// ```
pub const DEFAULT_MAX_HEADER_BYTES: usize = 100_000_000;

/// The metadata key of the TreeDef (JSON, as `TreeDef`'s serde writes it).
///
/// ```
/// use pytree_std::checkpoint::{self, Checkpoint, Load, TREEDEF_KEY};
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(1u8,))?)?;
/// assert!(file.metadata()[TREEDEF_KEY].starts_with("{\"schemas\""));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub const TREEDEF_KEY: &str = "pytree.treedef";
/// The metadata key saying why the TreeDef was left out (a static field
/// serde cannot write).
///
/// ```
/// use pytree_std::checkpoint::{self, Checkpoint, Load, TREEDEF_ERROR_KEY};
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(1u8,))?)?;
/// assert!(!file.metadata().contains_key(TREEDEF_ERROR_KEY));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub const TREEDEF_ERROR_KEY: &str = "pytree.treedef_error";
/// The metadata key of the prefix the names were saved with.
///
/// ```
/// use pytree_std::checkpoint::{Checkpoint, Load, Save, PREFIX_KEY};
/// let file = Load::new().from_bytes(Save::new().prefix("m.").to_bytes(&(1u8,))?)?;
/// assert_eq!(file.metadata()[PREFIX_KEY], "m.");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub const PREFIX_KEY: &str = "pytree.prefix";

/// The dtypes of the format: its name for each, bits per element, and the
/// [`DType`] it is read as (the float formats below 16 bits and `C64` have
/// no variant of their own and keep candle's spelling in
/// [`DType::Other`]).
const DTYPES: &[(&str, usize, DType)] = &[
    ("BOOL", 8, DType::Bool),
    ("U8", 8, DType::U8),
    ("I8", 8, DType::I8),
    ("U16", 16, DType::U16),
    ("I16", 16, DType::I16),
    ("F16", 16, DType::F16),
    ("BF16", 16, DType::BF16),
    ("U32", 32, DType::U32),
    ("I32", 32, DType::I32),
    ("F32", 32, DType::F32),
    ("U64", 64, DType::U64),
    ("I64", 64, DType::I64),
    ("F64", 64, DType::F64),
    ("F8_E5M2", 8, DType::Other("f8e5m2")),
    ("F8_E4M3", 8, DType::Other("f8e4m3")),
    ("F8_E8M0", 8, DType::Other("f8e8m0")),
    ("F8_E4M3FNUZ", 8, DType::Other("f8e4m3fnuz")),
    ("F8_E5M2FNUZ", 8, DType::Other("f8e5m2fnuz")),
    ("F6_E2M3", 6, DType::Other("f6e2m3")),
    ("F6_E3M2", 6, DType::Other("f6e3m2")),
    ("F4", 4, DType::Other("f4")),
    ("C64", 64, DType::Other("c64")),
];

/// The format's name of a dtype (`"F32"`), if it has one.
pub(crate) fn dtype_name(dtype: DType) -> Option<&'static str> {
    DTYPES
        .iter()
        .find(|(_, _, d)| *d == dtype)
        .map(|(n, _, _)| *n)
}

/// The dtype and bits per element of a name of the format.
fn dtype_of_name(name: &str) -> Option<(DType, usize)> {
    DTYPES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, bits, d)| (*d, *bits))
}

/// Bytes of data of a tensor of this dtype and shape, or why there is no
/// such number (overflow, a partial byte).
pub(crate) fn data_len(dtype: DType, shape: &[usize]) -> Result<usize, String> {
    let name = dtype_name(dtype).ok_or_else(|| format!("the format has no dtype {dtype}"))?;
    let bits = dtype_of_name(name).map_or(8, |(_, b)| b);
    let elements = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| format!("shape {shape:?} has more elements than fit in memory"))?;
    let total_bits = elements
        .checked_mul(bits)
        .ok_or_else(|| format!("shape {shape:?} of {name} has more bytes than fit in memory"))?;
    if total_bits % 8 != 0 {
        return Err(format!(
            "shape {shape:?} of {name} ends inside a byte ({total_bits} bits)"
        ));
    }
    Ok(total_bits / 8)
}

/// One tensor of a file: where its bytes are.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    /// Range in the data section.
    pub(crate) begin: usize,
    pub(crate) end: usize,
    /// The file it is in, of a sharded checkpoint (0 for one file).
    pub(crate) shard: usize,
}

impl Entry {
    pub(crate) fn signature(&self) -> Signature {
        Signature::new(self.dtype, self.shape.clone())
    }
}

/// A parsed and validated header.
#[derive(Debug)]
pub(crate) struct Header {
    /// Tensors in the order of their data.
    pub(crate) entries: Vec<Entry>,
    /// Index into `entries` by name.
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) metadata: BTreeMap<String, String>,
    /// Where the data starts in the file.
    pub(crate) data_start: usize,
}

/// Reads and checks the header of a whole file (reading only its first
/// bytes: the length, then the header, whose size is checked against the
/// limit and the file's length before anything is allocated for it).
pub(crate) fn parse(file: &Storage, origin: &str, max_header: usize) -> Result<Header, Error> {
    let total = file.len();
    if total < N_LEN as u64 {
        return Err(file_error(
            origin,
            format!(
                "{total} bytes, shorter than the 8-byte header length (truncated or not a safetensors file)"
            ),
        ));
    }
    let read_error = |e: std::io::Error| file_error(origin, format!("cannot read the header: {e}"));
    let len_bytes = file.bytes_at(0, N_LEN).map_err(read_error)?;
    let mut n = [0u8; N_LEN];
    n.copy_from_slice(&len_bytes);
    let n = u64::from_le_bytes(n);
    if n > max_header as u64 {
        return Err(file_error(
            origin,
            format!("the header length is {n} bytes, over the limit of {max_header} (raise it with Load::max_header_bytes if the file is trusted)"),
        ));
    }
    let after = total - N_LEN as u64;
    if n > after {
        return Err(file_error(
            origin,
            format!("the header says it is {n} bytes, but only {after} follow (truncated)"),
        ));
    }
    // `n <= max_header <= usize::MAX`, so the cast is exact.
    let n = n as usize;
    let data_start = N_LEN + n;
    let Ok(data_bytes) = usize::try_from(total - data_start as u64) else {
        return Err(file_error(
            origin,
            format!("{total} bytes, more than this machine can address"),
        ));
    };
    let header = file.bytes_at(N_LEN as u64, n).map_err(read_error)?;
    let text = std::str::from_utf8(&header)
        .map_err(|e| file_error(origin, format!("the header is not UTF-8: {e}")))?;
    if !text.starts_with('{') {
        return Err(file_error(origin, "the header does not start with '{'"));
    }
    let raw = RawHeader::parse(text).map_err(|e| file_error(origin, format!("header: {e}")))?;
    validate(raw, data_bytes, data_start, origin)
}

/// Checks every tensor's dtype, shape and offsets, and that the tensors
/// tile the data.
fn validate(
    raw: RawHeader,
    data_bytes: usize,
    data_start: usize,
    origin: &str,
) -> Result<Header, Error> {
    let mut entries = Vec::with_capacity(raw.tensors.len());
    for (name, info) in raw.tensors {
        let Some((dtype, _)) = dtype_of_name(&info.dtype) else {
            return Err(file_error(
                origin,
                format!(
                    "tensor `{name}` has dtype {:?}, which is not a safetensors dtype",
                    info.dtype
                ),
            ));
        };
        let [begin, end] = info.data_offsets;
        let size = data_len(dtype, &info.shape)
            .map_err(|e| file_error(origin, format!("tensor `{name}`: {e}")))?;
        let (Ok(begin), Ok(end)) = (usize::try_from(begin), usize::try_from(end)) else {
            return Err(file_error(origin, format!("tensor `{name}`: offsets [{begin}, {end}] are past the end of the data ({data_bytes} bytes)")));
        };
        if end < begin || end - begin != size {
            return Err(file_error(
                origin,
                format!(
                    "tensor `{name}`: offsets [{begin}, {end}] hold {} bytes, but {} {:?} takes {size}",
                    end.saturating_sub(begin),
                    info.dtype,
                    info.shape
                ),
            ));
        }
        entries.push(Entry {
            name,
            dtype,
            shape: info.shape,
            begin,
            end,
            shard: 0,
        });
    }
    entries.sort_by_key(|e| (e.begin, e.end));
    let mut at = 0usize;
    for e in &entries {
        if e.begin != at {
            return Err(file_error(
                origin,
                if e.begin < at {
                    format!(
                        "tensor `{}` at [{}, {}] overlaps the tensor before it, which ends at {at}",
                        e.name, e.begin, e.end
                    )
                } else {
                    format!(
                        "tensor `{}` starts at {}, leaving bytes {at}..{} of the data unused",
                        e.name, e.begin, e.begin
                    )
                },
            ));
        }
        at = e.end;
    }
    if at != data_bytes {
        return Err(file_error(
            origin,
            if at > data_bytes {
                format!(
                    "the tensors need {at} bytes of data, the file holds {data_bytes} (truncated)"
                )
            } else {
                format!("the tensors use {at} bytes of data, the file holds {data_bytes}: {} bytes after the last tensor", data_bytes - at)
            },
        ));
    }
    let by_name = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.name.clone(), i))
        .collect();
    Ok(Header {
        entries,
        by_name,
        metadata: raw.metadata,
        data_start,
    })
}

/// One tensor as the header describes it.
#[derive(Deserialize)]
struct RawInfo {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// The header as read, tensors in document order.
struct RawHeader {
    tensors: Vec<(String, RawInfo)>,
    metadata: BTreeMap<String, String>,
}

impl RawHeader {
    fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let header = HeaderSeed.deserialize(&mut de)?;
        // Trailing spaces (the padding) are allowed, anything else is not.
        de.end()?;
        Ok(header)
    }
}

/// Reads the top-level object: `__metadata__` once, each tensor name once.
struct HeaderSeed;

impl<'de> DeserializeSeed<'de> for HeaderSeed {
    type Value = RawHeader;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<RawHeader, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HeaderSeed {
    type Value = RawHeader;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of tensors")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawHeader, A::Error> {
        let mut tensors: Vec<(String, RawInfo)> = Vec::new();
        let mut seen: HashMap<String, ()> = HashMap::new();
        let mut metadata: Option<BTreeMap<String, String>> = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "__metadata__" {
                if metadata.is_some() {
                    return Err(de::Error::custom("`__metadata__` appears twice"));
                }
                metadata = Some(
                    map.next_value::<Option<MetadataMap>>()?
                        .map(|m| m.0)
                        .unwrap_or_default(),
                );
                continue;
            }
            if seen.insert(key.clone(), ()).is_some() {
                return Err(de::Error::custom(format!("duplicate tensor name `{key}`")));
            }
            let info: RawInfo = map
                .next_value()
                .map_err(|e| de::Error::custom(format!("tensor `{key}`: {e}")))?;
            tensors.push((key, info));
        }
        Ok(RawHeader {
            tensors,
            metadata: metadata.unwrap_or_default(),
        })
    }
}

/// `__metadata__`: string to string, each key once.
struct MetadataMap(BTreeMap<String, String>);

impl<'de> Deserialize<'de> for MetadataMap {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetadataMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`__metadata__`: an object of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetadataMap, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = match map.next_value::<serde_json::Value>()? {
                        serde_json::Value::String(s) => s,
                        other => {
                            return Err(de::Error::custom(format!(
                                "`__metadata__` value of `{key}` is not a string: {}",
                                kind_of(&other)
                            )))
                        }
                    };
                    if out.insert(key.clone(), value).is_some() {
                        return Err(de::Error::custom(format!(
                            "`__metadata__` key `{key}` appears twice"
                        )));
                    }
                }
                Ok(MetadataMap(out))
            }
        }
        deserializer.deserialize_map(V)
    }
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// One tensor to write: its name, dtype and shape (`bytes` is its data
/// length, checked against what the leaf gives).
pub(crate) struct Planned {
    pub(crate) name: String,
    pub(crate) dtype_name: &'static str,
    pub(crate) shape: Vec<usize>,
    pub(crate) bytes: usize,
}

/// The header for `tensors` (written in this order) and `metadata`,
/// padded with spaces to a multiple of 8 bytes so that the data starts
/// aligned (as the reference writer does).
pub(crate) fn header_bytes(tensors: &[&Planned], metadata: &BTreeMap<String, String>) -> Vec<u8> {
    let mut out = String::with_capacity(64 + 96 * tensors.len());
    out.push('{');
    let mut first = true;
    if !metadata.is_empty() {
        out.push_str("\"__metadata__\":{");
        for (i, (k, v)) in metadata.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(&mut out, k);
            out.push(':');
            push_json_string(&mut out, v);
        }
        out.push('}');
        first = false;
    }
    let mut offset = 0usize;
    for t in tensors {
        if !first {
            out.push(',');
        }
        first = false;
        push_json_string(&mut out, &t.name);
        out.push_str(":{\"dtype\":\"");
        out.push_str(t.dtype_name);
        out.push_str("\",\"shape\":[");
        for (i, d) in t.shape.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&d.to_string());
        }
        out.push_str("],\"data_offsets\":[");
        out.push_str(&offset.to_string());
        out.push(',');
        offset += t.bytes;
        out.push_str(&offset.to_string());
        out.push_str("]}");
    }
    out.push('}');
    let mut bytes = out.into_bytes();
    let padded = bytes.len().next_multiple_of(N_LEN);
    bytes.resize(padded, b' ');
    bytes
}

/// Appends `s` as a JSON string literal.
fn push_json_string(out: &mut String, s: &str) {
    // serde_json escapes exactly as JSON requires; writing a `&str` to a
    // `String` cannot fail.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Storage {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        Storage::Owned(out)
    }

    #[test]
    fn reads_a_small_file() {
        let f = file(
            r#"{"__metadata__":{"a":"b"},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  "#,
            &[0; 8],
        );
        let h = parse(&f, "t", 1000).unwrap();
        assert_eq!(h.entries[0].name, "x");
        assert_eq!(h.metadata["a"], "b");
    }

    #[test]
    fn every_dtype_has_a_name_both_ways() {
        for (name, _, d) in DTYPES {
            assert_eq!(dtype_name(*d), Some(*name));
        }
    }

    #[test]
    fn sub_byte_dtypes_must_end_on_a_byte() {
        assert_eq!(data_len(DType::Other("f4"), &[4]), Ok(2));
        assert!(data_len(DType::Other("f4"), &[3]).is_err());
        assert!(data_len(DType::F32, &[usize::MAX, 2]).is_err());
    }

    #[test]
    fn the_header_is_padded_to_eight_bytes() {
        let t = [Planned {
            name: "a\"b".into(),
            dtype_name: "F32",
            shape: vec![1],
            bytes: 4,
        }];
        let h = header_bytes(&[&t[0]], &BTreeMap::new());
        assert_eq!(h.len() % 8, 0);
        let f = file(std::str::from_utf8(&h).unwrap(), &[0; 4]);
        assert_eq!(parse(&f, "t", 1000).unwrap().entries[0].name, "a\"b");
    }
}
