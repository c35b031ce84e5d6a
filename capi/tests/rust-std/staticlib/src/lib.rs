//! A Rust `std` static library for capi/tests/c/rust_std.c: it uses the parts of `std` a real
//! one does (heap, formatting, stdout, a caught panic), so the test fails if linking it with
//! libqgemm_capi.a breaks any of them.

use std::io::Write;

/// Sums `0..n` in a `Vec`, catches a deliberate panic (for `n > 0`), and prints
/// `rust std: sum <s>, panic caught: <true|false>`; returns the sum, or `u64::MAX` if the panic
/// was not caught or printing failed.
#[unsafe(no_mangle)]
pub extern "C" fn qgemm_test_rust_std_report(n: u32) -> u64 {
    let values: Vec<u64> = (0..u64::from(n)).collect();
    let sum: u64 = values.iter().sum();
    // Silence the default hook's message: the panic is expected.
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| {
        if n > 0 {
            panic!("deliberate");
        }
    })
    .is_err();
    let _ = std::panic::take_hook();
    let line = format!("rust std: sum {sum}, panic caught: {caught}\n");
    let mut out = std::io::stdout();
    if out.write_all(line.as_bytes()).and_then(|()| out.flush()).is_err() || caught != (n > 0) {
        return u64::MAX;
    }
    sum
}
