//! What the path-aware operations allocate, counted by a global allocator
//! (per thread, so parallel tests do not disturb each other): walks that
//! lend the path allocate nothing per leaf, walks that return paths clone
//! one `KeyPath` per leaf (as JAX builds one key tuple per leaf), and
//! lookups by path and reductions allocate nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pytree_std::{KeyPath, PyTree};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Allocations made by `f` on this thread.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

#[derive(PyTree, Clone)]
struct Linear {
    w: f32,
    #[pytree(kind = "state")]
    b: f32,
}

fn layers(n: usize) -> Vec<Linear> {
    (0..n)
        .map(|i| Linear {
            w: i as f32,
            b: 0.0,
        })
        .collect()
}

#[test]
fn zip_mut_with_path_of_one_tree_read_allocates_nothing_per_leaf() {
    let big = vec![1.0f32; 10_000];
    let (n, seen) = allocations(|| {
        let mut seen = 0;
        pytree_std::paths::zip_mut_with_path([], [&big], |_, [], [_]| seen += 1).unwrap();
        seen
    });
    assert_eq!(seen, 10_000);
    assert!(n <= 8, "{n} allocations for 10 000 leaves");

    let nested = layers(1_000);
    let (n, states) = allocations(|| {
        let mut states = 0;
        pytree_std::paths::zip_mut_with_path([], [&nested], |path, [], [_]| {
            states += usize::from(path.kind() == "state")
        })
        .unwrap();
        states
    });
    assert_eq!(states, 1_000);
    assert!(n <= 8, "{n} allocations for 2 000 leaves in structs");
}

#[test]
fn leaves_with_path_clones_one_path_per_leaf() {
    let nested = layers(1_000);
    let (n, pairs) = allocations(|| pytree_std::paths::leaves_with_path(&nested));
    assert_eq!(pairs.len(), 2_000);
    assert!(
        (2_000..=2_000 + 32).contains(&n),
        "{n} allocations for 2 000 leaves"
    );
}

#[test]
fn get_and_set_by_path_allocate_nothing() {
    let mut big = vec![1.0f32; 10_000];
    let path = KeyPath::root().index(9_999);
    let (n, found) = allocations(|| pytree_std::paths::get(&big, &path).copied());
    assert_eq!((n, found), (0, Ok(1.0)));
    let (n, old) = allocations(|| pytree_std::paths::set(&mut big, &path, 2.0));
    assert_eq!((n, old), (0, Ok(1.0)));

    let nested = layers(1_000);
    let path = KeyPath::root().index(700).field("w");
    let (n, found) = allocations(|| pytree_std::paths::get(&nested, &path).copied());
    assert_eq!((n, found), (0, Ok(700.0)));
}

#[test]
fn reductions_allocate_nothing() {
    let nested = layers(1_000);
    let (n, total) = allocations(|| {
        (
            pytree_std::generic::reduce::sum::<pytree_std::Std, _>(&nested),
            pytree_std::generic::reduce::max::<pytree_std::Std, _>(&nested).copied(),
            pytree_std::generic::reduce::count::<pytree_std::Std, _, _>(&nested, |x| *x > 10.0),
            pytree_std::reductions::fold(&nested, 0, |n, _| n + 1),
        )
    });
    assert_eq!(n, 0);
    assert_eq!(total, (499_500.0, Some(999.0), 989, 2_000));
}
