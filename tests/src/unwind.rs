//! What the unwinding tests share: a closure and a sink that panic at a
//! chosen leaf, and the message of a panic caught.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pytree_std::Sink;

/// `f`, made to panic with "leaf `at`" at leaf `at` (counting from 0).
pub fn panics_at<A, R>(at: usize, mut f: impl FnMut(A) -> R) -> impl FnMut(A) -> R {
    let mut seen = 0;
    move |x| {
        seen += 1;
        if seen == at + 1 {
            panic!("leaf {at}");
        }
        f(x)
    }
}

/// Runs `f`, which must panic with the panic coming back here (not the
/// process dying while unwinding); returns the panic's message. Where `f`
/// returns instead, its result is forgotten (a deep one would overflow
/// the stack as it drops) and this panics.
pub fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => {
            std::mem::forget(r);
            panic!("no panic")
        }
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default(),
    }
}

/// A sink that panics with "leaf `at`" at leaf `at` (counting from 0).
pub struct PanickingSink {
    seen: usize,
    at: usize,
}

impl PanickingSink {
    /// A sink to panic at leaf `at`.
    pub fn new(at: usize) -> PanickingSink {
        PanickingSink { seen: 0, at }
    }
}

impl<L> Sink<L> for PanickingSink {
    fn leaf(&mut self, _leaf: L) {
        self.seen += 1;
        if self.seen == self.at + 1 {
            panic!("leaf {}", self.at);
        }
    }
}
