//! The layer-2 error hook: what a `kai_*` function does on an argument that is undefined
//! behaviour in KleidiAI.
//!
//! The hook receives the `kai_*` function's name, a reason (both NUL-terminated, valid only
//! during the call) and the user pointer given with it. The default prints
//! `qgemm: <function>: <reason>` to stderr and calls `abort()` on Linux; on bare metal it
//! executes an undefined instruction (the firmware's exception handler sees the address)
//! and halts. A handler may also return: the failing `kai_*` function then returns without
//! writing anything, and a getter returns 0. A handler may also `longjmp` out: every Rust
//! frame between the `kai_*` entry and the handler is a plain frame with nothing to drop.
//!
//! Or a (C++) handler may throw. The handler type is `extern "C-unwind"`, and so is every
//! `kai_*` entry point, so an exception may unwind through the library's frames (the same plain
//! frames) back to the `kai_*` caller: on Linux, where the library is built with
//! `panic = unwind`, it does, and the caller catches it. On bare metal (`panic = abort`) an
//! unwind entering the library ends in its panic handler, a defined stop (`udf`). With
//! `extern "C"`, as before, unwinding out of the handler was undefined behaviour.

use core::ffi::{c_char, c_void};
use core::fmt::Write as _;
use core::sync::atomic::{AtomicPtr, Ordering};

/// A layer-2 error handler: `function` and `reason` are NUL-terminated and valid during the
/// call only; `user_data` is the pointer given to [`qgemm_kai_set_error_handler`].
/// It may return, `longjmp` out, or throw a C++ exception (called as `extern "C-unwind"`): on
/// Linux the exception reaches the caller of the `kai_*` function; on bare metal it stops the
/// core. See docs/c-api.md.
pub type qgemm_kai_error_handler =
    Option<unsafe extern "C-unwind" fn(function: *const c_char, reason: *const c_char, user_data: *mut c_void)>;

static HANDLER: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());
static USER_DATA: AtomicPtr<c_void> = AtomicPtr::new(core::ptr::null_mut());

/// Installs `handler` (with `user_data`) as the layer-2 error hook; `NULL` restores the
/// default (print and abort). Not synchronized with concurrent `kai_*` calls that fail: set it
/// once, before using layer 2 from several threads.
#[unsafe(no_mangle)]
pub extern "C" fn qgemm_kai_set_error_handler(handler: qgemm_kai_error_handler, user_data: *mut c_void) {
    USER_DATA.store(user_data, Ordering::Relaxed);
    let raw = handler.map_or(core::ptr::null_mut(), |f| f as *mut ());
    HANDLER.store(raw, Ordering::Release);
}

/// Reports a precondition violation of the `kai_*` function `function`. Returns only if a
/// custom handler returns; unwinds if it throws (every caller up to the `kai_*` entry point is
/// a plain frame, and that entry point is `extern "C-unwind"`).
pub(crate) fn report(function: &str, reason: core::fmt::Arguments<'_>) {
    let mut name = [0u8; NAME_MAX + 1];
    let name_len = function.len().min(NAME_MAX);
    name[..name_len].copy_from_slice(&function.as_bytes()[..name_len]);
    // The reason, formatted without allocation into a plain array (no destructor in this
    // frame, so a handler may `longjmp` over it); a longer one is cut, still NUL-terminated.
    let mut buf = [0u8; REASON_MAX + 1];
    let mut cursor = Cursor { buf: &mut buf[..REASON_MAX], len: 0 };
    let _ = cursor.write_fmt(reason);
    let len = cursor.len;
    let raw = HANDLER.load(Ordering::Acquire);
    if raw.is_null() {
        default_handler(&name[..name_len], &buf[..len]);
    }
    // SAFETY: `raw` is non-null and was stored by `qgemm_kai_set_error_handler` from a
    // function pointer of exactly this type.
    let handler: unsafe extern "C-unwind" fn(*const c_char, *const c_char, *mut c_void) =
        unsafe { core::mem::transmute::<*mut (), _>(raw) };
    // SAFETY: both strings are NUL-terminated and live across the call (`name` and `buf`
    // hold at most `NAME_MAX` and `REASON_MAX` bytes of text and a zero); the handler's contract is the caller's.
    unsafe { handler(name.as_ptr().cast(), buf.as_ptr().cast(), USER_DATA.load(Ordering::Relaxed)) }
}

/// Longest function name passed to a handler, in bytes (the longest `kai_*` name is shorter).
const NAME_MAX: usize = 127;

/// Longest reason text passed to a handler, in bytes.
const REASON_MAX: usize = 191;

/// A `fmt::Write` into a fixed byte array that truncates instead of failing.
struct Cursor<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl core::fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len() - self.len;
        let take = s.len().min(room);
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

fn default_handler(function: &[u8], reason: &[u8]) -> ! {
    crate::sys::write_stderr(b"qgemm: ");
    crate::sys::write_stderr(function);
    crate::sys::write_stderr(b": ");
    crate::sys::write_stderr(reason);
    crate::sys::write_stderr(b"\n");
    crate::sys::abort_process()
}
