//! Where the bytes of a checkpoint's file are, and reading them:
//!
//! - **a file, read with positioned reads** (the default, [`Load::open`]):
//!   each tensor is read straight into its destination (a new array, or
//!   the array a [`load_into`] writes into), so a file that is truncated
//!   or rewritten while it is open makes a load an [`Error`] naming the
//!   tensor, never a crash;
//! - **a memory map** ([`Load::open_mapped`], `unsafe`): zero-copy views of
//!   the tensors ([`TensorView::data`] borrows them), under the map's
//!   contract that nobody truncates or changes the file meanwhile;
//! - **bytes in memory** ([`Load::from_bytes`]).
//!
//! A path is opened only when it is a regular file: a named pipe, a
//! device, a socket or a directory is refused before it is opened (opening
//! a FIFO for reading blocks until a writer comes).
//!
//! [`Load::open`]: super::Load::open
//! [`Load::open_mapped`]: super::Load::open_mapped
//! [`Load::from_bytes`]: super::Load::from_bytes
//! [`load_into`]: fn@super::load_into
//! [`TensorView::data`]: super::TensorView::data

use std::borrow::Cow;
use std::fmt;
use std::fs::{File, Metadata};
use std::io;
use std::mem::MaybeUninit;
use std::path::Path;

use pytree_core::Error;

/// A file-level error: `origin` is the file's path or `"<bytes>"`.
#[cold]
pub(crate) fn file_error(origin: &str, message: impl fmt::Display) -> Error {
    Error::custom(format!("safetensors file {origin}: {message}"))
}

/// The bytes of one file of a checkpoint.
pub(crate) enum Storage {
    /// An open regular file of `len` bytes, read with positioned reads.
    File { file: File, len: u64 },
    /// A memory map of a file (zero-copy; see [`Storage::map`]).
    Mapped(memmap2::Mmap),
    /// Bytes in memory.
    Owned(Vec<u8>),
}

/// Where a tensor's bytes are: borrowed from memory (bytes in memory or a
/// map), or a range of an open file.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TensorData<'a> {
    Memory(&'a [u8]),
    File {
        file: &'a File,
        offset: u64,
        len: usize,
        /// The file's path, for the messages.
        origin: &'a str,
    },
}

/// What a file system object that is not a regular file is, for the
/// message refusing it.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The message for a path that is not a regular file.
#[cold]
fn not_regular(meta: &Metadata) -> String {
    format!(
        "is {}, not a regular file: a checkpoint is read from regular files only",
        kind_of(meta)
    )
}

/// Opens the regular file at `path` for reading, and its length; the
/// message of an error says what is wrong (without the path). What is not
/// a regular file (a named pipe, a device, a socket, a directory) is an
/// error before it is opened: its metadata is read first (`stat`, which
/// never blocks), and the file is opened without blocking (a FIFO put
/// there in between opens at once) and checked again (`fstat`).
pub(crate) fn open_regular(path: &Path) -> Result<(File, u64), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot open: {e}"))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Reads of a regular file ignore O_NONBLOCK; it only keeps the
        // open itself from waiting on a FIFO.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("cannot open: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read its metadata: {e}"))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta.len()))
}

impl Storage {
    /// The regular file at `path`, read with positioned reads.
    pub(crate) fn open(path: &Path, origin: &str) -> Result<Self, Error> {
        let (file, len) = open_regular(path).map_err(|e| file_error(origin, e))?;
        Ok(Storage::File { file, len })
    }

    /// The regular file at `path`, memory-mapped (a file too short to map
    /// is read into memory; the header check says what is wrong with it).
    ///
    /// # Safety
    ///
    /// Nobody may truncate or change the file while the map lives (the
    /// contract of every memory map, `memmap2::Mmap::map`): a read of a
    /// page past the new end of the file is SIGBUS, and a change is seen
    /// by views already handed out.
    pub(crate) unsafe fn map(path: &Path, origin: &str) -> Result<Self, Error> {
        let (file, len) = open_regular(path).map_err(|e| file_error(origin, e))?;
        if len == 0 {
            // An empty file cannot be mapped (the header check says what
            // is wrong with it).
            let mut bytes = vec![0u8; len as usize];
            read_exact_at(&file, 0, &mut bytes)
                .map_err(|e| file_error(origin, format!("read: {e}")))?;
            return Ok(Storage::Owned(bytes));
        }
        // SAFETY: the caller promises that the file is neither truncated
        // nor changed while the map lives (this function's contract, and
        // `Load::open_mapped`'s); the map lives as long as the
        // `Checkpoint`, and every read of it is bounds-checked against the
        // length the header was validated against.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| file_error(origin, format!("cannot map: {e}")))?;
        Ok(Storage::Mapped(map))
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Storage::File { len, .. } => *len,
            Storage::Mapped(m) => m.len() as u64,
            Storage::Owned(v) => v.len() as u64,
        }
    }

    /// `len` bytes at `offset`: borrowed from memory, read from a file.
    pub(crate) fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        match self.data(offset, len, "") {
            TensorData::Memory(bytes) => Ok(Cow::Borrowed(bytes)),
            TensorData::File { file, offset, .. } => {
                let mut out = vec![0u8; len];
                read_exact_at(file, offset, &mut out)?;
                Ok(Cow::Owned(out))
            }
        }
    }

    /// Where the `len` bytes at `offset` are (a range the header was
    /// checked against: in bounds; an empty slice otherwise); `origin`
    /// names the file in the messages of a failed read.
    pub(crate) fn data<'a>(&'a self, offset: u64, len: usize, origin: &'a str) -> TensorData<'a> {
        fn in_memory(bytes: &[u8], offset: u64, len: usize) -> &[u8] {
            usize::try_from(offset)
                .ok()
                .and_then(|start| bytes.get(start..start.checked_add(len)?))
                .unwrap_or(&[])
        }
        match self {
            Storage::File { file, .. } => TensorData::File {
                file,
                offset,
                len,
                origin,
            },
            Storage::Mapped(m) => TensorData::Memory(in_memory(m, offset, len)),
            Storage::Owned(v) => TensorData::Memory(in_memory(v, offset, len)),
        }
    }
}

