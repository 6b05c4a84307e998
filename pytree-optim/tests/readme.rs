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
