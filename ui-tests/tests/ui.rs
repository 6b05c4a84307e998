//! Compile-fail tests: each misuse of `#[derive(PyTree)]` and the message it
//! must produce, pinned in `tests/ui/<what-goes-wrong>.stderr`.
//! Regenerate after an intended change with `TRYBUILD=overwrite`.

#[test]
fn derive_misuse_is_a_compile_error_pointing_at_the_field() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
