//! Issue 29's large document by hand: a tuple of 2^26 - 1 `None`s, the
//! shortest record there is (470 MB of JSON, 2^26 nodes: the default node
//! limit), read
//! and given to one reader of the TreeDef, which prints what it took: CPU
//! seconds (`getrusage`) and the process's peak memory (`ru_maxrss`: the
//! document and its TreeDef included). One reader per process, so that
//! each peak is its own; run under an address-space cap as the issue did:
//!
//! ```sh
//! cargo build --release -p pytree-benches --example large_document
//! for r in read children entries leaf_paths fold transform compose flatten_up_to serialize \
//!          display; do
//!     (ulimit -v 4194304; target/release/examples/large_document "$r")
//! done
//! for r in diff is_prefix_of broadcast_to_common_suffix; do
//!     (ulimit -v 6291456; target/release/examples/large_document "$r")
//! done
//! ```
//!
//! (The readers of two TreeDefs hold two of 1 GiB each, and read the
//! second while the first is held: 6 GiB of address space.)
//!
//! An optional second argument sets the number of records' log2 (26).
//! Results: docs/design-notes.md ("Large documents").

use pytree_std::TreeDef;

/// This process's CPU seconds and peak resident memory in MiB.
fn usage() -> (f64, f64) {
    // SAFETY: `rusage` is a C struct of integers and `timeval`s, for
    // which all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable `rusage`; `RUSAGE_SELF` is a
    // constant the platform defines.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (
        secs(ru.ru_utime) + secs(ru.ru_stime),
        ru.ru_maxrss as f64 / 1024.0,
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let reader = args.next().unwrap_or_else(|| "read".into());
    let log2: u32 = args
        .next()
        .map_or(26, |s| s.parse().expect("log2 of the records"));
    let n = (1usize << log2) - 1;
    let mut doc = format!(r#"{{"schemas":[],"nodes":[{{"tuple":{n}}}"#);
    for _ in 0..n {
        doc.push_str(r#","none""#);
    }
    doc.push_str("]}");
    let (cpu0, _) = usage();
    let def: TreeDef = serde_json::from_str(&doc).expect("within the default limits");
    let (cpu1, rss1) = usage();
    let d = doc.len() as f64 / (1 << 20) as f64;
    let e = def.encoded_bytes() as f64 / (1 << 20) as f64;
    // The other TreeDef of the readers of two: the last `None` a `Some`
    // (read before the reader runs, the documents then dropped).
    let two = ["diff", "is_prefix_of", "broadcast_to_common_suffix"].contains(&reader.as_str());
    let other = two.then(|| {
        let i = doc.rfind(r#""none""#).expect("a None");
        let text = format!("{}{}{}", &doc[..i], r#""some",{"leaves":1}"#, &doc[i + 6..]);
        drop(std::mem::take(&mut doc));
        serde_json::from_str::<TreeDef>(&text).expect("within the default limits")
    });
    let other = || other.as_ref().expect("read for the readers of two");
    let (cpu1, _) = if two { usage() } else { (cpu1, 0.0) };
    let outcome: Result<usize, pytree_std::Error> = match reader.as_str() {
        "read" => Ok(def.num_records()),
        "children" => def.children().map(|c| c.len()),
        "entries" => def.entries().map(|c| c.len()),
        "leaf_paths" => def.leaf_paths().map(|c| c.len()),
        "fold" => def.fold(0..def.num_leaves(), |i| i, |_, kids| kids.len()),
        "transform" => def
            .transform(|_, node| Ok(node.clone()), |_| TreeDef::leaf())
            .map(|t| t.num_records()),
        "compose" => def
            .compose(&pytree_std::structure(&(0u8, 0u8)))
            .map(|t| t.num_records()),
        "diff" => Ok(def.diff(other()).len()),
        "is_prefix_of" => Ok(usize::from(def.is_prefix_of(other()))),
        "broadcast_to_common_suffix" => def
            .broadcast_to_common_suffix(other())
            .map(|t| t.num_records()),
        "flatten_up_to" => {
            // The prefix of a `Vec` of two leaves: the aligner stops at
            // the root (a tuple of 2^26 - 1 children against a list of 2).
            pytree_std::nested::flatten_up_to(&def, vec![1u8, 2]).map(|v| v.len())
        }
        "serialize" => Ok(serde_json::to_vec(&def).expect("serializable").len()),
        "display" => Ok(def.to_string().len()),
        other => panic!("no reader {other}"),
    };
    let (cpu2, rss2) = usage();
    let result = match outcome {
        Ok(n) => format!("ok ({n})"),
        Err(e) => {
            let e = e.to_string();
            format!("error: {}", e.split(" (").next().unwrap_or(&e))
        }
    };
    println!(
        "| {reader} | {:.1} s | {:.0} MiB ({:.1} x the document) | {result} |",
        if reader == "read" {
            cpu1 - cpu0
        } else {
            cpu2 - cpu1
        },
        if reader == "read" { rss1 } else { rss2 },
        if reader == "read" { rss1 } else { rss2 } / d
    );
    if reader == "read" {
        println!("document {d:.0} MiB, TreeDef {e:.0} MiB ({:.2} x)", e / d);
    }
}
