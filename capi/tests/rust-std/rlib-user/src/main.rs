//! A Rust `std` program using the qgemm-capi rlib: it must compile (no second panic handler,
//! E0152) and the C API must work from it.

use qgemm_capi::status::{qgemm_status, qgemm_status_message};

fn main() {
    let mut features = 0u32;
    // SAFETY: `features` is a live u32, valid for a write.
    let status = unsafe { qgemm_capi::cpu::qgemm_cpu_from_target(&mut features) };
    // SAFETY: `qgemm_status_message` returns a static NUL-terminated string for any value.
    let message = unsafe { std::ffi::CStr::from_ptr(qgemm_status_message(status as i32)) };
    println!("rlib user: qgemm_cpu_from_target: {}, features {features:#x}", message.to_string_lossy());
    // Silence the default hook's message: the panic is expected.
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| panic!("deliberate")).is_err();
    let _ = std::panic::take_hook();
    println!("rlib user: std panic caught: {caught}");
    std::process::exit(if status == qgemm_status::QGEMM_OK && caught { 0 } else { 1 });
}
