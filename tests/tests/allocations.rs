//! What the operations allocate on the T1 transformer (771 leaves, 48
//! layers in a `Vec`), counted by a global allocator that tallies the
//! current thread's calls (tests run on several threads at once).
//!
//! The rule: an operation allocates its output and nothing else. `map`,
//! `map2`, `zip_mut`, `for_each`, `for_each_mut` and `leaves` build no
//! TreeDef and no temporary buffer.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pytree_benches::hand;
use pytree_benches::shapes::{self, Layer, Transformer};

/// Allocator calls and net bytes since the thread started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tally {
    allocs: usize,
    reallocs: usize,
    deallocs: usize,
    net_bytes: isize,
}

thread_local! {
    // Const-initialized and without a destructor: using it allocates nothing.
    static TALLY: Cell<Tally> = const {
        Cell::new(Tally { allocs: 0, reallocs: 0, deallocs: 0, net_bytes: 0 })
    };
}

fn record(update: impl FnOnce(&mut Tally)) {
    let _ = TALLY.try_with(|cell| {
        let mut t = cell.get();
        update(&mut t);
        cell.set(t);
    });
}

struct Counting;

// SAFETY: every method forwards to `System` with the same arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(|t| {
            t.allocs += 1;
            t.net_bytes += layout.size() as isize;
        });
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(|t| {
            t.allocs += 1;
            t.net_bytes += layout.size() as isize;
        });
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(|t| {
            t.reallocs += 1;
            t.net_bytes += new_size as isize - layout.size() as isize;
        });
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(|t| {
            t.deallocs += 1;
            t.net_bytes -= layout.size() as isize;
        });
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns its output with what the thread allocated meanwhile
/// (the output is returned, not dropped, so it is counted as allocated).
fn tally<R>(f: impl FnOnce() -> R) -> (R, Tally) {
    let before = TALLY.with(Cell::get);
    let out = f();
    let after = TALLY.with(Cell::get);
    let diff = Tally {
        allocs: after.allocs - before.allocs,
        reallocs: after.reallocs - before.reallocs,
        deallocs: after.deallocs - before.deallocs,
        net_bytes: after.net_bytes - before.net_bytes,
    };
    (out, diff)
}

const NOTHING: Tally = Tally {
    allocs: 0,
    reallocs: 0,
    deallocs: 0,
    net_bytes: 0,
};

/// Bytes of the one buffer a T1 owns (its `Vec<Layer>`).
fn layers_bytes(t: &Transformer) -> isize {
    (t.layers.capacity() * size_of::<Layer>()) as isize
}

#[test]
fn the_tally_sees_a_vec_being_allocated() {
    let (v, t) = tally(|| vec![0u64; 10]);
    assert_eq!(
        t,
        Tally {
            allocs: 1,
            reallocs: 0,
            deallocs: 0,
            net_bytes: 80
        }
    );
    drop(v);
}

#[test]
fn map_reuses_the_input_buffer_and_allocates_nothing() {
    let t = shapes::t1();
    let (out, lib) = tally(|| pytree_std::map(t, |x| x + 1.0));
    assert_eq!(lib, NOTHING);
    let (_, by_hand) = tally(|| hand::map(out, |x| x + 1.0));
    assert_eq!(by_hand, NOTHING);
}

#[test]
fn map2_allocates_exactly_the_output_layers() {
    let (a, b) = (shapes::t1(), shapes::t1());
    let (out, lib) = tally(|| pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap());
    assert_eq!(out.layers.capacity(), 48);
    assert_eq!(
        lib,
        Tally {
            allocs: 1,
            reallocs: 0,
            deallocs: 0,
            net_bytes: layers_bytes(&out)
        }
    );
    let (_, by_hand) = tally(|| hand::map2(&a, &b, |x, y| x + y));
    assert_eq!(by_hand, lib);
}

#[test]
fn map_n_of_three_trees_allocates_exactly_the_output_layers() {
    let (a, b, c) = (shapes::t1(), shapes::t1(), shapes::t1());
    let (out, lib) = tally(|| pytree_std::map_n(&a, [&b, &c], |x, [y, z]| x + y + z).unwrap());
    assert_eq!(lib.allocs, 1);
    assert_eq!(lib.net_bytes, layers_bytes(&out));
    assert_eq!((lib.reallocs, lib.deallocs), (0, 0));
}

#[test]
fn zip_mut_the_sgd_step_allocates_nothing() {
    let (mut params, grads) = (shapes::t1(), shapes::t1());
    let (res, lib) =
        tally(|| pytree_std::zip_mut([&mut params], [&grads], |[p], [g]| *p -= 0.01 * g));
    res.unwrap();
    assert_eq!(lib, NOTHING);
    assert_eq!(params.embed.w, 1.0 - 0.01);
}

