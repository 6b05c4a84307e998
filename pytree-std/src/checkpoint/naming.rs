//! How leaves are named in a file, and how names are mapped between a
//! file and a tree: the tensor name of a key path ([`KeyStr::SIMPLE`]),
//! the checks on names (none empty, none twice, not `__metadata__`), and
//! [`Renames`], ordered rename rules that chain (prefixes, patterns with
//! wildcards, closures), used by [`Load`](super::Load) from the file's
//! names to the tree's and by [`Save`](super::Save) from the tree's to the
//! file's.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use pytree_core::{Error, KeyPath, KeyStr};

/// One error for a list of problems (see [`Error::from_mismatches`]), or
/// none.
pub(crate) fn combine(all: Vec<Error>) -> Result<(), Error> {
    if all.is_empty() {
        Ok(())
    } else {
        Err(Error::from_mismatches(all))
    }
}

/// The tensor name of each path (`layers.0.w`, renamed by `renames`, then
/// `prefix` before it), or every path that cannot be named and every name
/// given twice.
pub(crate) fn names_of<'p>(
    paths: impl IntoIterator<Item = &'p KeyPath>,
    prefix: &str,
    renames: &Renames,
) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    let mut problems = Vec::new();
    let mut first: HashMap<String, KeyPath> = HashMap::new();
    for path in paths {
        let simple = path.keystr(KeyStr::SIMPLE);
        let name = format!("{prefix}{}", renames.apply(&simple));
        if name.is_empty() {
            problems.push(Error::custom(
                    "the leaf has no name: a checkpoint names each tensor by its key path, which is \
                     empty here (a leaf at the root, or an empty map key); put it in a struct, tuple \
                     or map, or save with a prefix",
                ).under(path));
        } else if name == "__metadata__" {
            problems.push(
                Error::custom("`__metadata__` is reserved by the format and cannot name a tensor")
                    .under(path),
            );
        } else if let Some(other) = first.get(&name) {
            problems.push(
                Error::custom(format!(
                    "tensor name `{name}` is also the name of the leaf at {other}"
                ))
                .under(path),
            );
        } else {
            first.insert(name.clone(), path.clone());
        }
        names.push(name);
    }
    combine(problems).map(|()| names)
}

/// A closure rule of [`Renames::map`].
type RenameFn = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// One rename rule.
#[derive(Clone)]
enum Rule {
    /// A name beginning with `from` begins with `to` instead.
    Prefix { from: String, to: String },
    /// Every run of whole segments matching `from` is replaced by `to`.
    Pattern { from: Pattern, to: Template },
    /// Any function of the name.
    Map(RenameFn),
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Prefix { from, to } => write!(f, "prefix({from:?} -> {to:?})"),
            Rule::Pattern { from, to } => write!(f, "pattern({:?} -> {:?})", from.text, to.text),
            Rule::Map(_) => f.write_str("map(<closure>)"),
        }
    }
}

/// Ordered rename rules that chain: each rule is applied to the name the
/// rules before it produced (burn-store's `KeyRemapper`, candle's
/// `VarBuilder::rename_f`). Three kinds of rule:
///
/// - [`prefix`](Renames::prefix)`(from, to)`: a name beginning with `from`
///   begins with `to` instead (`("bert.", "")`);
/// - [`pattern`](Renames::pattern)`(from, to)`: names are dot-separated
///   segments; `from` is segments too, where `*` matches any one segment
///   and is captured, and every run of segments matching it (left to
///   right, not overlapping) becomes `to`, where `$1`, `$2`, ... are the
///   captures (`("layer.*.attention.self", "layers.$1.attn")`); an empty
///   `to` removes the segments with their dot;
/// - [`map`](Renames::map)`(f)`: any function of the name.
///
/// ```
/// use pytree_std::checkpoint::Renames;
/// let r = Renames::new()
///     .prefix("bert.", "")
///     .pattern("encoder.layer.*", "layers.$1")
///     .pattern("self", "self_attn")
///     .map(|name| name.replace("LayerNorm", "norm"));
/// assert_eq!(r.apply("bert.encoder.layer.11.attention.self.query.weight"), "layers.11.attention.self_attn.query.weight");
/// assert_eq!(r.apply("bert.embeddings.LayerNorm.bias"), "embeddings.norm.bias");
/// assert_eq!(r.apply("pooler.selfish"), "pooler.selfish"); // whole segments only
/// ```
#[derive(Clone, Debug, Default)]
pub struct Renames {
    rules: Vec<Rule>,
}

