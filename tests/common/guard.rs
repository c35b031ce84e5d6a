//! Guard-page buffers (Linux): a slice placed so that it ends exactly where a `PROT_NONE` page
//! begins, or begins exactly where one ends, or sits at a chosen misalignment next to one. Any
//! read or write past the guarded edge is a SIGSEGV; a handler prints the address and the label
//! of the running case ([`set_label`]) and lets the default action kill the test binary, so the
//! test fails.
//!
//! Every buffer is its own mapping `[PROT_NONE page][data pages][PROT_NONE page]`; both sides
//! are guarded in every placement, so even the unguarded-edge side of a slice is at most the
//! slack of the placement away from a fault.
#![cfg(target_os = "linux")]

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Once;

/// Where a slice sits in its mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Ends exactly at a `PROT_NONE` page (the start's alignment is whatever the length makes it).
    End,
    /// Starts exactly after a `PROT_NONE` page (page aligned).
    Start,
    /// Starts at an address that is `offset` modulo 16 and ends less than 16 bytes before a
    /// `PROT_NONE` page (`offset` a multiple of the element's alignment).
    EndMisaligned(usize),
    /// Starts `offset` bytes after a `PROT_NONE` page.
    StartMisaligned(usize),
}

impl Place {
    /// The exact placements plus misaligned starts legal for elements of `align` bytes: odd
    /// offsets for bytes, 4-byte multiples (4, 8, 12) for f32.
    pub fn all(align: usize) -> Vec<Place> {
        let mut v = vec![Place::End, Place::Start];
        for off in [1usize, 2, 3, 4, 7, 8, 12, 13] {
            if off % align == 0 {
                v.push(Place::EndMisaligned(off));
                v.push(Place::StartMisaligned(off));
            }
        }
        v
    }
}

/// Element types for which every bit pattern is a valid value (so a buffer of `0xa5` bytes is
/// initialized).
pub trait Plain: Copy {}
impl Plain for u8 {}
impl Plain for f32 {}
impl Plain for qgemm::half::bf16 {}
impl Plain for qgemm::half::f16 {}

/// A buffer of `len` `T`s in its own mapping, placed by a [`Place`].
pub struct Guarded<T: Plain> {
    map: *mut u8,
    map_len: usize,
    ptr: *mut T,
    len: usize,
    _t: PhantomData<T>,
}

/// The page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    assert!(p > 0, "sysconf(_SC_PAGESIZE) failed");
    p as usize
}

impl<T: Plain> Guarded<T> {
    /// `len` elements, every byte `0xa5` (a NaN for f32), at `place`.
    pub fn new(len: usize, place: Place) -> Self {
        install_handler();
        let size = std::mem::size_of::<T>();
        let align = std::mem::align_of::<T>();
        let bytes = len.checked_mul(size).expect("guarded buffer size");
        let page = page_size();
        let data_pages = (bytes + 32).div_ceil(page).max(1);
        let map_len = (data_pages + 2) * page;
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing; no
        // existing memory is affected. The result is checked against MAP_FAILED.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(map != libc::MAP_FAILED, "mmap of {map_len} bytes failed");
        let map = map.cast::<u8>();
        let lo = page; // first data byte (after the low guard page)
        let hi = (data_pages + 1) * page; // first byte of the high guard page
        // SAFETY: both ranges are whole pages inside the mapping just created.
        let (r1, r2) = unsafe {
            (
                libc::mprotect(map.cast(), page, libc::PROT_NONE),
                libc::mprotect(map.add(hi).cast(), page, libc::PROT_NONE),
            )
        };
        assert!(r1 == 0 && r2 == 0, "mprotect failed");
        let start = match place {
            Place::End => hi - bytes,
            Place::Start => lo,
            Place::EndMisaligned(off) => {
                assert!(off < 16 && off % align == 0, "offset {off} for alignment {align}");
                let mut s = (hi - bytes) / 16 * 16 + off;
                if s + bytes > hi {
                    s -= 16;
                }
                s
            }
            Place::StartMisaligned(off) => {
                assert!(off % align == 0, "offset {off} for alignment {align}");
                lo + off
            }
        };
        assert!(start >= lo && start + bytes <= hi && start % align == 0);
        // SAFETY: `start .. start + bytes` lies in the read-write data pages (asserted above).
        let ptr = unsafe { map.add(start) };
        // SAFETY: as above; the bytes are writable.
        unsafe { std::ptr::write_bytes(ptr, 0xa5, bytes) };
        Guarded { map, map_len, ptr: ptr.cast(), len, _t: PhantomData }
    }

    /// A guarded copy of `src`.
    pub fn from_slice(src: &[T], place: Place) -> Self {
        let mut g = Guarded::new(src.len(), place);
        g.as_mut_slice().copy_from_slice(src);
        g
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` is aligned for `T` (asserted in `new`) and points to `len` initialized
        // elements (every byte was written in `new`, and every bit pattern is a valid `T: Plain`),
        // inside a mapping that lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Plain> Drop for Guarded<T> {
    fn drop(&mut self) {
        // SAFETY: `map`/`map_len` are exactly the mapping created in `new`, and no slice of it
        // outlives `self`.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

const LABEL_LEN: usize = 240;

thread_local! {
    /// The case the thread is running, for the SIGSEGV report (a fixed buffer: the handler
    /// must not allocate).
    static LABEL: Cell<([u8; LABEL_LEN], usize)> = const { Cell::new(([0; LABEL_LEN], 0)) };
}

/// Names the case this thread runs next (printed if it faults).
pub fn set_label(s: &str) {
    let mut buf = [0u8; LABEL_LEN];
    let n = s.len().min(LABEL_LEN);
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    LABEL.with(|l| l.set((buf, n)));
}

fn write_stderr(b: &[u8]) {
    // SAFETY: writes `b.len()` bytes from a valid slice to fd 2; async-signal-safe.
    unsafe { libc::write(2, b.as_ptr().cast(), b.len()) };
}

extern "C" fn on_segv(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Only async-signal-safe work: fixed buffers and write(2).
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let mut hex = *b"0x0000000000000000";
    for i in 0..16 {
        hex[2 + i] = b"0123456789abcdef"[(addr >> (60 - 4 * i)) & 0xf];
    }
    write_stderr(b"\nguard page hit: SIGSEGV at ");
    write_stderr(&hex);
    write_stderr(b" while running: ");
    // A const-initialized, destructor-free thread local: a plain TLS read on the faulting thread.
    let (buf, n) = LABEL.with(|l| l.get());
    write_stderr(&buf[..n]);
    write_stderr(b"\n");
    // Back to the default action: returning re-executes the access, which kills the process.
    // SAFETY: signal(2) is async-signal-safe; SIG_DFL is a valid disposition.
    unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
}

fn install_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a zeroed sigaction is a valid starting value; the handler has the SA_SIGINFO
        // signature and only does async-signal-safe work; the old action is not needed.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_segv as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut()), 0, "sigaction");
        }
    });
}
