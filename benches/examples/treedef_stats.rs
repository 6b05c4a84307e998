//! Prints the size of each anchor tree's TreeDef: nodes (leaves included),
//! records, heap bytes and bytes per node (the target: at most 16;
//! `heap_bytes` counts the records and the statics table, not the static
//! values themselves).
//!
//! `cargo run --release -p pytree-benches --example treedef_stats`

use pytree_std::{Flatten, Std, TreeDef};

use pytree_benches::shapes;

fn row<T: Flatten<Std>>(name: &str, tree: &T) {
    let def: TreeDef = pytree_std::structure(tree);
    println!(
        "| {name} | {} | {} | {} | {} | {:.2} |",
        def.num_leaves(),
        def.num_nodes(),
        def.num_records(),
        def.heap_bytes(),
        def.heap_bytes() as f64 / def.num_nodes() as f64,
    );
}

fn main() {
    println!("| tree | leaves | nodes | records | heap bytes | bytes per node |");
    println!("|---|---:|---:|---:|---:|---:|");
    row("T1_transformer", &shapes::t1());
    row("T2_wide", &shapes::t2());
    row("T3_deep", &shapes::t3());
    row("T4_dict10k", &shapes::t4());
    row("T4_hashmap10k", &shapes::t4_hash());
    row("T5_small", &shapes::t5());
}
