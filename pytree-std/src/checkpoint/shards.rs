//! Sharded checkpoints, as transformers writes them: the shards
//! `model-00001-of-00002.safetensors`, ... and the index
//! `model.safetensors.index.json`:
//!
//! ```text
//! {"metadata": {"total_size": 440449024},
//!  "weight_map": {"bert.embeddings.LayerNorm.bias": "model-00001-of-00002.safetensors", ...}}
//! ```
//!
//! Reading opens every shard the index names (beside the index) and
//! checks that the shards hold exactly the tensors the index places in
//! them; writing splits the tensors in leaf order by a maximum shard size
//! (transformers' `max_shard_size`).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use pytree_core::Error;
use serde::Deserialize;

use super::format;
use super::naming::combine;
use super::options::Load;
use super::reader::{Checkpoint, Shard};
use super::storage::{open_regular, Storage};

/// The file name of an unsharded checkpoint (transformers' `SAFE_WEIGHTS_NAME`).
///
/// ```
/// assert_eq!(pytree_std::checkpoint::SINGLE_FILE, "model.safetensors");
/// ```
pub const SINGLE_FILE: &str = "model.safetensors";
/// The file name of the index (transformers' `SAFE_WEIGHTS_INDEX_NAME`).
///
/// ```
/// assert_eq!(pytree_std::checkpoint::INDEX_FILE, "model.safetensors.index.json");
/// ```
pub const INDEX_FILE: &str = "model.safetensors.index.json";
/// transformers' default `max_shard_size`, 5 GB.
pub(crate) const DEFAULT_MAX_SHARD_BYTES: usize = 5_000_000_000;

/// The file name of shard `k` (counted from 1) of `n`, as transformers
/// names it and [`Save::save_sharded`](super::Save::save_sharded) writes
/// it: `model-{k:05}-of-{n:05}.safetensors`, listed beside the tensors it
/// holds in the index ([`INDEX_FILE`]).
///
/// ```
/// use pytree_std::checkpoint::shard_name;
/// assert_eq!(shard_name(1, 2), "model-00001-of-00002.safetensors");
/// assert_eq!(shard_name(2, 2), "model-00002-of-00002.safetensors");
/// ```
pub fn shard_name(k: usize, n: usize) -> String {
    format!("model-{k:05}-of-{n:05}.safetensors")
}

/// Splits tensors of the given sizes, in order, into shards of at most
/// `max` bytes (a larger tensor is a shard of its own), as
/// `huggingface_hub.split_torch_state_dict_into_shards` does (a tensor
/// over `max` becomes its shard at once, while the shard being filled
/// stays open). Returns the tensor indices of each shard; no shard is
/// empty.
pub(crate) fn split(sizes: impl IntoIterator<Item = usize>, max: usize) -> Vec<Vec<usize>> {
    let mut shards: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut current_size = 0usize;
    for (i, size) in sizes.into_iter().enumerate() {
        if size > max {
            shards.push(vec![i]);
            continue;
        }
        if !current.is_empty() && current_size.saturating_add(size) > max {
            shards.push(std::mem::take(&mut current));
            current_size = 0;
        }
        current.push(i);
        current_size += size;
    }
    if !current.is_empty() {
        shards.push(current);
    }
    shards
}

/// The index's JSON: `total_size` and the weight map, keys sorted,
/// indented by two spaces, as transformers writes it
/// (`json.dumps(index, indent=2, sort_keys=True) + "\n"`).
pub(crate) fn index_json(total_size: usize, weight_map: &BTreeMap<String, String>) -> String {
    let index = serde_json::json!({
        "metadata": { "total_size": total_size },
        "weight_map": weight_map,
    });
    let mut text = serde_json::to_string_pretty(&index).unwrap_or_default();
    text.push('\n');
    text
}

/// The index as read.
#[derive(Deserialize)]
struct Index {
    #[serde(default)]
    #[allow(dead_code)]
    metadata: serde_json::Map<String, serde_json::Value>,
    weight_map: BTreeMap<String, String>,
}