impl<'a> TensorData<'a> {
    /// The number of bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            TensorData::Memory(bytes) => bytes.len(),
            TensorData::File { len, .. } => *len,
        }
    }

    /// The error of a read that failed (the file shrank or changed since
    /// its header was read).
    #[cold]
    fn read_error(&self, e: &io::Error) -> String {
        match self {
            TensorData::File {
                offset,
                len,
                origin,
                ..
            } => {
                let why = if e.kind() == io::ErrorKind::UnexpectedEof {
                    "the file ends before them: it was truncated or rewritten after it was \
                     opened"
                        .to_string()
                } else {
                    e.to_string()
                };
                format!("cannot read its {len} bytes at offset {offset} of {origin}: {why}")
            }
            TensorData::Memory(_) => e.to_string(),
        }
    }

    /// An error unless a destination of `len` bytes is exactly as long
    /// as the bytes.
    fn check_destination(&self, len: usize) -> Result<(), String> {
        if len != self.len() {
            return Err(format!(
                "a destination of {len} bytes for {} bytes",
                self.len()
            ));
        }
        Ok(())
    }

    /// Copies the bytes into `dst`, which must be exactly as long (a
    /// positioned read straight into it from a file).
    pub(crate) fn read_into(&self, dst: &mut [u8]) -> Result<(), String> {
        self.check_destination(dst.len())?;
        match self {
            TensorData::Memory(bytes) => {
                dst.copy_from_slice(bytes);
                Ok(())
            }
            TensorData::File { file, offset, .. } => {
                read_exact_at(file, *offset, dst).map_err(|e| self.read_error(&e))
            }
        }
    }

    /// Fills `dst`, which must be exactly as long, with the bytes; after
    /// `Ok` every byte of it is initialized.
    pub(crate) fn read_into_uninit(&self, dst: &mut [MaybeUninit<u8>]) -> Result<(), String> {
        self.check_destination(dst.len())?;
        match self {
            TensorData::Memory(bytes) => {
                // SAFETY: `bytes` and `dst` have the same length (checked
                // above); `dst` is writable and distinct from `bytes` (a
                // `&mut` borrow); `MaybeUninit<u8>` has the layout of `u8`.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        dst.as_mut_ptr().cast::<u8>(),
                        bytes.len(),
                    );
                }
                Ok(())
            }
            TensorData::File { file, offset, .. } => {
                read_exact_at_uninit(file, *offset, dst).map_err(|e| self.read_error(&e))
            }
        }
    }

    /// The bytes: borrowed from memory, read from a file into a new buffer.
    pub(crate) fn bytes(&self) -> Result<Cow<'a, [u8]>, String> {
        match *self {
            TensorData::Memory(bytes) => Ok(Cow::Borrowed(bytes)),
            TensorData::File { .. } => {
                let mut out = vec![0u8; self.len()];
                self.read_into(&mut out)?;
                Ok(Cow::Owned(out))
            }
        }
    }
}

/// Reads exactly `dst.len()` bytes at `offset` of `file` (a positioned
/// read: the file's cursor is not used, so reads may run at once).
pub(crate) fn read_exact_at(file: &File, offset: u64, dst: &mut [u8]) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, dst, offset)
    }
    #[cfg(windows)]
    {
        let (mut dst, mut offset) = (dst, offset);
        while !dst.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, dst, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    dst = &mut dst[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, offset, dst);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "positioned reads are not available on this platform: read the file into memory \
             and use Load::from_bytes",
        ))
    }
}

/// [`read_exact_at`] into memory not yet initialized (a new array's
/// buffer), without writing it first: `pread` on Unix; elsewhere the
/// buffer is zeroed, then read into.
fn read_exact_at_uninit(file: &File, offset: u64, dst: &mut [MaybeUninit<u8>]) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let (mut done, fd) = (0usize, file.as_raw_fd());
        while done < dst.len() {
            let at = offset
                .checked_add(done as u64)
                .and_then(|at| libc::off_t::try_from(at).ok())
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
            // At most 1 GiB a call (Linux reads at most 0x7ffff000 bytes).
            let want = (dst.len() - done).min(1 << 30);
            // SAFETY: `dst[done..done + want]` is writable memory owned by
            // the caller's `&mut` borrow, so the kernel may write `want`
            // bytes there; `pread` writes only (never reads the buffer), so
            // it being uninitialized is fine, and the bytes it reports
            // written are initialized afterwards.
            let n = unsafe { libc::pread(fd, dst[done..].as_mut_ptr().cast(), want, at) };
            match n {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n if n > 0 => done += n as usize,
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        for b in dst.iter_mut() {
            b.write(0);
        }
        // SAFETY: every byte of `dst` was just written;
        // `MaybeUninit<u8>` has the layout of `u8`.
        let dst = unsafe { &mut *(dst as *mut [MaybeUninit<u8>] as *mut [u8]) };
        read_exact_at(file, offset, dst)
    }
}
