//! A panic in a user closure halfway down a deep tree is caught by
//! `catch_unwind`: unwinding drops what is left of the tree (the levels not
//! mapped yet, and those already built) without overflowing the stack.
//! Each case runs in a child process, so that a stack overflow (SIGSEGV or
//! SIGABRT) fails the test instead of killing the test runner.

use pytree_std::{PyTree, Std};
use pytree_tests::child;
use pytree_tests::unwind::{self, panic_message, PanickingSink};

/// A typed chain: a leaf and, maybe, the next level.
#[derive(PyTree)]
struct Chain {
    v: f64,
    next: Option<Box<Chain>>,
}

/// The same with the deep field first: its walk builds the rest of the
/// chain before the leaf of its own level.
#[derive(PyTree)]
struct RevChain {
    next: Option<Box<RevChain>>,
    v: f64,
}

const LEVELS: usize = 100_000;

fn chain(levels: usize) -> Chain {
    let mut c = Chain { v: 0.0, next: None };
    for _ in 1..levels {
        c = Chain {
            v: 0.0,
            next: Some(Box::new(c)),
        };
    }
    c
}

fn rev_chain(levels: usize) -> RevChain {
    let mut c = RevChain { next: None, v: 0.0 };
    for _ in 1..levels {
        c = RevChain {
            next: Some(Box::new(c)),
            v: 0.0,
        };
    }
    c
}

/// Drops a chain level by level (std's drop would recurse once per level).
fn dismantle(mut c: Chain) {
    let mut next = c.next.take();
    while let Some(mut level) = next {
        next = level.next.take();
    }
}

/// Adds 1, panicking at leaf `at`.
fn panics_at(at: usize) -> impl FnMut(f64) -> f64 {
    unwind::panics_at(at, |x: f64| x + 1.0)
}

/// Runs `body` as case `case` of test `test` in a child (4 GiB of address
/// space, 10 minutes), which must exit normally.
fn in_child(test: &str, case: &str, body: impl FnOnce()) {
    let limit = std::time::Duration::from_secs(600);
    child::in_child(test, case, 4 << 30, limit, body);
}

#[test]
fn a_panic_at_leaf_50_000_of_a_100_000_level_chain_is_caught_by_catch_unwind() {
    in_child(
        "a_panic_at_leaf_50_000_of_a_100_000_level_chain_is_caught_by_catch_unwind",
        "map",
        || {
            let c = chain(LEVELS);
            assert_eq!(
                panic_message(|| pytree_std::map(c, panics_at(50_000))),
                "leaf 50000"
            );
            // Without the panic the same walk succeeds.
            let mapped = pytree_std::map(chain(LEVELS), |x| x + 1.0);
            dismantle(mapped);
        },
    );
}

#[test]
fn a_panic_after_the_deep_field_was_built_is_caught_by_catch_unwind() {
    in_child(
        "a_panic_after_the_deep_field_was_built_is_caught_by_catch_unwind",
        "built",
        || {
            // The leaves of a `RevChain` come deepest first, so the panic at
            // the last leaf leaves 99 999 mapped levels to drop.
            assert_eq!(
                panic_message(|| pytree_std::map(rev_chain(LEVELS), panics_at(LEVELS - 1))),
                "leaf 99999"
            );
            // The same through `map_into` (flatten, then unflatten from the
            // mapped leaves): the panic comes while the result is built.
            assert_eq!(
                panic_message(|| {
                    pytree_std::walk::map_into::<RevChain, RevChain, _>(
                        rev_chain(LEVELS),
                        panics_at(LEVELS - 1),
                    )
                }),
                "leaf 99999"
            );
            // A tuple whose first element is a chain, mapped before the panic.
            assert_eq!(
                panic_message(|| pytree_std::map((chain(LEVELS), 0.0), panics_at(LEVELS))),
                format!("leaf {LEVELS}")
            );
        },
    );
}

/// Three chains, mapped with a panic in the second: one chain is mapped
/// and one is not yet touched when it comes.
fn a_panic_in_the_second_of_three<T: pytree_std::Unflatten<Std, Leaf = f64>>(chains: T) {
    assert_eq!(
        panic_message(|| pytree_std::map(chains, panics_at(LEVELS + 10))),
        format!("leaf {}", LEVELS + 10)
    );
}

#[test]
fn a_panic_in_a_vec_of_deep_chains_is_caught_by_catch_unwind() {
    in_child(
        "a_panic_in_a_vec_of_deep_chains_is_caught_by_catch_unwind",
        "vec",
        || {
            a_panic_in_the_second_of_three(vec![chain(LEVELS), chain(LEVELS), chain(LEVELS)]);
        },
    );
}

#[test]
fn a_panic_in_a_vecdeque_or_an_array_of_deep_chains_is_caught_by_catch_unwind() {
    in_child(
        "a_panic_in_a_vecdeque_or_an_array_of_deep_chains_is_caught_by_catch_unwind",
        "vecdeque_array",
        || {
            let chains = [chain(LEVELS), chain(LEVELS), chain(LEVELS)];
            a_panic_in_the_second_of_three(std::collections::VecDeque::from(chains));
            a_panic_in_the_second_of_three([chain(LEVELS), chain(LEVELS), chain(LEVELS)]);
        },
    );
}

#[test]
fn a_sink_that_panics_inside_flatten_into_a_deep_tree_is_caught_by_catch_unwind() {
    in_child(
        "a_sink_that_panics_inside_flatten_into_a_deep_tree_is_caught_by_catch_unwind",
        "sink",
        || {
            use pytree_std::Flatten;
            let shapes: [(&str, usize); 2] = [("chain", 10), ("vec", LEVELS + 10)];
            for (what, at) in shapes {
                let mut sink = PanickingSink::new(at);
                assert_eq!(
                    panic_message(|| match what {
                        "chain" => chain(LEVELS).flatten_into(&mut sink),
                        _ => vec![chain(LEVELS), chain(LEVELS), chain(LEVELS)]
                            .flatten_into(&mut sink),
                    }),
                    format!("leaf {at}"),
                    "{what}"
                );
            }
            let mut sink = PanickingSink::new(LEVELS + 10);
            let chains = std::collections::VecDeque::from([chain(LEVELS), chain(LEVELS)]);
            panic_message(|| chains.flatten_into(&mut sink));
            let mut sink = PanickingSink::new(LEVELS + 10);
            panic_message(|| [chain(LEVELS), chain(LEVELS)].flatten_into(&mut sink));
            // A tuple: the second chain is still held when the first panics.
            let mut sink = PanickingSink::new(10);
            panic_message(|| (chain(LEVELS), chain(LEVELS)).flatten_into(&mut sink));
        },
    );
}
