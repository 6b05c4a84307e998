//! Deserialized schemas are interned (leaked once each, for the life of
//! the program), but only for documents that were read successfully: a
//! rejected document keeps nothing. Measured with a global allocator that
//! tallies the bytes this thread still holds (its own test binary, so no
//! other test's allocations are counted).

use std::cell::Cell;

use pytree_std::TreeDef;

thread_local! {
    // Const-initialized and without a destructor: using it allocates nothing.
    static NET: Cell<isize> = const { Cell::new(0) };
}

fn record(delta: isize) {
    let _ = NET.try_with(|n| n.set(n.get() + delta));
}

#[global_allocator]
static ALLOC: pytree_tests::counting::Counting = pytree_tests::counting::Counting::new(record);

/// A document with one schema of about 1 KB named `name`, whose records
/// are wrong (one leaf too many) unless `valid`.
fn doc(name: &str, valid: bool) -> String {
    let fields: Vec<String> = (0..30)
        .map(|i| format!(r#"{{"name":"field_number_{i:04}","static":false}}"#))
        .collect();
    let leaves = if valid { 30 } else { 31 };
    format!(
        r#"{{"schemas":[{{"type":"{name}","module":"m","variant":null,"style":"named","fields":[{}]}}],"nodes":[{{"struct":{{"schema":0,"statics":[]}}}},{{"leaves":{leaves}}}]}}"#,
        fields.join(",")
    )
}

fn held_after(f: impl FnOnce()) -> isize {
    let before = NET.with(Cell::get);
    f();
    NET.with(Cell::get) - before
}

#[test]
fn rejected_documents_keep_nothing_and_accepted_ones_keep_each_schema_once() {
    // Warm up the tables (their first allocation) with an accepted read.
    let _ = serde_json::from_str::<TreeDef>(&doc("Warm", true)).unwrap();
    let docs: Vec<String> = (0..2000)
        .map(|i| doc(&format!("Rejected{i}"), false))
        .collect();
    let held = held_after(|| {
        for d in &docs {
            assert!(serde_json::from_str::<TreeDef>(d).is_err());
        }
    });
    assert!(held <= 0, "2000 rejected documents keep {held} bytes");

    // Accepted documents keep their schema (about 1 KB each), once.
    let docs: Vec<String> = (0..200)
        .map(|i| doc(&format!("Accepted{i}"), true))
        .collect();
    let first = held_after(|| {
        for d in &docs {
            drop(serde_json::from_str::<TreeDef>(d).unwrap());
        }
    });
    assert!(first > 200 * 500, "200 new schemas keep only {first} bytes");
    let again = held_after(|| {
        for d in &docs {
            drop(serde_json::from_str::<TreeDef>(d).unwrap());
        }
    });
    assert!(again <= 0, "reading them again keeps {again} bytes");
}
