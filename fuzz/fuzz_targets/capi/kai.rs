//! Layer 2 (`kai_*`) as a correct KleidiAI caller uses it: every matmul kernel name of the 11
//! quantized families (`KERNELS` of each `qgemm_capi::kai` family module, the table the
//! library's `kai_family!` macro builds from the same rows as the symbols). For a drawn kernel
//! and shape: the six getters, `get_lhs_packed_offset` / `get_rhs_packed_offset` at the
//! rounded-up `m` and `n` (the packed sizes the kernel reads), `get_dst_offset`,
//! `get_dst_size`, then `kai_run_*` on buffers of exactly those sizes (arbitrary packed bytes;
//! the `dst` a `Vec`, so ASan sees any overrun) with drawn strides, clamps and 2-bit tables.
//! The error hook records instead of aborting: a getter or run that reports must return 0 or
//! write nothing.
//!
//! Not covered: the float kernels (`kai::float`) and the packers (`kai::pack`,
//! `kai_run_lhs_*` / `kai_run_rhs_*` and their getters).

use core::ffi::{c_char, c_void};
use core::sync::atomic::{AtomicBool, Ordering};

use qgemm_capi::hook::qgemm_kai_set_error_handler;
use qgemm_capi::kai::{self, KaiFns, KaiRunArgs};

use crate::common::{CANARY, Input, bytes_of};

static REPORTED: AtomicBool = AtomicBool::new(false);

/// The fuzz target's error hook: records the report and returns (the `kai_*` function then
/// returns without writing anything, or 0 for a getter).
unsafe extern "C-unwind" fn record(_function: *const c_char, _reason: *const c_char, _user: *mut c_void) {
    REPORTED.store(true, Ordering::Relaxed);
}

/// Every family's kernel table.
const FAMILIES: [&[KaiFns]; 11] = [
    kai::qai8dxp_qsi4cxp::KERNELS,
    kai::qai8dxp_qsi4c32p::KERNELS,
    kai::qsi8d32p_qsi4c32p::KERNELS,
    kai::qai8dxp_qsi8cxp::KERNELS,
    kai::f16_qai8dxp_qsi4cxp::KERNELS,
    kai::f16_qai8dxp_qsi8cxp::KERNELS,
    kai::bf16_qai8dxp_qsi4cxp::KERNELS,
    kai::bf16_qai8dxp_qsi4c32p::KERNELS,
    kai::qsi8d32p_qai4c32p::KERNELS,
    kai::f16_qsi8d32p_qai4c32p::KERNELS,
    kai::qai8dxp_qsu2cxp::KERNELS,
];

/// Calls `f`, which may report; `None` if it did.
fn unreported<T>(f: impl FnOnce() -> T) -> Option<T> {
    REPORTED.store(false, Ordering::Relaxed);
    let v = f();
    (!REPORTED.swap(false, Ordering::Relaxed)).then_some(v)
}

/// The offset getter `f` over its arguments by name.
fn offset(f: fn(&[usize]) -> usize, names: &[&str], idx: usize, k: usize, bl: usize) -> Option<usize> {
    let args: Vec<usize> = names
        .iter()
        .map(|&a| {
            if a == "k" {
                k
            } else if a == "bl" {
                bl
            } else {
                idx
            }
        })
        .collect();
    let v = unreported(|| f(&args));
    if v == Some(0) && idx > 0 {
        return None; // a zero-sized packed operand of a non-empty one: nothing to run on
    }
    match v {
        None => None,
        v => v,
    }
}

pub fn run(i: &mut Input<'_>) {
    qgemm_kai_set_error_handler(Some(record), core::ptr::null_mut());
    let family = FAMILIES[i.upto(FAMILIES.len() - 1)];
    let kernel = &family[i.upto(family.len() - 1)];
    let [m_step, n_step, mr, nr, kr, sr] = kernel.getters.map(|g| g());
    assert!(m_step > 0 && n_step > 0 && mr > 0 && nr > 0 && kr > 0 && sr > 0, "{}: a zero getter", kernel.name);
    let m = if i.one_in(2) { 1 } else { i.dim(17) };
    let n = i.dim(33);
    let k = if i.one_in(3) { i.dim(300) } else { 32 * i.upto(8) };
    let bl = if i.one_in(8) { i.dim(300) } else { i.pick(&[32, 64, 128]) };
    let round = |v: usize, step: usize| v.checked_next_multiple_of(step);
    let (Some(m_all), Some(n_all)) = (round(m, m_step), round(n, n_step)) else { return };
    let Some(lhs_size) = offset(kernel.lhs_packed_offset, kernel.lhs_args, m_all, k, bl) else { return };
    let Some(rhs_size) = offset(kernel.rhs_packed_offset, kernel.rhs_args, n_all, k, bl) else { return };
    let Some(dst_size) = unreported(|| (kernel.dst_size)(m, n)) else { return };
    let elem = if kernel.name.contains("_f16_") || kernel.name.contains("_bf16_") { 2 } else { 4 };
    let row = n.saturating_mul(elem);
    let stride = if i.one_in(8) { row + elem * i.upto(3) } else { row };
    let _ = unreported(|| (kernel.dst_offset)(i.upto(m), i.upto(n), stride));
    // A correct caller: buffers of what the getters report, the packed bytes arbitrary.
    let cap = 1 << 22;
    if lhs_size > cap || rhs_size > cap || dst_size > cap || m.saturating_mul(stride) > cap {
        return;
    }
    let dst_len = if stride == row { dst_size } else { m.saturating_sub(1) * stride + row };
    let lhs = i.bytes(lhs_size);
    let rhs = i.bytes(rhs_size);
    let mut dst = vec![CANARY; dst_len];
    let lut: [i32; 4] = core::array::from_fn(|_| i32::from(i.byte() as i8));
    let (lo, hi) = (-f32::from(i.byte()), f32::from(i.byte()));
    let (scalar_min, scalar_max) = match i.byte() % 4 {
        0 => (f32::NEG_INFINITY, f32::INFINITY),
        1 => (hi, lo), // inverted: reported
        _ => (lo, hi),
    };
    let args = KaiRunArgs {
        m,
        n,
        k,
        bl,
        lhs_packed: lhs.as_ptr().cast(),
        rhs_packed: rhs.as_ptr().cast(),
        dst: dst.as_mut_ptr().cast(),
        dst_stride_row: stride,
        dst_stride_col: elem,
        scalar_min,
        scalar_max,
        lut: if i.one_in(2) { core::ptr::null() } else { lut.as_ptr() },
    };
    // SAFETY: the buffers hold what this kernel's getters say it reads and writes for this
    // shape: `lhs_packed_offset(m rounded up to m_step)` and `rhs_packed_offset(n rounded up
    // to n_step)` bytes of packed operands from their first tile, `dst` `m` rows of `n`
    // elements `stride` bytes apart (`dst_size` when dense), `lut` null or 4 `i32`s.
    let ran = unreported(|| unsafe { (kernel.run)(&args) });
    if ran.is_none() {
        assert!(bytes_of(&dst).iter().all(|&b| b == CANARY), "{}: reported but wrote dst", kernel.name);
    }
}
