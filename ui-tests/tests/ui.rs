//! Compile-fail tests: each misuse of `#[derive(PyTree)]` (and of the
//! `Treelize` builder, in `tests/treelize/`, and a bad call of an
//! operation, in `tests/ops/`) and the message it must produce, pinned in
//! `tests/<dir>/<what-goes-wrong>.stderr`.
//! Regenerate after an intended change with `TRYBUILD=overwrite`.

/// One test function for every case: trybuild builds its cases in one
/// project per crate, so two `#[test]`s running at once on separate threads
/// race for that project (a case then "compiles successfully"); trybuild
/// runs the cases of one `TestCases` after one another.
#[test]
fn misuse_is_a_compile_error_pointing_at_the_user_code() {
    let t = trybuild::TestCases::new();
    // derive misuse, pointing at the field
    t.compile_fail("tests/ui/*.rs");
    // `missing` in a Treelize mode that never uses it
    t.compile_fail("tests/treelize/*.rs");
    // a bad call of an operation: the error is at the call
    t.compile_fail("tests/ops/*.rs");
}
