//! The sources of a load, [`Load`]'s: a file or a sharded checkpoint's
//! index opened by path ([`Load::open`], positioned reads), the same
//! memory-mapped ([`Load::open_mapped`], `unsafe`), or bytes in memory
//! ([`Load::from_bytes`]). Each gives a [`Checkpoint`] that keeps the
//! options for the loads from it.

use std::path::Path;

use pytree_core::Error;

use super::options::Load;
use super::reader::Checkpoint;
use super::shards;
use super::storage::Storage;

impl Load {
    /// Opens the file at `path` and checks its header; tensors are read
    /// when a load asks for them, with positioned reads straight into
    /// their destination (a new array, or the one a
    /// [`load_into`](Checkpoint::load_into) writes into), so a file truncated or
    /// rewritten meanwhile is an error naming the tensor. A path ending in
    /// `.json` is the index of a sharded checkpoint (transformers'
    /// `model.safetensors.index.json`): every shard it names (beside it)
    /// is opened, and the checkpoint is their tensors together; a shard
    /// that is missing, or that holds a tensor the index places elsewhere
    /// or lacks one it places there, is an error naming the shard and the
    /// index. A path that is not a regular file (a named pipe, a device, a
    /// directory) is refused before it is opened.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("pytree-open-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::save(&path, &(1u8,))?;
    /// let file = pytree_std::checkpoint::Load::new().open(&path)?;
    /// assert_eq!(file.len(), 1);
    /// # drop(file); std::fs::remove_file(&path).ok();
    /// let err = pytree_std::checkpoint::Load::new().open("/no/such/file.safetensors").unwrap_err();
    /// assert!(err.to_string().starts_with("at <root>: safetensors file /no/such/file.safetensors: cannot open"));
    /// let err = pytree_std::checkpoint::Load::new().open(std::env::temp_dir()).unwrap_err();
    /// assert!(err.to_string().ends_with("is a directory, not a regular file: a checkpoint is read from regular files only"));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Checkpoint, Error> {
        self.open_with(path.as_ref(), Storage::open)
    }

    /// [`open`](Load::open), with every file memory-mapped instead: the
    /// tensors' bytes are then borrowed from the map without a copy
    /// ([`TensorView::data`](super::TensorView::data) and
    /// [`data_in_memory`](super::TensorView::data_in_memory) of
    /// [`Checkpoint::tensor`]), for a reader that uses them in place. A
    /// load that builds or fills arrays copies them anyway and gains
    /// nothing from a map: use [`open`](Load::open) for those.
    ///
    /// # Safety
    ///
    /// The files must not be truncated or changed (by this process or
    /// another) while the returned [`Checkpoint`] lives: a read of a page
    /// past the new end of a file kills the process with SIGBUS, and a
    /// change shows through views already handed out, a `&[u8]` that
    /// changes under its borrower. This is the contract of every memory
    /// map (`memmap2::Mmap::map`, which candle's `MmapedSafetensors` and
    /// the `safetensors` crate's examples rely on); [`save`](fn@super::save)
    /// writes a new file and renames it over the old one, which does not
    /// break it.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("pytree-open-mapped-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::save(&path, &(7u8,))?;
    /// // SAFETY: nothing changes the file while `file` lives.
    /// let file = unsafe { pytree_std::checkpoint::Load::new().open_mapped(&path)? };
    /// assert_eq!(file.tensor("0").unwrap().data_in_memory(), Some(&[7u8][..]));
    /// # drop(file); std::fs::remove_file(&path).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub unsafe fn open_mapped(&self, path: impl AsRef<Path>) -> Result<Checkpoint, Error> {
        // SAFETY: the caller keeps the files unchanged while the
        // checkpoint (which owns the maps) lives: this function's contract.
        self.open_with(path.as_ref(), |path, origin| unsafe {
            Storage::map(path, origin)
        })
    }

    /// Opens `path` (a file, or an index and its shards), each file's
    /// bytes by `storage`.
    fn open_with(
        &self,
        path: &Path,
        storage: impl Fn(&Path, &str) -> Result<Storage, Error>,
    ) -> Result<Checkpoint, Error> {
        if path.extension().is_some_and(|e| e == "json") {
            return shards::open_index(self, path, storage);
        }
        let origin = path.display().to_string();
        let storage = storage(path, &origin)?;
        Checkpoint::new(storage, origin, self.clone())
    }

    /// Reads a file held in memory.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::Save::new().to_bytes(&(1u8,))?;
    /// assert_eq!(pytree_std::checkpoint::Load::new().from_bytes(bytes)?.len(), 1);
    /// let err = pytree_std::checkpoint::Load::new().from_bytes(vec![1, 2, 3]).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: safetensors file <bytes>: 3 bytes, shorter than \
    ///     the 8-byte header length (truncated or not a safetensors file)");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn from_bytes(&self, bytes: Vec<u8>) -> Result<Checkpoint, Error> {
        Checkpoint::new(Storage::Owned(bytes), "<bytes>".into(), self.clone())
    }
}
