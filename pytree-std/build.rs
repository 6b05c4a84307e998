//! Enables the AVX-512 copy of the element loops (`cfg(pytree_avx512)`) when
//! the compiler accepts `#[target_feature(enable = "avx512f")]`: Rust 1.89
//! and later (the crate's MSRV, 1.88, does not). The version is read from
//! `$RUSTC --version`; anything unexpected leaves the AVX2 + FMA copy alone.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(pytree_avx512)");
    println!("cargo::rerun-if-env-changed=RUSTC");
    println!("cargo::rerun-if-changed=build.rs");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("--version").output() else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let minor = text
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    if minor.is_some_and(|m| m >= 89) {
        println!("cargo::rustc-cfg=pytree_avx512");
    }
}
