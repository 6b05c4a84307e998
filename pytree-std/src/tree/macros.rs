//! `tree!`: a [`Tree`](super::Tree) literal that reads like the Python one.

/// Builds a [`Tree`](crate::Tree) from a literal that reads like Python's.
///
/// - `tree! { "a" => 2, "x" => { "c" => 4 } }`: a map (keys are string
///   literals, or any expression in parentheses that converts to `String`:
///   `(name) => 1`). A repeated key panics, as in [`Tree::dict`](crate::Tree::dict).
/// - `[v, v, ...]`: a sequence (at the top level: `tree!([1, 2])`).
/// - `None`: the `None` node.
/// - anything else is an expression converted with `Tree::from`: a leaf
///   value, or a `Tree` you already have (so subtrees can be spliced in).
///   Write a block as `({ ... })`, since `{ ... }` is a map.
/// - `tree!()` / `tree! {}` is an empty map.
///
/// A literal is expanded in one step when every value is one token tree
/// (`1`, `x`, `{..}`, `[..]`); other values (`-1`, `a + b`) cost one macro
/// recursion per token, so a very long literal of such values can reach
/// the compiler's `recursion_limit` (as `serde_json::json!` can).
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<i32> = tree! { "a" => 2, "b" => 30, "x" => { "c" => 4, "d" => 9 } };
/// assert_eq!(format!("{t:?}"), r#"{"a": 2, "b": 30, "x": {"c": 4, "d": 9}}"#);
///
/// // JAX's `[1, {"k1": 2, "k2": (3, 4)}, 5]`, with the tuple as a sequence:
/// let mixed: Tree<i32> = tree!([1, { "k1" => 2, "k2" => [3, 4] }, 5]);
/// assert_eq!(format!("{mixed:?}"), r#"[1, {"k1": 2, "k2": [3, 4]}, 5]"#);
///
/// // Expressions, computed keys, None, and a spliced subtree:
/// let sub = tree! { "c" => -4 };
/// let name = String::from("k");
/// let t = tree! { "a" => 1 + 1, (name) => None, "x" => sub.clone() };
/// assert_eq!(format!("{t:?}"), r#"{"a": 2, "k": None, "x": {"c": -4}}"#);
/// ```
#[macro_export]
macro_rules! tree {
    // ---- one value
    (@value None) => { $crate::tree::Tree::none() };
    (@value { $($body:tt)* }) => { $crate::tree!(@map $($body)*) };
    (@value [ $($body:tt)* ]) => { $crate::tree!(@seq $($body)*) };
    (@value $($e:tt)+) => { $crate::tree::Tree::from($($e)+) };

    // ---- map bodies
    (@map) => { $crate::tree::Tree::default() };
    // Fast path: every key a literal and every value one token tree.
    (@map $($key:literal => $value:tt),+ $(,)?) => {
        $crate::tree::Tree::dict([$((::std::string::String::from($key), $crate::tree!(@value $value))),+])
    };
    (@map $($rest:tt)+) => { $crate::tree!(@entries [] $($rest)+) };
    (@entries [$($done:tt)*]) => { $crate::tree::Tree::dict([$($done)*]) };
    // One step for an entry whose value is one token tree.
    (@entries [$($done:tt)*] $key:literal => $value:tt $(, $($rest:tt)*)?) => {
        $crate::tree!(@entries [$($done)* (::std::string::String::from($key), $crate::tree!(@value $value)),] $($($rest)*)?)
    };
    (@entries [$($done:tt)*] $key:literal => $($rest:tt)+) => {
        $crate::tree!(@entry [$($done)*] ($key) [] $($rest)+)
    };
    (@entries [$($done:tt)*] ($($key:tt)+) => $($rest:tt)+) => {
        $crate::tree!(@entry [$($done)*] ($($key)+) [] $($rest)+)
    };
    (@entry [$($done:tt)*] $key:tt [$($v:tt)+] , $($rest:tt)*) => {
        $crate::tree!(@entries [$($done)* (::std::string::String::from($key), $crate::tree!(@value $($v)+)),] $($rest)*)
    };
    (@entry [$($done:tt)*] $key:tt [$($v:tt)+]) => {
        $crate::tree!(@entries [$($done)* (::std::string::String::from($key), $crate::tree!(@value $($v)+)),])
    };
    (@entry [$($done:tt)*] $key:tt [$($v:tt)*] $next:tt $($rest:tt)*) => {
        $crate::tree!(@entry [$($done)*] $key [$($v)* $next] $($rest)*)
    };

    // ---- sequence bodies
    (@seq) => { $crate::tree::Tree::seq([]) };
    // Fast path: every element one token tree.
    (@seq $($value:tt),+ $(,)?) => { $crate::tree::Tree::seq([$($crate::tree!(@value $value)),+]) };
    (@seq $($rest:tt)+) => { $crate::tree!(@elems [] [] $($rest)+) };
    (@elems [$($done:tt)*] [$($v:tt)+] , $($rest:tt)*) => {
        $crate::tree!(@elems [$($done)* $crate::tree!(@value $($v)+),] [] $($rest)*)
    };
    (@elems [$($done:tt)*] [$($v:tt)+]) => {
        $crate::tree::Tree::seq([$($done)* $crate::tree!(@value $($v)+)])
    };
    (@elems [$($done:tt)*] []) => { $crate::tree::Tree::seq([$($done)*]) };
    (@elems [$($done:tt)*] [$($v:tt)*] $next:tt $($rest:tt)*) => {
        $crate::tree!(@elems [$($done)*] [$($v)* $next] $($rest)*)
    };

    // ---- entry points
    () => { $crate::tree::Tree::default() };
    ($key:literal => $($rest:tt)*) => { $crate::tree!(@map $key => $($rest)*) };
    (($($key:tt)+) => $($rest:tt)*) => { $crate::tree!(@map ($($key)+) => $($rest)*) };
    ($($value:tt)+) => { $crate::tree!(@value $($value)+) };
}
