//! The image's defmt global logger: every frame goes to the host file [`FRAMES_FILE`], opened
//! through semihosting (`SYS_OPEN`, relative to QEMU's working directory) on the first log call
//! and written with one `SYS_WRITE` per frame. The host decodes the file with
//! `defmt-print -e <elf> < defmt.frames` (`cargo make test-baremetal` does, and checks the lines).
//!
//! A file rather than the semihosting console: the console carries the human-readable report
//! (`semihosting::println!`), and raw frames mixed into it could not be decoded. A firmware
//! team replaces this module with its own transport (docs/porting.md: defmt-rtt on a probe).
//!
//! Any core may log: a spin lock (`OWNER`, compare-exchange with Acquire, store with Release)
//! makes one frame at a time, so frames of different cores never interleave. There are no
//! interrupts in this image, so a core never re-enters the logger except by a bug inside it
//! (e.g. a panic while it formats); that is detected and ends the run instead of deadlocking.

use core::cell::UnsafeCell;
use core::ffi::CStr;
use core::sync::atomic::{AtomicUsize, Ordering};

use semihosting::fs::File;
use semihosting::io::Write;

/// The host file the frames go to, in QEMU's working directory.
pub const FRAMES_FILE: &CStr = c"defmt.frames";

/// 0 when the logger is free, else 1 + the index of the core (`MPIDR_EL1.Aff0`) holding it.
static OWNER: AtomicUsize = AtomicUsize::new(0);

/// Bytes of encoded frame gathered before one `SYS_WRITE` (a trap to the host each).
const BUF: usize = 256;

/// The encoder and the output of the frame being written.
struct State {
    encoder: defmt::Encoder,
    sink: Sink,
}

/// Encoded bytes on their way to the file.
struct Sink {
    file: Option<File>,
    buf: [u8; BUF],
    len: usize,
}

impl Sink {
    fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.len == BUF {
                self.flush();
            }
            let n = bytes.len().min(BUF - self.len);
            self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
        }
    }

    fn flush(&mut self) {
        if self.len == 0 {
            return;
        }
        if self.file.is_none() {
            match File::create(FRAMES_FILE) {
                Ok(f) => self.file = Some(f),
                // No log without the file: say so on the console and fail the run (a check
                // that reads the log must not pass on an empty one).
                Err(e) => fatal("cannot create the defmt frames file", e),
            }
        }
        if let Some(f) = &mut self.file
            && let Err(e) = f.write_all(&self.buf[..self.len])
        {
            fatal("cannot write the defmt frames file", e);
        }
        self.len = 0;
    }
}

fn fatal(what: &str, e: semihosting::io::Error) -> ! {
    semihosting::eprintln!("defmt logger: {what} {:?}: {e:?}", FRAMES_FILE);
    semihosting::process::exit(3)
}

/// [`State`] behind the lock.
struct Locked(UnsafeCell<State>);

// SAFETY: the `State` is only touched between `acquire` and `release` by the core that won the
// `OWNER` compare-exchange (Acquire), and handed on by its Release store: one core at a time.
unsafe impl Sync for Locked {}

static STATE: Locked =
    Locked(UnsafeCell::new(State { encoder: defmt::Encoder::new(), sink: Sink { file: None, buf: [0; BUF], len: 0 } }));

/// Index of this core (`MPIDR_EL1.Aff0`; QEMU `virt` numbers its first 8 cores 0..8 there).
fn core_id() -> usize {
    let mpidr: u64;
    // SAFETY: reading MPIDR_EL1 at EL1 has no side effect.
    unsafe { core::arch::asm!("mrs {}, mpidr_el1", out(reg) mpidr, options(nomem, nostack, preserves_flags)) };
    (mpidr & 0xff) as usize
}

/// The state, for the core holding the lock.
///
/// # Safety
///
/// The calling core holds `OWNER` (between `acquire` and `release`), and no other reference
/// to the state is live.
unsafe fn state() -> &'static mut State {
    // SAFETY: the caller holds the lock, so this is the only reference (see above).
    unsafe { &mut *STATE.0.get() }
}

#[defmt::global_logger]
struct Logger;

// SAFETY: `acquire` takes a lock that excludes every other core and detects re-entry on the
// same core, so `write`/`flush`/`release` run only between one `acquire` and its `release`, as
// the `Logger` contract requires; frames are never interleaved.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        let me = core_id() + 1;
        loop {
            match OWNER.compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => break,
                Err(owner) if owner == me => {
                    // Only a bug inside the logger gets here (no interrupts): never deadlock.
                    semihosting::eprintln!("defmt logger re-entered on core {}", me - 1);
                    semihosting::process::exit(3)
                }
                Err(_) => core::hint::spin_loop(),
            }
        }
        // SAFETY: this core now holds the lock.
        let s = unsafe { state() };
        s.encoder.start_frame(|b| s.sink.push(b));
    }

    unsafe fn flush() {
        // SAFETY: defmt calls `flush` only between `acquire` and `release`.
        unsafe { state() }.sink.flush();
    }

    unsafe fn release() {
        // SAFETY: defmt calls `release` only after `acquire`, on the same core.
        let s = unsafe { state() };
        s.encoder.end_frame(|b| s.sink.push(b));
        // One whole frame per write: a frame is in the file before the next one starts, so a
        // run that stops (exit, panic, timeout) leaves only whole frames.
        s.sink.flush();
        OWNER.store(0, Ordering::Release);
    }

    unsafe fn write(bytes: &[u8]) {
        // SAFETY: defmt calls `write` only between `acquire` and `release`.
        let s = unsafe { state() };
        s.encoder.write(bytes, |b| s.sink.push(b));
    }
}