/// Opens the sharded checkpoint whose index is at `path`, each shard's
/// bytes by `storage` (positioned reads, or a memory map).
pub(crate) fn open_index(
    options: &Load,
    path: &Path,
    storage: impl Fn(&Path, &str) -> Result<Storage, Error>,
) -> Result<Checkpoint, Error> {
    options.validate()?;
    let origin = path.display().to_string();
    let index_error =
        |message: String| Error::custom(format!("sharded checkpoint index {origin}: {message}"));
    let (file, len) = open_regular(path).map_err(index_error)?;
    if len > options.max_header_bytes as u64 {
        return Err(index_error(format!(
            "{len} bytes, over the limit of {} (raise it with Load::max_header_bytes if the file is trusted)",
            options.max_header_bytes
        )));
    }
    let mut text = String::new();
    (&file)
        .take(len)
        .read_to_string(&mut text)
        .map_err(|e| index_error(format!("read: {e}")))?;
    let index: Index = serde_json::from_str(&text).map_err(|e| {
        index_error(format!(
            "not an index (an object with a `weight_map` of tensor names to shard files): {e}"
        ))
    })?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    // The shards in the order of their names (shard 1 first).
    let mut files: Vec<&str> = index.weight_map.values().map(String::as_str).collect();
    files.sort_unstable();
    files.dedup();
    let mut problems = Vec::new();
    for file in &files {
        if file.is_empty() || file.contains(['/', '\\']) || *file == "." || *file == ".." {
            problems.push(index_error(format!(
                "shard `{file}` is not a file name beside the index"
            )));
        }
    }
    combine(problems)?;
    let mut shards = Vec::with_capacity(files.len());
    let mut entries = Vec::new();
    let mut metadata = BTreeMap::new();
    let mut problems = Vec::new();
    let mut holder: HashMap<String, usize> = HashMap::new();
    for (k, file) in files.iter().enumerate() {
        let shard_path = dir.join(file);
        let shard_origin = shard_path.display().to_string();
        let opened = storage(&shard_path, &shard_origin).and_then(|storage| {
            let header = format::parse(&storage, &shard_origin, options.max_header_bytes)?;
            Ok((storage, header))
        });
        let (storage, header) = match opened {
            Ok(x) => x,
            Err(e) => {
                problems.push(index_error(format!(
                    "shard `{file}` listed in the index: {e}"
                )));
                continue;
            }
        };
        if shards.is_empty() {
            metadata = header.metadata.clone();
        }
        let shard = shards.len();
        for mut entry in header.entries {
            match index.weight_map.get(&entry.name) {
                Some(listed) if listed == file => {}
                Some(listed) => problems.push(index_error(format!(
                    "shard `{file}` holds tensor `{}`, which the index places in `{listed}`",
                    entry.name
                ))),
                None => problems.push(index_error(format!(
                    "shard `{file}` holds tensor `{}`, which the index does not list",
                    entry.name
                ))),
            }
            if let Some(&other) = holder.get(&entry.name) {
                problems.push(index_error(format!(
                    "tensor `{}` is in both `{}` and `{file}`",
                    entry.name, files[other]
                )));
                continue;
            }
            holder.insert(entry.name.clone(), k);
            entry.shard = shard;
            entries.push(entry);
        }
        shards.push(Shard {
            data_start: header.data_start,
            storage,
            origin: shard_origin,
        });
    }
    // What the index places in a shard that opened and lacks it (a shard
    // that did not open is one error above, not one per tensor).
    let opened: Vec<&str> = holder.values().map(|&k| files[k]).collect();
    {
        for (name, file) in &index.weight_map {
            if !holder.contains_key(name) && opened.contains(&file.as_str()) {
                problems.push(index_error(format!(
                    "the index places tensor `{name}` in `{file}`, which does not hold it"
                )));
            }
        }
    }
    combine(problems)?;
    Ok(Checkpoint::from_shards(
        shards,
        entries,
        metadata,
        origin,
        options.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_fill_shards_in_order_and_a_big_one_is_alone() {
        // As huggingface_hub does it: the big tensor is a shard at once,
        // the shard being filled stays open.
        assert_eq!(
            split([4, 4, 4, 20, 4], 10),
            [vec![0, 1], vec![3], vec![2, 4]]
        );
        assert_eq!(split([4, 4], 10), [vec![0, 1]]);
        assert!(split([], 10).is_empty());
    }

    #[test]
    fn shards_are_named_as_transformers_names_them() {
        assert_eq!(shard_name(1, 2), "model-00001-of-00002.safetensors");
        let map = BTreeMap::from([
            ("b".to_string(), "f2".to_string()),
            ("a".to_string(), "f1".to_string()),
        ]);
        assert_eq!(
            index_json(12, &map),
            "{\n  \"metadata\": {\n    \"total_size\": 12\n  },\n  \"weight_map\": {\n    \"a\": \"f1\",\n    \"b\": \"f2\"\n  }\n}\n"
        );
    }
}
