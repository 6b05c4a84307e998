//! A global allocator that forwards to [`System`] and reports every
//! change in the bytes held to a function of the test's own (a
//! thread-local tally), so a test can measure what an operation
//! allocates instead of timing it.
//!
//! ```ignore
//! fn record(delta: isize) { /* add `delta` to a thread-local */ }
//! #[global_allocator]
//! static ALLOCATOR: pytree_tests::counting::Counting = pytree_tests::counting::Counting::new(record);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// [`System`], calling `record(delta)` with the change in bytes held
/// before each allocation, reallocation and deallocation. `record` must
/// not allocate (a const-initialized thread-local `Cell` does not).
pub struct Counting {
    record: fn(isize),
}

impl Counting {
    /// An allocator that reports to `record`.
    pub const fn new(record: fn(isize)) -> Self {
        Counting { record }
    }
}

// SAFETY: every method forwards to `System` with the same arguments;
// `record` only updates the test's tally and allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        (self.record)(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        (self.record)(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        (self.record)(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        (self.record)(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
}
