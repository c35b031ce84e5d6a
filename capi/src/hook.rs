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
//!
//! The reason is built without `core::fmt` ([`report`]: a template, numbers in decimal, floats
//! as `{:?}` writes them, a `qgemm::Error` through `Error::write_message`), so no `kai_run_*`
//! links the formatting machinery for its error path (`ci/footprint.py` checks it).

use core::ffi::{c_char, c_void};
use core::num::NonZeroU64;
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

/// Reports a precondition violation of the `kai_*` function `function`: the reason is
/// `template` with each `{}` replaced by the next of `args` as `format!` would write it
/// (`Reason::template`). Returns only if a custom handler returns; unwinds if it throws (every
/// caller up to the `kai_*` entry point is a plain frame, and that entry point is
/// `extern "C-unwind"`). Cold and out of line: the error path stays out of the callers.
#[cold]
#[inline(never)]
pub(crate) fn report(function: &str, template: &str, args: &[Arg<'_>]) {
    // Both texts are built without allocation into plain arrays (no destructor in this frame,
    // so a handler may `longjmp` over it), cut at their limits and NUL-terminated, by code with
    // no panic path: nothing here links `core::fmt`.
    let mut name = [0u8; NAME_MAX + 1];
    let mut name_len = 0;
    for (d, s) in name.iter_mut().zip(function.as_bytes().iter().take(NAME_MAX)) {
        *d = *s;
        name_len += 1;
    }
    let mut reason = Reason { buf: [0; REASON_MAX + 1], len: 0 };
    reason.template(template, args);
    let raw = HANDLER.load(Ordering::Acquire);
    if raw.is_null() {
        default_handler(name.get(..name_len).unwrap_or(&[]), reason.buf.get(..reason.len).unwrap_or(&[]));
    }
    // SAFETY: `raw` is non-null and was stored by `qgemm_kai_set_error_handler` from a
    // function pointer of exactly this type.
    let handler: unsafe extern "C-unwind" fn(*const c_char, *const c_char, *mut c_void) =
        unsafe { core::mem::transmute::<*mut (), _>(raw) };
    // SAFETY: both strings are NUL-terminated and live across the call (`name` and `reason.buf`
    // hold at most `NAME_MAX` and `REASON_MAX` bytes of text, the rest zeros); the handler's
    // contract is the caller's.
    unsafe { handler(name.as_ptr().cast(), reason.buf.as_ptr().cast(), USER_DATA.load(Ordering::Relaxed)) }
}

/// Longest function name passed to a handler, in bytes (the longest `kai_*` name is shorter).
const NAME_MAX: usize = 127;

/// Longest reason text passed to a handler, in bytes.
const REASON_MAX: usize = 191;

/// A reason under construction: text appended to a fixed array, cut at `REASON_MAX` bytes. Its
/// writers use no `core::fmt` (whose formatting machinery, float printing included, linked
/// about 18 KB into every `kai_run_*` for the hook alone) and have no panic path.
pub(crate) struct Reason {
    buf: [u8; REASON_MAX + 1],
    len: usize,
}

impl Reason {
    /// Appends `b`, unless the reason is full.
    fn push(&mut self, b: u8) {
        if self.len < REASON_MAX
            && let Some(slot) = self.buf.get_mut(self.len)
        {
            *slot = b;
            self.len += 1;
        }
    }

    /// Appends `s` (as much of it as fits).
    #[inline(never)] // one copy: the hook's messages are not on a hot path
    fn bytes(&mut self, s: &[u8]) {
        for &b in s {
            self.push(b);
        }
    }

    /// Appends digits `from..to` of the `count`-digit decimal `d` (digit 0 the leading one).
    #[inline(never)] // one copy: the hook's messages are not on a hot path
    fn digits(&mut self, d: u64, count: usize, from: usize, to: usize) {
        let mut unit = 1u64; // 10^(count - 1 - from), the place of digit `from`
        for _ in from + 1..count {
            unit = unit.saturating_mul(10);
        }
        for _ in from..to {
            // A `NonZeroU64` divisor: no division-by-zero path.
            let place = NonZeroU64::new(unit).unwrap_or(NonZeroU64::MIN);
            self.push(b'0' + (d / place % 10) as u8);
            unit /= 10;
        }
    }

    /// Appends `v` in decimal.
    #[inline(never)] // one copy: the hook's messages are not on a hot path
    fn unsigned(&mut self, v: u64) {
        let (mut count, mut unit) = (1, 1u64);
        while unit <= v / 10 {
            (count, unit) = (count + 1, unit * 10);
        }
        self.digits(v, count, 0, count);
    }

    /// Appends `v` in decimal, with a `-` if negative.
    fn signed(&mut self, v: i64) {
        if v < 0 {
            self.push(b'-');
        }
        self.unsigned(v.unsigned_abs());
    }

    /// Appends `v` as `{:#06x}` writes it: `0x` and at least four hex digits.
    #[inline(never)] // one copy: the hook's messages are not on a hot path
    fn hex4(&mut self, v: u64) {
        let mut shift = 12;
        while shift < 60 && v >> (shift + 4) != 0 {
            shift += 4;
        }
        self.bytes(b"0x");
        loop {
            let n = ((v >> shift) & 15) as u8;
            self.push(if n < 10 { b'0' + n } else { b'a' + n - 10 });
            if shift == 0 {
                return;
            }
            shift -= 4;
        }
    }

    /// Appends `v` as Rust's `{:?}` writes an `f32`: the shortest digits that read back as `v`,
    /// in plain notation with at least one fractional digit (`2.0`, `0.001`) for `1e-4 <= |v| <
    /// 1e16` or 0, else in exponential notation (`1e30`, `-1.5e-7`); `NaN`, `inf`, `-inf`.
    #[inline(never)] // one copy: the hook's messages are not on a hot path
    fn float(&mut self, v: f32) {
        if v.is_nan() {
            return self.bytes(b"NaN");
        }
        if v.is_sign_negative() {
            self.push(b'-');
        }
        let a = v.abs();
        if a.is_infinite() {
            return self.bytes(b"inf");
        }
        if a == 0.0 {
            return self.bytes(b"0.0");
        }
        let (d, count, exp) = shortest_digits(a);
        if !(1e-4..1e16).contains(&a) {
            self.digits(d, count, 0, 1);
            if count > 1 {
                self.push(b'.');
                self.digits(d, count, 1, count);
            }
            self.push(b'e');
            self.signed(i64::from(exp));
        } else if exp < 0 {
            self.bytes(b"0.");
            for _ in 0..(-exp - 1) {
                self.push(b'0');
            }
            self.digits(d, count, 0, count);
        } else {
            let int = exp as usize + 1; // digits before the point (exp < 16)
            self.digits(d, count, 0, int.min(count));
            for _ in count..int {
                self.push(b'0');
            }
            self.push(b'.');
            if count > int {
                self.digits(d, count, int, count);
            } else {
                self.push(b'0');
            }
        }
    }
}

/// `v * 10^e` in f64 (`10^e` exact for `|e| <= 22`; else within a few ulps, enough to tell
/// f32 values apart).
#[inline(never)] // one copy: the hook's messages are not on a hot path
fn times_pow10(v: f64, e: i32) -> f64 {
    let (mut p, mut base, mut n) = (1.0f64, 10.0f64, e.unsigned_abs());
    while n > 0 {
        if n & 1 == 1 {
            p *= base;
        }
        base *= base;
        n >>= 1;
    }
    if e < 0 { v / p } else { v * p }
}

/// The shortest decimal `d * 10^(exp + 1 - count)` (`count` digits) that reads back as the
/// positive finite `a`, for the smallest `count` from 1 to 9 (9 digits always do for an f32):
/// the nearest `count`-digit value, or its neighbour on the other side of `a` when only that
/// one reads back (below a power of two the values that read back reach less far down).
#[inline(never)] // one copy: the hook's messages are not on a hot path
fn shortest_digits(a: f32) -> (u64, usize, i32) {
    let x = f64::from(a);
    // The decimal exponent of the leading digit: 10^exp <= x < 10^(exp + 1).
    let mut exp = -46;
    while exp < 38 && times_pow10(1.0, exp + 1) <= x {
        exp += 1;
    }
    for count in 1..9usize {
        let shift = count as i32 - 1 - exp; // x * 10^shift has `count` digits before the point
        let scaled = times_pow10(x, shift);
        let nearest = (scaled + 0.5) as u64;
        let other = if (nearest as f64) < scaled { nearest + 1 } else { nearest.saturating_sub(1) };
        for d in [nearest, other] {
            let (d, e) = if d >= 10u64.pow(count as u32) { (d / 10, exp + 1) } else { (d, exp) };
            if d >= 10u64.pow(count as u32 - 1) && times_pow10(d as f64, e + 1 - count as i32) as f32 == a {
                return (d, count, e);
            }
        }
    }
    ((times_pow10(x, 8 - exp) + 0.5) as u64, 9, exp)
}

/// A value of a hook reason (`fail!`'s arguments after the template), by value: an enum, not a
/// trait object, so the error path makes no indirect call.
#[derive(Clone, Copy)]
pub(crate) enum Arg<'a> {
    /// Text.
    Text(&'a str),
    /// An unsigned integer.
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
    /// An `f32` (written as `{:?}` writes it).
    Float(f32),
    /// A qgemm error (written as its `Display` message).
    Error(&'a qgemm::Error),
}

impl<'a> From<&'a &str> for Arg<'a> {
    fn from(s: &'a &str) -> Self {
        Arg::Text(s)
    }
}

impl From<&usize> for Arg<'_> {
    fn from(v: &usize) -> Self {
        Arg::Unsigned(*v as u64)
    }
}