impl Renames {
    /// No rules: every name is kept.
    ///
    /// ```
    /// assert_eq!(pytree_std::checkpoint::Renames::new().apply("a.b"), "a.b");
    /// ```
    pub fn new() -> Self {
        Renames::default()
    }

    /// True when there is no rule.
    ///
    /// ```
    /// use pytree_std::checkpoint::Renames;
    /// assert!(Renames::new().is_empty());
    /// assert!(!Renames::new().prefix("a.", "").is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Adds a rule: a name beginning with `from` begins with `to` instead.
    ///
    /// ```
    /// use pytree_std::checkpoint::Renames;
    /// assert_eq!(Renames::new().prefix("model.", "").apply("model.w"), "w");
    /// assert_eq!(Renames::new().prefix("", "bert.").apply("pooler.w"), "bert.pooler.w");
    /// ```
    #[must_use]
    pub fn prefix(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.rules.push(Rule::Prefix {
            from: from.into(),
            to: to.into(),
        });
        self
    }

    /// Adds a rule: every run of whole segments matching `from` (where
    /// `*` is any one segment, captured) becomes `to` (where `$1` ... `$9`
    /// are the captures). A `$n` beyond the pattern's wildcards is
    /// reported by [`validate`](Renames::validate), which every load and save
    /// calls before using the rules.
    ///
    /// ```
    /// use pytree_std::checkpoint::Renames;
    /// let r = Renames::new().pattern("h.*.attn", "blocks.$1.attention");
    /// assert_eq!(r.apply("transformer.h.3.attn.c_proj.weight"), "transformer.blocks.3.attention.c_proj.weight");
    /// assert_eq!(Renames::new().pattern("gamma", "weight").apply("ln.gamma"), "ln.weight");
    /// assert_eq!(Renames::new().pattern("module", "").apply("module.w.module"), "w");
    /// ```
    #[must_use]
    pub fn pattern(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        let from = Pattern::parse(from.into());
        let to = Template { text: to.into() };
        self.rules.push(Rule::Pattern { from, to });
        self
    }

    /// These rules, then `other`'s.
    ///
    /// ```
    /// use pytree_std::checkpoint::Renames;
    /// let r = Renames::new().prefix("a.", "b.").then(Renames::new().prefix("b.", "c."));
    /// assert_eq!(r.apply("a.w"), "c.w");
    /// ```
    #[must_use]
    pub fn then(mut self, other: Renames) -> Self {
        self.rules.extend(other.rules);
        self
    }

    /// Adds a rule: the name becomes `f(name)`.
    ///
    /// ```
    /// use pytree_std::checkpoint::Renames;
    /// let r = Renames::new().map(|n| n.to_uppercase());
    /// assert_eq!(r.apply("w"), "W");
    /// ```
    #[must_use]
    pub fn map(mut self, f: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        self.rules.push(Rule::Map(Arc::new(f)));
        self
    }

    /// Every rule that cannot be applied: a pattern with an empty segment
    /// (`"a..b"`), or a `$n` in its replacement beyond its wildcards.
    ///
    /// ```
    /// use pytree_std::checkpoint::Renames;
    /// assert!(Renames::new().pattern("h.*", "b.$1").validate().is_ok());
    /// let err = Renames::new().pattern("h.*", "b.$2").validate().unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: rename pattern `h.*` -> `b.$2`: `$2`, but the pattern has 1 wildcard");
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        let mut problems = Vec::new();
        for rule in &self.rules {
            let Rule::Pattern { from, to } = rule else {
                continue;
            };
            let what = format!("rename pattern `{}` -> `{}`", from.text, to.text);
            if from.segments.is_empty() || from.segments.iter().any(|s| s.as_deref() == Some("")) {
                problems.push(Error::custom(format!(
                    "{what}: the pattern has an empty segment"
                )));
            }
            let wildcards = from.wildcards();
            if let Some(n) = to.captures().into_iter().find(|&n| n == 0 || n > wildcards) {
                let plural = if wildcards == 1 { "" } else { "s" };
                problems.push(Error::custom(format!(
                    "{what}: `${n}`, but the pattern has {wildcards} wildcard{plural}"
                )));
            }
        }
        combine(problems)
    }

    /// The name after every rule, in order.
    ///
    /// ```
    /// use pytree_std::checkpoint::Renames;
    /// // Rules chain: the second sees what the first made.
    /// let r = Renames::new().prefix("bert.", "").prefix("encoder.", "enc.");
    /// assert_eq!(r.apply("bert.encoder.w"), "enc.w");
    /// ```
    pub fn apply<'a>(&self, name: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(name);
        for rule in &self.rules {
            let next = match rule {
                Rule::Prefix { from, to } => out
                    .strip_prefix(from.as_str())
                    .map(|rest| format!("{to}{rest}")),
                Rule::Pattern { from, to } => from.replace_all(&out, to),
                Rule::Map(f) => Some(f(&out)),
            };
            if let Some(next) = next {
                out = Cow::Owned(next);
            }
        }
        out
    }
}

