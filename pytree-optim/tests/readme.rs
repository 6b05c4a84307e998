//! The README's "Optimizers" example is `examples/optimizers.rs`, shown
//! there verbatim (pytree-std runs the README's other examples as doctests,
//! but it does not depend on this crate): it runs here, and the README is
//! checked to show it unchanged.

#![cfg(feature = "ndarray")]

mod example {
    include!("../examples/optimizers.rs");

    pub fn run() -> Result<(), pytree_std::Error> {
        main()
    }
}

#[test]
fn the_readme_example_runs() {
    example::run().unwrap();
}

#[test]
fn the_readme_shows_the_example_verbatim() {
    let readme = include_str!("../README.md");
    let code = include_str!("../examples/optimizers.rs");
    assert!(
        readme.contains(&format!("```rust,ignore\n{code}```")),
        "README.md's Optimizers section must show examples/optimizers.rs verbatim"
    );
}

/// The README's candle example is the module documentation of
/// `pytree_optim::candle` (run there as a doctest), shown verbatim.
#[test]
fn the_readme_shows_the_candle_loop_of_the_module_docs() {
    let readme = include_str!("../README.md");
    let module = include_str!("../src/candle/mod.rs");
    let start = module
        .find("//! ```\n//! use pytree_optim::{adam, candle};")
        .expect("the module docs' loop example");
    let body = &module[start + "//! ```\n".len()..];
    let code: String = body[..body.find("//! ```").unwrap()]
        .lines()
        .filter(|l| !l.starts_with("//! # "))
        .map(|l| format!("{}\n", l.strip_prefix("//! ").unwrap_or("")))
        .collect();
    assert!(
        readme.contains(&format!("```rust,ignore\n{code}```")),
        "README.md's candle section must show the loop of src/candle/mod.rs verbatim:\n{code}"
    );
}