impl From<&u8> for Arg<'_> {
    fn from(v: &u8) -> Self {
        Arg::Unsigned(u64::from(*v))
    }
}

impl From<&u32> for Arg<'_> {
    fn from(v: &u32) -> Self {
        Arg::Unsigned(u64::from(*v))
    }
}

impl From<&i8> for Arg<'_> {
    fn from(v: &i8) -> Self {
        Arg::Signed(i64::from(*v))
    }
}

impl From<&i32> for Arg<'_> {
    fn from(v: &i32) -> Self {
        Arg::Signed(i64::from(*v))
    }
}

impl From<&f32> for Arg<'_> {
    fn from(v: &f32) -> Self {
        Arg::Float(*v)
    }
}

impl<'a> From<&'a qgemm::Error> for Arg<'a> {
    fn from(e: &'a qgemm::Error) -> Self {
        Arg::Error(e)
    }
}

impl Reason {
    /// Appends `template`, each `{...}` replaced by the next of `args`: `{}` as `format!`'s `{}`
    /// writes it (floats as `{:?}`), `{:#06x}` an integer as `0x` and at least four hex digits.
    /// A placeholder without an argument is dropped (the templates are the library's own).
    #[inline(never)] // one copy: the hook's messages are not on a hot path
    fn template(&mut self, template: &str, args: &[Arg<'_>]) {
        let (mut rest, mut next) = (template.as_bytes(), args.iter());
        while let Some(open) = rest.iter().position(|&b| b == b'{') {
            let (text, from) = rest.split_at(open);
            self.bytes(text);
            let close = from.iter().position(|&b| b == b'}').unwrap_or(from.len() - 1);
            let (spec, after) = from.split_at(close + 1);
            rest = after;
            let hex = spec == b"{:#06x}";
            match next.next() {
                Some(&Arg::Unsigned(v)) if hex => self.hex4(v),
                Some(&Arg::Unsigned(v)) => self.unsigned(v),
                Some(&Arg::Signed(v)) => self.signed(v),
                Some(&Arg::Float(v)) => self.float(v),
                Some(&Arg::Text(t)) => self.bytes(t.as_bytes()),
                Some(&Arg::Error(e)) => e.write_message(self),
                None => {}
            }
        }
        self.bytes(rest);
    }
}

impl qgemm::error::MessageSink for Reason {
    fn text(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn unsigned(&mut self, v: usize) {
        Reason::unsigned(self, v as u64);
    }
    fn signed(&mut self, v: i64) {
        Reason::signed(self, v);
    }
    fn float(&mut self, v: f32) {
        Reason::float(self, v);
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
