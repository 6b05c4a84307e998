//! A TreeDef's memory of the one type it was last read as: after an
//! [`unflatten`](crate::unflatten) that checked every record against a type
//! and succeeded, the TreeDef keeps a key of that type (and namespace), and
//! later unflattens of the same type read it without the per-record checks
//! (`sources/trusted.rs`). One slot, last writer wins; a relaxed atomic, so
//! a shared `&TreeDef` may be read as different types from several threads.
//!
//! The key is the 64-bit hash of the type's `TypeId` (through `typeid`,
//! which also covers types with lifetimes). Two types used with the same
//! TreeDef collide with probability 2^-64; and the trusted read is safe
//! code that still checks every record it reads, so even then nothing is
//! unsound: at worst a wrong tree shape gives an error.

use core::hash::{Hash, Hasher};
use core::sync::atomic::{AtomicU64, Ordering};

/// The key of `T` read in namespace `Ns` (never 0, which means "none").
#[inline]
pub(crate) fn type_key<Ns, T>() -> u64 {
    let mut h = Fnv1a::new();
    typeid::of::<(Ns, T)>().hash(&mut h);
    h.finish() | 1
}

/// FNV-1a, a fixed hash (the same in every run): here over whatever
/// `TypeId::hash` writes (a word, today).
pub(crate) struct Fnv1a(u64);

impl Fnv1a {
    pub(crate) fn new() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The slot: 0, or the key of the type last checked.
#[derive(Default)]
pub(crate) struct CheckedFor(AtomicU64);

impl CheckedFor {
    #[inline]
    pub(crate) fn is(&self, key: u64) -> bool {
        self.0.load(Ordering::Relaxed) == key
    }

    #[inline]
    pub(crate) fn set(&self, key: u64) {
        self.0.store(key, Ordering::Relaxed);
    }
}

impl Clone for CheckedFor {
    fn clone(&self) -> Self {
        CheckedFor(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ns;

    #[test]
    fn keys_differ_by_type_and_namespace_and_ignore_lifetimes() {
        assert_eq!(type_key::<Ns, u8>(), type_key::<Ns, u8>());
        assert_ne!(type_key::<Ns, u8>(), type_key::<Ns, u16>());
        assert_ne!(type_key::<Ns, u8>(), type_key::<(), u8>());
        fn key_of<'a>(_: &'a str) -> u64 {
            type_key::<Ns, &'a str>()
        }
        assert_eq!(
            key_of(&alloc::string::String::from("x")),
            type_key::<Ns, &'static str>()
        );
        assert_ne!(type_key::<Ns, u8>(), 0);
    }

    #[test]
    fn the_slot_remembers_the_last_key() {
        let slot = CheckedFor::default();
        assert!(!slot.is(type_key::<Ns, u8>()));
        slot.set(type_key::<Ns, u8>());
        assert!(slot.is(type_key::<Ns, u8>()));
        slot.set(type_key::<Ns, u16>());
        assert!(!slot.is(type_key::<Ns, u8>()));
        assert!(slot.clone().is(type_key::<Ns, u16>()));
    }
}