#[test]
fn fold_and_for_each_mut_allocate_nothing() {
    let mut t = shapes::t1();
    let mut sum = 0.0;
    // A visit that reads is a fold (no `Vec` of the leaves).
    let ((), read) = tally(|| pytree_std::reductions::fold(&t, (), |(), x| sum += x));
    assert_eq!(read, NOTHING);
    assert_eq!(sum, (1..=shapes::T1_LEAVES).sum::<usize>() as f64);
    let ((), write) = tally(|| pytree_std::for_each_mut(&mut t, |x| *x = 0.0));
    assert_eq!(write, NOTHING);
    assert_eq!(t.final_ln.b, 0.0);
}

#[test]
fn leaves_allocates_only_its_output_vec() {
    let t = shapes::t1();
    let (out, lib) = tally(|| pytree_std::leaves(&t));
    assert_eq!(out.len(), shapes::T1_LEAVES);
    // The leaf-count hint (a struct of uniform layers: exact) sizes the
    // output once: one allocation, never grown, never freed.
    assert_eq!(lib.allocs, 1);
    assert_eq!(lib.reallocs, 0);
    assert_eq!(lib.deallocs, 0);
    assert_eq!(out.capacity(), shapes::T1_LEAVES);
    assert_eq!(lib.net_bytes, (out.capacity() * size_of::<&f64>()) as isize);
    // As a hand-written loop that sizes its Vec up front.
    let (_, by_hand) = tally(|| hand::leaves_ref_sized(&t));
    assert_eq!(by_hand, lib);
}

#[test]
fn leaves_of_a_map_of_leaves_allocate_their_output_once_without_growing() {
    let btree = shapes::t4();
    let (out, tally_btree) = tally(|| pytree_std::leaves(&btree));
    let hash = shapes::t4_hash();
    let (out_hash, tally_hash) = tally(|| pytree_std::leaves(&hash));
    assert_eq!((out.len(), out_hash.len()), (10_000, 10_000));
    // The map says how many leaf values follow: one exact allocation.
    assert_eq!((tally_btree.allocs, tally_btree.reallocs), (1, 0));
    assert_eq!(tally_btree.net_bytes, (10_000 * size_of::<&f64>()) as isize);
    // A HashMap also sorts its entries, in a buffer freed on return.
    assert_eq!(
        (tally_hash.allocs, tally_hash.reallocs, tally_hash.deallocs),
        (2, 0, 1)
    );
}

#[test]
fn flatten_allocates_its_leaves_and_the_treedef_records_and_frees_the_input() {
    let t = shapes::t1();
    let input = layers_bytes(&t);
    let ((leaves, def), lib) = tally(|| pytree_std::flatten(t));
    assert_eq!(lib.allocs, 2, "{lib:?}");
    assert_eq!(lib.deallocs, 1, "the input's Vec<Layer>: {lib:?}");
    let output = (leaves.capacity() * size_of::<f64>() + def.heap_bytes()) as isize;
    assert_eq!(lib.net_bytes, output - input);
}

#[test]
fn flatten_of_a_vec_of_scalars_keeps_its_buffer_and_allocates_only_the_records() {
    // The issue-20 probe: the `Vec`'s buffer becomes the leaves (a move);
    // no buffer sized from the leaf count is allocated and thrown away.
    let v: Vec<f64> = (0..100_000).map(f64::from).collect();
    let buffer = v.as_ptr();
    let ((leaves, def), lib) = tally(|| pytree_std::flatten(v));
    assert_eq!(leaves.as_ptr(), buffer);
    assert_eq!(leaves.len(), 100_000);
    assert_eq!(def.num_leaves(), 100_000);
    // The records' buffer, and its copy trimmed to size.
    assert_eq!(
        (lib.allocs, lib.deallocs),
        (2, 1),
        "the records only: {lib:?}"
    );
    assert_eq!(lib.net_bytes, def.heap_bytes() as isize, "{lib:?}");
}

#[test]
fn flatten_grows_each_buffer_once_for_a_vec_of_like_layers() {
    let t = shapes::t1();
    let ((leaves, def), lib) = tally(|| pytree_std::flatten(t));
    // After the first layer, flatten reserves room for the 47 others like
    // it: one `realloc` for the leaves, one for the records, and one to
    // trim the records to size (growing by doubling took eight).
    assert_eq!(lib.reallocs, 3, "{lib:?}");
    assert_eq!(leaves.len(), shapes::T1_LEAVES);
    assert_eq!(def.heap_bytes(), def.num_records() * 16);
}

#[test]
fn flatten_reserves_a_bounded_amount_when_a_vecs_first_element_is_unlike_the_rest() {
    // The first element has 100 000 leaves, the 9 999 others none: the
    // extrapolation from the first would be a billion leaves.
    let mut t: Vec<Vec<f64>> = vec![Vec::new(); 10_000];
    t[0] = vec![1.0; 100_000];
    let ((leaves, def), lib) = tally(|| pytree_std::flatten(t));
    assert_eq!(leaves.len(), 100_000);
    assert_eq!(def.num_leaves(), 100_000);
    let slack = (leaves.capacity() - leaves.len()) * size_of::<f64>();
    assert!(slack <= 256 * 1024, "{slack} bytes of slack");
    assert!(lib.net_bytes < 2 * 1024 * 1024, "{lib:?}");
}
