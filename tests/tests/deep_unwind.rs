//! A panic in a user closure halfway down a deep tree is caught by
//! `catch_unwind`: unwinding drops what is left of the tree (the levels not
//! mapped yet, and those already built) without overflowing the stack.
//! Each case runs in a child process, so that a stack overflow (SIGSEGV or
//! SIGABRT) fails the test instead of killing the test runner.

use pytree_std::PyTree;
use pytree_tests::child;

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

/// A closure that panics at leaf `at` (counting from 0).
fn panics_at(at: usize) -> impl FnMut(f64) -> f64 {
    let mut seen = 0;
    move |x| {
        seen += 1;
        if seen == at + 1 {
            panic!("leaf {at}");
        }
        x + 1.0
    }
}

/// Runs `case` of test `test` in a child (4 GiB of address space) and
/// checks that it exited normally, having printed `done`.
fn in_child(test: &str, case: &str) {
    let out = child::run_case(test, case, 4 << 30);
    assert!(
        out.status.success() && out.stdout.contains("done"),
        "{case}: {:?}\nstdout: {}\nstderr: {}",
        out.status,
        out.stdout,
        out.stderr
    );
}

/// Runs `f`, which must panic with the panic coming back to
/// `catch_unwind` (not the process dying while unwinding), and returns the
/// panic's message.
fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(_) => panic!("no panic"),
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default(),
    }
}

#[test]
fn a_panic_at_leaf_50_000_of_a_100_000_level_chain_is_caught_by_catch_unwind() {
    if child::case().as_deref() == Some("map") {
        let c = chain(LEVELS);
        assert_eq!(
            panic_message(|| pytree_std::map(c, panics_at(50_000))),
            "leaf 50000"
        );
        // Without the panic the same walk succeeds.
        let mapped = pytree_std::map(chain(LEVELS), |x| x + 1.0);
        dismantle(mapped);
        println!("done");
        return;
    }
    in_child(
        "a_panic_at_leaf_50_000_of_a_100_000_level_chain_is_caught_by_catch_unwind",
        "map",
    );
}

#[test]
fn a_panic_after_the_deep_field_was_built_is_caught_by_catch_unwind() {
    if child::case().as_deref() == Some("built") {
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
        println!("done");
        return;
    }
    in_child(
        "a_panic_after_the_deep_field_was_built_is_caught_by_catch_unwind",
        "built",
    );
}

#[test]
fn a_panic_in_a_vec_of_deep_chains_is_caught_by_catch_unwind() {
    if child::case().as_deref() == Some("vec") {
        // Three chains: the panic is in the second, so one chain is mapped
        // and one is not yet touched when it comes.
        let chains = vec![chain(LEVELS), chain(LEVELS), chain(LEVELS)];
        assert_eq!(
            panic_message(|| pytree_std::map(chains, panics_at(LEVELS + 10))),
            format!("leaf {}", LEVELS + 10)
        );
        println!("done");
        return;
    }
    in_child(
        "a_panic_in_a_vec_of_deep_chains_is_caught_by_catch_unwind",
        "vec",
    );
}

#[test]
fn a_panic_in_a_vecdeque_or_an_array_of_deep_chains_is_caught_by_catch_unwind() {
    if child::case().as_deref() == Some("vecdeque_array") {
        let chains =
            std::collections::VecDeque::from([chain(LEVELS), chain(LEVELS), chain(LEVELS)]);
        assert_eq!(
            panic_message(|| pytree_std::map(chains, panics_at(LEVELS + 10))),
            format!("leaf {}", LEVELS + 10)
        );
        let chains = [chain(LEVELS), chain(LEVELS), chain(LEVELS)];
        assert_eq!(
            panic_message(|| pytree_std::map(chains, panics_at(LEVELS + 10))),
            format!("leaf {}", LEVELS + 10)
        );
        println!("done");
        return;
    }
    in_child(
        "a_panic_in_a_vecdeque_or_an_array_of_deep_chains_is_caught_by_catch_unwind",
        "vecdeque_array",
    );
}

/// A sink that panics at leaf `at`.
struct PanickingSink {
    seen: usize,
    at: usize,
}

impl pytree_std::Sink<f64> for PanickingSink {
    fn leaf(&mut self, _leaf: f64) {
        self.seen += 1;
        if self.seen == self.at + 1 {
            panic!("sink at leaf {}", self.at);
        }
    }
}

#[test]
fn a_sink_that_panics_inside_flatten_into_a_deep_tree_is_caught_by_catch_unwind() {
    if child::case().as_deref() == Some("sink") {
        use pytree_std::Flatten;
        let shapes: [(&str, usize); 2] = [("chain", 10), ("vec", LEVELS + 10)];
        for (what, at) in shapes {
            let mut sink = PanickingSink { seen: 0, at };
            assert_eq!(
                panic_message(|| match what {
                    "chain" => chain(LEVELS).flatten_into(&mut sink),
                    _ => vec![chain(LEVELS), chain(LEVELS), chain(LEVELS)].flatten_into(&mut sink),
                }),
                format!("sink at leaf {at}"),
                "{what}"
            );
        }
        let mut sink = PanickingSink {
            seen: 0,
            at: LEVELS + 10,
        };
        let chains = std::collections::VecDeque::from([chain(LEVELS), chain(LEVELS)]);
        panic_message(|| chains.flatten_into(&mut sink));
        let mut sink = PanickingSink {
            seen: 0,
            at: LEVELS + 10,
        };
        panic_message(|| [chain(LEVELS), chain(LEVELS)].flatten_into(&mut sink));
        // A tuple: the second chain is still held when the first panics.
        let mut sink = PanickingSink { seen: 0, at: 10 };
        panic_message(|| (chain(LEVELS), chain(LEVELS)).flatten_into(&mut sink));
        println!("done");
        return;
    }
    in_child(
        "a_sink_that_panics_inside_flatten_into_a_deep_tree_is_caught_by_catch_unwind",
        "sink",
    );
}
