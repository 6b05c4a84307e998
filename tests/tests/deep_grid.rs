//! Every container, every operation, 100 000 levels deep: a derived
//! recursive enum whose recursion passes through one container
//! (`enum D { V(i64), S(Vec<D>) }`, and the same through `VecDeque`,
//! `BTreeMap`, `HashMap`, `IndexMap`, a box of a tuple, an `Rc` of an
//! array, an `Option` of an `Arc` of a tuple), each level holding a leaf,
//! the next level and another leaf. Each operation (structure,
//! for_each_mut, flatten, unflatten, map, map2, zip_mut) must succeed; an
//! unflatten short of a leaf, or with half the leaves more, must be an
//! error; a panic in the closure of map, map2, map_into or zip_mut, or in
//! the sink of `flatten_into`, halfway down must come back to
//! `catch_unwind`: at the first leaf of a level (the walk still owns the
//! deep rest) and at its last (it owns the deep part built). Whatever an
//! error or a panic leaves half-built must be dropped without overflowing
//! the stack (pytree-core's `unwind.rs`).
//!
//! Each container runs in a child process under a 4 GiB address-space cap
//! (`pytree_tests::child`), so that a stack overflow fails the test
//! instead of killing the runner; the child prints each case before it
//! runs it, and a failure names the last case printed. The depth is
//! `PYTREE_DEEP_LEVELS` (default 100 000; the run at 10^6 levels is in
//! fuzz/README.md). The values the cases return are leaked (`mem::forget`):
//! dropping a deep value outside a walk is std's recursive drop, not the
//! library's; the two kept to the end are dropped with
//! `basic::drop_deep`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::mem::{forget, ManuallyDrop};
use std::rc::Rc;
use std::sync::Arc;

use pytree_std::indexmap::IndexMap;
use pytree_std::{ErrorKind, PyTree, Std, Unflatten};
use pytree_tests::child;
use pytree_tests::unwind::{panic_message, panics_at, PanickingSink};

/// A recursive value through one container: a leaf, or three values (a
/// leaf, the next level, a leaf).
trait Deep: Unflatten<Std, Leaf = i64> {
    fn leaf(v: i64) -> Self;
    fn triple(a: Self, b: Self, c: Self) -> Self;
}

/// Defines module `$m` with `enum D { V(i64), S($ty) }` (`$ty` holding
/// three `D`s, made from `$a`, `$b` and `$c` by `$make`) and its `Deep`
/// impl.
macro_rules! deep_type {
    ($m:ident, $ty:ty, |$a:ident, $b:ident, $c:ident| $make:expr) => {
        mod $m {
            #[allow(unused_imports)]
            use super::*;

            #[derive(PyTree, Clone)]
            pub enum D {
                V(i64),
                S($ty),
            }

            impl super::Deep for D {
                fn leaf(v: i64) -> Self {
                    D::V(v)
                }
                fn triple($a: Self, $b: Self, $c: Self) -> Self {
                    D::S($make)
                }
            }
        }
    };
}

deep_type!(vec, Vec<D>, |a, b, c| vec![a, b, c]);
deep_type!(vec_deque, VecDeque<D>, |a, b, c| VecDeque::from([a, b, c]));
deep_type!(btree_map, BTreeMap<u8, D>, |a, b, c| BTreeMap::from([(0, a), (1, b), (2, c)]));
deep_type!(hash_map, HashMap<u8, D>, |a, b, c| HashMap::from([(0, a), (1, b), (2, c)]));
deep_type!(index_map, IndexMap<u8, D>, |a, b, c| IndexMap::from([(0, a), (1, b), (2, c)]));
deep_type!(box_tuple, Box<(D, D, D)>, |a, b, c| Box::new((a, b, c)));
deep_type!(rc_array, Rc<[D; 3]>, |a, b, c| Rc::new([a, b, c]));
deep_type!(option_arc_tuple, Option<Arc<(D, D, D)>>, |a, b, c| Some(
    Arc::new((a, b, c))
));

