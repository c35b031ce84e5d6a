//! Platform services: a diagnostics stream, process abort and the Linux auxiliary vector.
//! On Linux these are three libc functions; on bare metal there is no stream, and "abort" is an
//! undefined instruction (the firmware's exception vector reports it) followed by a halt.

#[cfg(target_os = "linux")]
mod imp {
    unsafe extern "C" {
        fn write(fd: i32, buf: *const u8, count: usize) -> isize;
        fn abort() -> !;
        fn getauxval(kind: core::ffi::c_ulong) -> core::ffi::c_ulong;
    }

    /// Writes `bytes` to standard error (best effort: a failing `write` ends the attempt).
    pub(crate) fn write_stderr(bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            // SAFETY: `rest` is a live slice, valid for reads of `rest.len()` bytes.
            let written = unsafe { write(2, rest.as_ptr(), rest.len()) };
            if written <= 0 {
                return;
            }
            rest = rest.get(written as usize..).unwrap_or(&[]);
        }
    }

    /// libc `abort()`: raises SIGABRT.
    pub(crate) fn abort_process() -> ! {
        // SAFETY: `abort` takes no arguments and never returns.
        unsafe { abort() }
    }

    /// The `AT_HWCAP` and `AT_HWCAP2` words (0 when absent).
    pub(crate) fn hwcaps() -> (u64, u64) {
        // SAFETY: `getauxval` only reads the process's auxiliary vector; unknown kinds give 0.
        unsafe { (getauxval(16) as u64, getauxval(26) as u64) }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    /// No diagnostics stream on bare metal.
    pub(crate) fn write_stderr(_bytes: &[u8]) {}

    /// Takes an undefined-instruction exception (so a firmware's fault handler sees where),
    /// then halts the core if that handler returns.
    pub(crate) fn abort_process() -> ! {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: `udf` only raises a synchronous exception; it reads and writes no memory.
        unsafe {
            core::arch::asm!("udf #0x5147", options(nomem, nostack));
        }
        loop {
            core::hint::spin_loop();
        }
    }
}

pub(crate) use imp::*;
