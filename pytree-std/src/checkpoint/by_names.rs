//! Loading by type alone from a file that holds no TreeDef (written by
//! Python's `safetensors`, transformers, candle), or with
//! [`Load::by_names`](super::Load::by_names): the type fixes the
//! structure, the file's names (after the renames) give what the type
//! leaves open, the length of each `Vec` (`layers.0.…`, `layers.1.…`:
//! two elements) and whether each `Option` is `Some`; each tensor gives
//! its leaf's shape. A [`Source`] that answers the type's questions from
//! the names.
//!
//! A name tied to another ([`Load::tie`](super::Load::tie)) reads that
//! tensor when the file lacks it, as every load does.
//!
//! Strict as every load: a tensor the type asks for and the file lacks is
//! an error at its key path; a tensor of the file that the type never
//! asks for is an error unless [`Load::allow_unused`](super::Load::allow_unused)
//! is on, and the [`LoadReport`] says so. What names cannot say is an
//! error naming the place: an enum's variant, a static field's value, a
//! map's keys.

use std::collections::{BTreeMap, BTreeSet};

use pytree_core::{Error, Schema, Source, Static};

use super::leaf::TensorLeaf;
use super::naming::combine;
use super::options::LoadReport;
use super::reader::Checkpoint;

/// How the children of an open node are named.
enum Keys {
    /// A struct's data fields.
    Fields(&'static Schema),
    /// `0`, `1`, ...: a sequence or tuple.
    Index,
    /// No key of its own: the child of a `Some`.
    Same,
}

/// A node being read: its name, how its children are named, the next
/// child and how many there are.
struct Frame {
    name: String,
    keys: Keys,
    next: usize,
    len: usize,
}

/// Answers an [`Unflatten`](pytree_core::Unflatten) type's reads from a
/// checkpoint's names.
pub(crate) struct NameSource<'c> {
    file: &'c Checkpoint,
    /// Tree-side name (after the renames) to entry, tied names included
    /// ([`Load::tie`](super::Load::tie): a name the file lacks, read from
    /// the entry of the name it is tied to).
    index: BTreeMap<String, usize>,
    /// The tied names in `index`, and whether each was read.
    tied: BTreeMap<String, bool>,
    used: Vec<bool>,
    /// The names of [`Load::transpose`](super::Load::transpose) read.
    transposed_read: BTreeSet<String>,
    frames: Vec<Frame>,
    started: bool,
    /// Why the load reads names, not a TreeDef, for the messages.
    why: String,
}

/// `prefix.key`, or `key` at the root; `prefix` for a child without a key.
fn join(prefix: &str, key: Option<String>) -> String {
    match key {
        None => prefix.to_string(),
        Some(k) if prefix.is_empty() => k,
        Some(k) => format!("{prefix}.{k}"),
    }
}

impl<'c> NameSource<'c> {
    /// A source over `file`'s tensors, named as `names` (the renamed name
    /// of each entry), and the names `ties` gives (`(name, to)`: the leaf
    /// `name`, which the file lacks, reads the tensor `to`, as a template
    /// load does); two entries of one name are an error.
    pub(crate) fn new(
        file: &'c Checkpoint,
        names: Vec<String>,
        ties: &[(String, String)],
        why: String,
    ) -> Result<Self, Error> {
        let mut index = BTreeMap::new();
        let mut problems = Vec::new();
        for (i, name) in names.into_iter().enumerate() {
            if let Some(j) = index.insert(name.clone(), i) {
                problems.push(Error::custom(format!(
                    "tensors `{}` and `{}` of the file are both named `{name}` after renaming",
                    file.entry_name(j),
                    file.entry_name(i)
                )));
            }
        }
        combine(problems)?;
        let mut tied = BTreeMap::new();
        for (name, to) in ties {
            if index.contains_key(name) {
                continue;
            }
            if let Some(&i) = index.get(to) {
                index.insert(name.clone(), i);
                tied.insert(name.clone(), false);
            }
        }
        let used = vec![false; file.len()];
        Ok(NameSource {
            file,
            index,
            tied,
            used,
            transposed_read: BTreeSet::new(),
            frames: Vec::new(),
            started: false,
            why,
        })
    }

    /// The name of the next node the type reads.
    fn next_name(&mut self) -> Result<String, Error> {
        while self.frames.last().is_some_and(|f| f.next >= f.len) {
            self.frames.pop();
        }
        match self.frames.last_mut() {
            None if self.started => {
                Err(Error::custom("the type read past the end of its structure"))
            }
            None => {
                self.started = true;
                Ok(String::new())
            }
            Some(f) => {
                let key = match f.keys {
                    Keys::Fields(schema) => schema
                        .fields()
                        .iter()
                        .filter(|x| !x.is_static)
                        .nth(f.next)
                        .map(|x| x.name.to_string()),
                    Keys::Index => Some(f.next.to_string()),
                    Keys::Same => None,
                };
                f.next += 1;
                Ok(join(&f.name, key))
            }
        }
    }

