//! The guide's chapters show two examples that live elsewhere as well:
//! the optimizers chapter shows `pytree-optim/examples/optimizers.rs`
//! verbatim, and the candle chapter the loop of `pytree_optim::candle`'s
//! module documentation. Both run as doctests of the guide; these tests
//! check that the copies have not drifted apart, and run the example.

mod example {
    include!("../../pytree-optim/examples/optimizers.rs");

    pub fn run() -> Result<(), pytree_std::Error> {
        main()
    }
}

#[test]
fn the_optimizers_example_runs() {
    example::run().unwrap();
}

#[test]
fn the_optimizers_chapter_shows_the_example_verbatim() {
    let chapter = include_str!("../../docs/guide/optimizers.md");
    let code = include_str!("../../pytree-optim/examples/optimizers.rs");
    assert!(
        chapter.contains(&format!("```rust\n{code}```")),
        "docs/guide/optimizers.md must show pytree-optim/examples/optimizers.rs verbatim"
    );
}

/// The candle chapter's loop is the module documentation of
/// `pytree_optim::candle` (its hidden lines included), shown verbatim.
#[test]
fn the_candle_chapter_shows_the_loop_of_the_module_docs() {
    let chapter = include_str!("../../docs/guide/candle.md");
    let module = include_str!("../../pytree-optim/src/candle/mod.rs");
    let start = module
        .find("//! ```\n//! use pytree_optim::{adam, candle};")
        .expect("the module docs' loop example");
    let body = &module[start + "//! ```\n".len()..];
    let code: String = body[..body.find("//! ```").unwrap()]
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("//! ").unwrap_or("")))
        .collect();
    assert!(
        chapter.contains(&format!("```rust\n{code}```")),
        "docs/guide/candle.md must show the loop of pytree-optim/src/candle/mod.rs verbatim:\n{code}"
    );
}