/// Levels of the values (and leaves: one per level).
fn levels() -> usize {
    std::env::var("PYTREE_DEEP_LEVELS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000)
}

/// `levels` levels: each level holds a leaf, the next level and another
/// leaf, so that a walk stopped at the first leaf of a level still holds
/// the deep rest, and one stopped at its last leaf holds the deep part it
/// has built. `2 * levels - 1` leaves, numbered in leaf order.
fn build<T: Deep>(levels: usize) -> T {
    let n = 2 * levels as i64 - 1;
    let mut t = T::leaf(levels as i64 - 1);
    for i in (0..levels as i64 - 1).rev() {
        t = T::triple(T::leaf(i), t, T::leaf(n - 1 - i));
    }
    t
}

/// Says which case runs next (so that a crash names it).
/// `PYTREE_DEEP_STOP=NAME` ends the process before case `NAME` (to
/// measure the cases before it).
fn case(name: &str) {
    println!("case: {name}");
    std::io::stdout().flush().unwrap();
    if std::env::var("PYTREE_DEEP_STOP").as_deref() == Ok(name) {
        std::process::exit(0);
    }
}

/// Every case for values of type `T`.
fn grid<T: Deep>() {
    // The expected panics ("leaf N") would fill stderr; any other one
    // (a failed assertion) is printed.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let expected = info
            .payload()
            .downcast_ref::<String>()
            .is_some_and(|m| m.starts_with("leaf "));
        if !expected {
            hook(info);
        }
    }));
    let levels = levels();
    let n = 2 * levels - 1;
    // Leaves of the level halfway down: its first (the deep rest of the
    // value, 50 000 levels, is still to come when a walk reaches it) and
    // its last (the deep rest is built). A panic at either unwinds
    // through the 50 000 levels above it.
    let (first, last) = (levels / 2, n - 1 - levels / 2);
    let fresh = || build::<T>(levels);
    // Never dropped (std's drop would recurse), also when an assertion
    // fails.
    let mut v = ManuallyDrop::new(fresh());
    let w = ManuallyDrop::new(fresh());

    case("structure");
    let def = pytree_std::structure(&*v);
    assert_eq!(def.num_leaves(), n);
    case("for_each_mut");
    let mut seen = 0;
    pytree_std::for_each_mut(&mut *v, |x| {
        assert_eq!(*x, seen);
        seen += 1;
    });
    assert_eq!(seen, n as i64);
    case("flatten");
    let (leaves, flat_def) = pytree_std::flatten(fresh());
    assert_eq!(flat_def, def);
    assert_eq!(leaves, (0..n as i64).collect::<Vec<_>>());
    case("unflatten");
    let back: T = pytree_std::unflatten(&def, leaves.clone()).unwrap();
    forget(back);
    case("unflatten, a leaf short");
    let err = pytree_std::unflatten::<T>(&def, leaves[..n - 1].to_vec())
        .err()
        .expect("a leaf short");
    assert!(
        matches!(err.kind(), ErrorKind::TooFewLeaves { .. }),
        "{err}"
    );
    case("unflatten, half the leaves more");
    let err = pytree_std::unflatten::<T>(&def, (0..(n + n / 2) as i64).collect::<Vec<_>>())
        .err()
        .expect("too many leaves");
    assert!(
        matches!(err.kind(), ErrorKind::TooManyLeaves { .. }),
        "{err}"
    );
    case("map");
    forget(pytree_std::map(fresh(), |x| x + 1));
    case("map2");
    forget(pytree_std::walk::map_n(&*v, [&*w], |x, [y]| x + y).unwrap());
    case("zip_mut");
    pytree_std::zip_mut([&mut *v], [&*w], |[x], [y]| *x -= y).unwrap();

    // Panics where the operation owns the deep rest (not handed on yet)
    // or the deep part it has built.
    case("map, panicking with the rest to come");
    assert_eq!(
        panic_message(|| pytree_std::map(fresh(), panics_at(first, |x| x))),
        format!("leaf {first}")
    );
    case("map, panicking with the rest built");
    assert_eq!(
        panic_message(|| pytree_std::map(fresh(), panics_at(last, |x| x))),
        format!("leaf {last}")
    );
    case("map2, panicking with the rest built");
    assert_eq!(
        panic_message(|| {
            let mut seen = 0;
            pytree_std::walk::map_n(&*v, [&*w], |x, [y]| {
                seen += 1;
                if seen == last + 1 {
                    panic!("leaf {last}");
                }
                x + y
            })
        }),
        format!("leaf {last}")
    );
    case("map_into, panicking with the rest built");
    assert_eq!(
        panic_message(|| pytree_std::walk::map_into::<T, T, _>(fresh(), panics_at(last, |x| x))),
        format!("leaf {last}")
    );
    case("flatten_into a sink panicking with the rest to come");
    assert_eq!(
        panic_message(|| fresh().flatten_into(&mut PanickingSink::new(first))),
        format!("leaf {first}")
    );
    case("zip_mut, panicking halfway down");
    assert_eq!(
        panic_message(|| {
            let mut seen = 0;
            pytree_std::zip_mut([&mut *v], [&*w], |[x], [y]| {
                seen += 1;
                if seen == first + 1 {
                    panic!("leaf {first}");
                }
                *x += y;
            })
        }),
        format!("leaf {first}")
    );
    case("drop_deep");
    pytree_std::walk::drop_deep(ManuallyDrop::into_inner(v));
    pytree_std::walk::drop_deep(ManuallyDrop::into_inner(w));
    println!("done");
}

/// Runs the grid of `T` in a child process (test `test`, case `name`).
fn in_child<T: Deep>(test: &str, name: &str) {
    if child::case().as_deref() == Some(name) {
        grid::<T>();
        return;
    }
    let out = child::run_case(test, name, 4 << 30);
    // libtest may print "test NAME ... " on the line of the first case.
    let last = out
        .stdout
        .lines()
        .rev()
        .find_map(|l| {
            l.find("case: ")
                .map(|i| &l[i..])
                .or((l == "done").then_some(l))
        })
        .unwrap_or("(nothing printed)");
    assert!(
        out.status.success() && last == "done",
        "{name}: {:?} after {last:?}\nstderr: {}",
        out.status,
        out.stderr
    );
}

macro_rules! grid_tests {
    ($($m:ident),* $(,)?) => {
        $(
            #[test]
            fn $m() {
                in_child::<$m::D>(stringify!($m), stringify!($m));
            }
        )*
    };
}

grid_tests!(
    vec,
    vec_deque,
    btree_map,
    hash_map,
    index_map,
    box_tuple,
    rc_array,
    option_arc_tuple
);