/// A pattern of whole segments; `None` is the wildcard `*`.
#[derive(Clone, Debug)]
struct Pattern {
    text: String,
    segments: Vec<Option<String>>,
}

/// The replacement of a pattern, with `$1` ... `$9`.
#[derive(Clone, Debug)]
struct Template {
    text: String,
}

impl Pattern {
    fn parse(text: String) -> Self {
        let segments = if text.is_empty() {
            Vec::new()
        } else {
            text.split('.')
                .map(|s| (s != "*").then(|| s.to_string()))
                .collect()
        };
        Pattern { text, segments }
    }

    fn wildcards(&self) -> usize {
        self.segments.iter().filter(|s| s.is_none()).count()
    }

    /// `name` with every match replaced, or `None` when nothing matched
    /// (or the pattern is one [`Renames::check`] refuses).
    fn replace_all(&self, name: &str, to: &Template) -> Option<String> {
        let k = self.segments.len();
        if k == 0 || self.segments.iter().any(|s| s.as_deref() == Some("")) {
            return None;
        }
        let parts: Vec<&str> = name.split('.').collect();
        let mut out: Vec<String> = Vec::with_capacity(parts.len());
        let mut i = 0;
        let mut matched = false;
        while i < parts.len() {
            let window = parts.get(i..i + k);
            let captures = window.and_then(|w| {
                let mut caps = Vec::new();
                for (seg, part) in self.segments.iter().zip(w) {
                    match seg {
                        Some(lit) if lit != part => return None,
                        Some(_) => {}
                        None => caps.push(*part),
                    }
                }
                Some(caps)
            });
            match captures {
                Some(caps) => {
                    // An empty `to` removes the segments with their dot;
                    // a `to` that fills in an empty capture keeps an
                    // empty segment (`*` -> `$1` keeps `a..b`).
                    let replaced = to.fill(&caps);
                    if !to.text.is_empty() {
                        out.push(replaced);
                    }
                    matched = true;
                    i += k;
                }
                None => {
                    out.push(parts[i].to_string());
                    i += 1;
                }
            }
        }
        matched.then(|| out.join("."))
    }
}

impl Template {
    /// The capture numbers it uses.
    fn captures(&self) -> Vec<usize> {
        let bytes = self.text.as_bytes();
        let mut out = Vec::new();
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'$' {
                if let Some(d) = bytes.get(i + 1).filter(|d| d.is_ascii_digit()) {
                    out.push(usize::from(d - b'0'));
                }
            }
        }
        out
    }

    /// The text with `$n` replaced by capture `n` (an unknown one by
    /// nothing: [`Renames::check`] refuses those first).
    fn fill(&self, caps: &[&str]) -> String {
        let mut out = String::with_capacity(self.text.len() + 8);
        let mut chars = self.text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '$' {
                if let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    chars.next();
                    let n = d as usize;
                    if let Some(cap) = n.checked_sub(1).and_then(|i| caps.get(i)) {
                        out.push_str(cap);
                    }
                    continue;
                }
            }
            out.push(c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_segments_left_to_right() {
        let r = Renames::new().pattern("a.*", "x$1");
        assert_eq!(r.apply("a.1.a.2.b"), "x1.x2.b");
        assert_eq!(r.apply("ab.1"), "ab.1");
        assert_eq!(r.apply("b.a"), "b.a"); // the wildcard needs a segment
    }

    #[test]
    fn a_capture_puts_an_empty_segment_back() {
        // Found by the `renames` fuzz target: the segment was dropped.
        let r = Renames::new().pattern("*", "$1");
        assert_eq!(r.apply("a..b"), "a..b");
        assert_eq!(Renames::new().pattern("a.*", "$1").apply("a..b"), ".b");
        assert_eq!(Renames::new().pattern("a.*", "").apply("a.x.b"), "b");
    }

    #[test]
    fn an_empty_pattern_or_segment_is_refused_and_does_nothing() {
        let r = Renames::new().pattern("", "x").pattern("a..b", "x");
        assert_eq!(r.apply("a..b"), "a..b");
        assert_eq!(
            r.validate()
                .unwrap_err()
                .to_string()
                .matches("empty segment")
                .count(),
            2
        );
    }
}
