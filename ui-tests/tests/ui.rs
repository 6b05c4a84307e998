//! Compile-fail tests: each misuse of `#[derive(PyTree)]` (and of the
//! `Treelize` builder, in `tests/treelize/`, and a bad call of an
//! operation, in `tests/ops/`) and the message it must produce, pinned in
//! `tests/<dir>/<what-goes-wrong>.stderr`.
//! Regenerate after an intended change with `TRYBUILD=overwrite`.

#[test]
fn derive_misuse_is_a_compile_error_pointing_at_the_field() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

#[test]
fn missing_in_a_mode_that_never_uses_it_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/treelize/*.rs");
}

#[test]
fn a_bad_call_of_an_operation_is_an_error_at_the_call() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ops/*.rs");
}
