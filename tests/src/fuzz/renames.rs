//! Target `renames`: rename rules ([`Renames`]: prefixes and patterns
//! with wildcards and captures) made from bytes, applied to names made
//! from bytes, alone and through a load.
//!
//! The input is read as up to six rules (a prefix or a pattern, each
//! text from a vocabulary of the rules a model uses and malformed ones,
//! or raw bytes), then up to eight names (segments from a vocabulary, or
//! raw bytes). Laws: nothing panics; no rules keep every name; the rules
//! applied together give what they give one after the other; a prefix
//! rule replaces exactly a leading `from`; a pattern whose replacement
//! puts every capture back where it was keeps every name; a checkpoint of
//! tensors of those names, read as a flat map through the rules, has the
//! renamed names as its keys, in the file's order, or is an error when
//! the rules do not check or two names meet.

use pytree_std::checkpoint::{Load, Renames};
use serde_json::{json, Map, Value};

use super::Input;

/// Texts of rules: from models, and malformed.
const RULE_TEXTS: [&str; 22] = [
    "",
    "model.",
    "model",
    "layers",
    "layer.*",
    "layers.$1",
    "*",
    "*.*",
    "$1",
    "$2",
    "$0",
    "$10",
    "h.*.attn",
    "blocks.$1.attention",
    "a..b",
    ".",
    "..",
    "*.w",
    "$1.$1",
    "x",
    "$",
    "$$1",
];

/// Segments of names.
const NAME_SEGMENTS: [&str; 12] = [
    "model", "layer", "layers", "h", "attn", "0", "1", "11", "w", "b", "", "x",
];

/// A text: from a vocabulary, or up to 12 raw bytes.
fn text(input: &mut Input<'_>, vocabulary: &[&str]) -> String {
    match input.byte() {
        b @ 0..=199 if !vocabulary.is_empty() => {
            vocabulary[usize::from(b) % vocabulary.len()].to_string()
        }
        _ => {
            let n = input.below(13);
            let bytes: Vec<u8> = (0..n).map(|_| input.byte()).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

/// A name: one to four segments, or raw bytes.
fn name(input: &mut Input<'_>) -> String {
    if input.byte() >= 230 {
        return text(input, &[]);
    }
    let n = 1 + input.below(4);
    let parts: Vec<String> = (0..n).map(|_| text(input, &NAME_SEGMENTS)).collect();
    parts.join(".")
}

/// One rule.
#[derive(Debug)]
enum Rule {
    Prefix(String, String),
    Pattern(String, String),
}

impl Rule {
    fn add_to(&self, r: Renames) -> Renames {
        match self {
            Rule::Prefix(from, to) => r.prefix(from.clone(), to.clone()),
            Rule::Pattern(from, to) => r.pattern(from.clone(), to.clone()),
        }
    }
}

/// `from` with its `i`-th `*` segment replaced by `$i`: the replacement
/// that puts every capture back.
fn identity_template(from: &str) -> String {
    let mut k = 0;
    from.split('.')
        .map(|s| {
            if s == "*" {
                k += 1;
                format!("${k}")
            } else {
                s.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Target `renames`; see the module docs.
pub fn renames(data: &[u8]) {
    let mut input = Input::new(data);
    let rules: Vec<Rule> = (0..input.below(7))
        .map(|_| {
            let kind = input.byte();
            let from = text(&mut input, &RULE_TEXTS);
            let to = text(&mut input, &RULE_TEXTS);
            if kind.is_multiple_of(2) {
                Rule::Prefix(from, to)
            } else {
                Rule::Pattern(from, to)
            }
        })
        .collect();
    let all = rules.iter().fold(Renames::new(), |r, rule| rule.add_to(r));
    let _ = format!("{all:?}");
    let checked = all.validate();
    if let Err(e) = &checked {
        let _ = e.to_string();
    }
    let names: Vec<String> = (0..1 + input.below(8)).map(|_| name(&mut input)).collect();
    for n in &names {
        assert_eq!(Renames::new().apply(n), n.as_str());
        let together = all.apply(n).into_owned();
        let one_by_one = rules.iter().fold(n.clone(), |n, rule| {
            rule.add_to(Renames::new()).apply(&n).into_owned()
        });
        assert_eq!(together, one_by_one, "{rules:?} on {n:?}");
        for rule in &rules {
            match rule {
                Rule::Prefix(from, to) => {
                    let once = rule.add_to(Renames::new()).apply(n).into_owned();
                    match n.strip_prefix(from.as_str()) {
                        Some(rest) => assert_eq!(once, format!("{to}{rest}")),
                        None => assert_eq!(&once, n),
                    }
                }
                Rule::Pattern(from, _) => {
                    // (A literal segment holding `$1` would be read as a
                    // capture by the replacement.)
                    let keep = Renames::new().pattern(from.clone(), identity_template(from));
                    if keep.validate().is_ok() && !from.contains('$') {
                        assert_eq!(keep.apply(n), n.as_str(), "{from:?} on {n:?}");
                    }
                }
            }
        }
    }
    // Through a load: a file of one-byte tensors of those names.
    let mut header = Map::new();
    let mut unique: Vec<&String> = Vec::new();
    for n in &names {
        if n != "__metadata__" && !unique.contains(&n) {
            let i = unique.len();
            header.insert(
                n.clone(),
                json!({"dtype": "U8", "shape": [], "data_offsets": [i, i + 1]}),
            );
            unique.push(n);
        }
    }
    let text = Value::Object(header).to_string();
    let mut file = (text.len() as u64).to_le_bytes().to_vec();
    file.extend(text.bytes());
    file.extend((0..unique.len()).map(|i| i as u8));
    let read = Load::new()
        .renames(all.clone())
        .from_bytes(file)
        .and_then(|f| f.load_map::<u8>().map(|m| (f, m)));
    match read {
        Ok((f, map)) => {
            assert!(checked.is_ok(), "rules that do not check were used");
            let expected: Vec<String> = f.names().map(|n| all.apply(n).into_owned()).collect();
            let keys: Vec<String> = map.keys().cloned().collect();
            assert_eq!(keys, expected);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}
