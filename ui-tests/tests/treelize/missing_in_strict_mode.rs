use pytree_std::treelize::{mode, Treelize};

fn main() {
    // Strict mode fails on a missing key and inner mode drops it: a
    // `missing` value would never be used, so it does not compile.
    let _strict = Treelize::new(|a: &i32, b: &i32| a + b).missing(0);
    let _inner = Treelize::new(|a: &i32, b: &i32| a + b)
        .mode(mode::Inner)
        .missing_with(|| 0);
    // Nor does switching to such a mode after giving `missing`.
    let _back = Treelize::new(|a: &i32, b: &i32| a + b)
        .mode(mode::Outer)
        .missing(0)
        .mode(mode::Strict);
}