    /// The names at or under `name` (all of them at the root).
    fn under<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let start = if name.is_empty() {
            String::new()
        } else {
            format!("{name}.")
        };
        let exact = (!name.is_empty())
            .then(|| self.index.get_key_value(name).map(|(k, _)| k.as_str()))
            .flatten();
        exact.into_iter().chain(
            self.index
                .range(start.clone()..)
                .map(|(k, _)| k.as_str())
                .take_while(move |k| k.starts_with(start.as_str())),
        )
    }

    /// The error for what a name cannot say.
    fn cannot(&self, what: impl std::fmt::Display) -> Error {
        Error::custom(format!(
            "{}, and {what}, which its tensor names do not say; \
             load it against a template with load_like or load_into",
            self.why
        ))
    }

    /// After the read: every tensor was used (or `allow_unused`), and
    /// what was done.
    pub(crate) fn finish(self, allow_unused: bool) -> Result<LoadReport, Error> {
        let mut report = LoadReport::default();
        let mut problems = Vec::new();
        // Each entry's own name first, then the tied names read from it.
        let mut by_entry: Vec<(usize, bool, &str)> = self
            .index
            .iter()
            .map(|(n, &i)| (i, self.tied.contains_key(n), n.as_str()))
            .collect();
        by_entry.sort_unstable();
        for (i, tie, name) in by_entry {
            if tie {
                if self.tied.get(name) == Some(&true) {
                    report.loaded.push(name.to_string());
                }
                continue;
            }
            if self.used[i] {
                report.loaded.push(name.to_string());
                continue;
            }
            if !allow_unused {
                let entry = self.file.entry_name(i);
                let renamed = if name != entry {
                    format!(", renamed `{name}`,")
                } else {
                    String::new()
                };
                problems.push(Error::custom(format!(
                    "tensor `{entry}` ({}){renamed} of the file is not a leaf of the type",
                    self.file.entry_signature(i)
                )));
            }
            report.unused.push(self.file.entry_name(i).to_string());
        }
        problems.extend(
            self.file
                .transposed_not_read(|name| self.transposed_read.contains(name)),
        );
        combine(problems).map(|()| report)
    }
}

impl<L: TensorLeaf> Source<L> for NameSource<'_> {
    fn leaf(&mut self) -> Result<L, Error> {
        let name = self.next_name()?;
        if name.is_empty() {
            return Err(Error::custom(
                "a leaf at the root has no tensor name; put it in a struct, tuple or map",
            ));
        }
        let Some(&i) = self.index.get(&name) else {
            return Err(Error::custom(format!(
                "tensor `{name}`: expected {}, found nothing in the file",
                match L::fixed_dtype() {
                    Some(d) => format!("a {d} tensor"),
                    None => "a tensor".to_string(),
                }
            )));
        };
        self.used[i] = true;
        if let Some(read) = self.tied.get_mut(&name) {
            *read = true;
        }
        if self.file.is_transposed(&name) {
            self.transposed_read.insert(name.clone());
        }
        self.file.read_leaf::<L>(i, &name)
    }

    fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error> {
        let name = self.next_name()?;
        let schema = match candidates {
            [only] if only.variant().is_none() => *only,
            _ => {
                let names: Vec<String> = candidates
                    .iter()
                    .map(|c| c.display_name().to_string())
                    .collect();
                return Err(self.cannot(format_args!(
                    "the enum variant ({}) is not in the names",
                    names.join(" or ")
                )));
            }
        };
        if schema.num_static() > 0 {
            return Err(self.cannot(format_args!(
                "{} has static fields, whose values a TreeDef holds",
                schema.display_name()
            )));
        }
        self.frames.push(Frame {
            name,
            keys: Keys::Fields(schema),
            next: 0,
            len: schema.num_data(),
        });
        Ok(0)
    }

    fn static_field<T: Static>(&mut self) -> Result<T, Error> {
        Err(self.cannot("a static field's value"))
    }

    fn seq_node(&mut self) -> Result<usize, Error> {
        let name = self.next_name()?;
        let skip = if name.is_empty() { 0 } else { name.len() + 1 };
        let mut indices: Vec<usize> = self
            .under(&name)
            .filter_map(|k| k.get(skip..)?.split('.').next()?.parse().ok())
            .collect();
        indices.sort_unstable();
        indices.dedup();
        let len = indices.len();
        if let Some(gap) = (0..len).find(|&k| indices[k] != k) {
            let shown = join(&name, Some(gap.to_string()));
            return Err(Error::custom(format!(
                "the file names {} but nothing under `{shown}`: a sequence's elements are \
                 numbered from 0 without gaps",
                join(&name, Some(indices[gap].to_string()))
            )));
        }
        self.frames.push(Frame {
            name,
            keys: Keys::Index,
            next: 0,
            len,
        });
        Ok(len)
    }

    fn tuple_node(&mut self, arity: usize) -> Result<(), Error> {
        let name = self.next_name()?;
        self.frames.push(Frame {
            name,
            keys: Keys::Index,
            next: 0,
            len: arity,
        });
        Ok(())
    }

    fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error> {
        Err(self.cannot(format_args!(
            "a map's keys (of type {}) are not read from names",
            std::any::type_name::<K>()
        )))
    }

    fn option_node(&mut self) -> Result<bool, Error> {
        let name = self.next_name()?;
        let some = self.under(&name).next().is_some();
        self.frames.push(Frame {
            name,
            keys: Keys::Same,
            next: 0,
            len: usize::from(some),
        });
        Ok(some)
    }
}
