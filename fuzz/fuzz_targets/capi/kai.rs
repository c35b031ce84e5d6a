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
//!
//! The float kernels (`KERNELS` of each `kai::float` family module) the same way: the getters,
//! the packed LHS (`get_lhs_packed_offset` at the rounded-up `m`) or LHS rows of exactly
//! `(m - 1) * lhs_stride + k` elements, the packed RHS, then `kai_run_*`.
//!
//! Every packer (`PACKERS` of `kai::pack` and `kai::float`, built from the same rows as the
//! symbols): its getters with drawn shapes and parameters, then `kai_run_*` on raw inputs of
//! exactly the lengths KleidiAI's contract gives (rows, strides, scales, offsets, bias) and a
//! packed buffer of exactly what `get_*_packed_size` reports (from the offset
//! `get_*_packed_offset(m_idx_start)` for an LHS packer); a reported call must not write it.
//!
//! Sometimes with layer-2 CPU features set to a drawn mask (`qgemm_kai_set_cpu_features`),
//! restored to the detected ones after the call.

use core::ffi::{c_char, c_void};
use core::sync::atomic::{AtomicBool, Ordering};

use qgemm::half::f16;
use qgemm_capi::cpu::{QGEMM_FEATURE_ALL, QGEMM_FEATURE_NEON, qgemm_cpu_detect, qgemm_kai_set_cpu_features};
use qgemm_capi::hook::qgemm_kai_set_error_handler;
use qgemm_capi::kai::float::{KaiFloatFns, KaiFloatRunArgs};
use qgemm_capi::kai::pack::KaiPackArgs;
use qgemm_capi::kai::{
    self, KAI_DT_BF16, KaiFns, KaiRunArgs, kai_rhs_pack_qs4cxs1s0_param, kai_rhs_pack_qsi4c32p_qsu4c32s1s0_params,
    kai_rhs_pack_qsi8cx_params,
};
use qgemm_capi::status::qgemm_status;

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
    v
}

/// Layer 2 with the error hook recording: a matmul kernel, a float kernel or a packer, with the
/// layer-2 CPU features sometimes set to a drawn mask (any bits: a rejected mask must change
/// nothing; on the x86 host only the scalar tier exists, whatever the mask) and restored after.
pub fn run(i: &mut Input<'_>) {
    qgemm_kai_set_error_handler(Some(record), core::ptr::null_mut());
    let mask = match i.byte() % 8 {
        0 => Some(u32::from_le_bytes([i.byte(), i.byte(), i.byte(), i.byte()])),
        1 => Some(QGEMM_FEATURE_NEON),
        2 => Some(QGEMM_FEATURE_ALL),
        _ => None,
    };
    if let Some(mask) = mask {
        let s = qgemm_kai_set_cpu_features(mask);
        let known = mask & !QGEMM_FEATURE_ALL == 0;
        assert_eq!(s == qgemm_status::QGEMM_OK, known, "qgemm_kai_set_cpu_features({mask:#x}): {s:?}");
    }
    match i.byte() % 4 {
        0 | 1 => matmul(i),
        2 => float(i),
        _ => packer(i),
    }
    if mask.is_some() {
        let mut detected = 0u32;
        // SAFETY: `detected` is a live `u32`.
        let s = unsafe { qgemm_cpu_detect(&raw mut detected) };
        assert_eq!(s, qgemm_status::QGEMM_OK, "qgemm_cpu_detect");
        assert_eq!(qgemm_kai_set_cpu_features(detected), qgemm_status::QGEMM_OK, "restoring {detected:#x}");
    }
}

/// A matmul kernel of a quantized family.
fn matmul(i: &mut Input<'_>) {
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
    let lhs = exact_bytes(i, lhs_size);
    let rhs = exact_bytes(i, rhs_size);
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

/// Every float family's kernel table.
const FLOAT_FAMILIES: [&[KaiFloatFns]; 4] = [
    kai::float::f32_f32_f32p::KERNELS,
    kai::float::f16_f16_f16p::KERNELS,
    kai::float::f32_bf16p_bf16p::KERNELS,
    kai::float::f16_bf16p_bf16p::KERNELS,
];

/// A float kernel as a correct caller runs it: buffers of the sizes its getters report.
fn float(i: &mut Input<'_>) {
    let family = FLOAT_FAMILIES[i.upto(FLOAT_FAMILIES.len() - 1)];
    let kernel = &family[i.upto(family.len() - 1)];
    let [m_step, n_step, nr, kr, sr] = kernel.getters.map(|g| g());
    assert!(m_step > 0 && n_step > 0 && nr > 0 && kr > 0 && sr > 0, "{}: a zero getter", kernel.name);
    if let Some(mr) = kernel.mr {
        assert!(mr() > 0, "{}: mr = 0", kernel.name);
    }
    let m = if i.one_in(2) { 1 } else { i.dim(17) };
    let n = i.dim(40);
    let k = if i.one_in(8) { i.dim(1 << 20) } else { i.dim(70) };
    let round = |v: usize, step: usize| v.checked_next_multiple_of(step);
    let (Some(m_all), Some(n_all)) = (round(m, m_step), round(n, n_step)) else { return };
    let (e, le) = (kernel.dst_bytes, kernel.lhs_bytes);
    // The LHS: packed tiles of every row, or rows `lhs_stride` bytes apart (sometimes a
    // stride that is not whole elements: reported for m > 1).
    let lhs_stride = k.saturating_mul(le).saturating_add(if i.one_in(8) { i.upto(3) } else { le * i.upto(2) });
    let lhs_size = match (kernel.lhs_packed_offset, kernel.lhs_offset) {
        (Some(packed), _) => {
            let Some(v) = unreported(|| packed(m_all, k)) else { return };
            if v == 0 && m > 0 {
                return;
            }
            v
        }
        (None, Some(rows)) => {
            let _ = unreported(|| rows(m_step * i.upto(3), lhs_stride));
            m.saturating_sub(1).saturating_mul(lhs_stride).saturating_add(k.saturating_mul(le))
        }
        (None, None) => unreachable!("{}: no LHS getter", kernel.name),
    };
    let Some(rhs_size) = unreported(|| (kernel.rhs_packed_offset)(n_all, k)) else { return };
    if rhs_size == 0 && n > 0 {
        return;
    }
    let Some(dst_size) = unreported(|| (kernel.dst_size)(m, n)) else { return };
    let row = n.saturating_mul(e);
    let stride = if i.one_in(8) { row + e * i.upto(3) } else { row };
    let _ = unreported(|| (kernel.dst_offset)(i.upto(m), i.upto(n), stride));
    let cap = 1 << 22;
    if lhs_size > cap || rhs_size > cap || dst_size > cap || m.saturating_mul(stride) > cap {
        return;
    }
    let dst_len = if stride == row { dst_size } else { m.saturating_sub(1) * stride + row };
    let lhs = if i.one_in(2) { exact_bytes(i, lhs_size) } else { float_bytes(i, le.max(2), lhs_size) };
    let rhs = exact_bytes(i, rhs_size);
    let mut dst = vec![CANARY; dst_len];
    let (lo, hi) = (-f32::from(i.byte()), f32::from(i.byte()));
    let (clamp_min, clamp_max) = match i.byte() % 4 {
        0 => (f32::NEG_INFINITY, f32::INFINITY),
        1 => (hi, lo), // inverted: reported
        _ => (lo, hi),
    };
    let args = KaiFloatRunArgs {
        m,
        n,
        k,
        lhs: lhs.as_ptr().cast(),
        lhs_stride,
        rhs_packed: rhs.as_ptr().cast(),
        dst: dst.as_mut_ptr().cast(),
        dst_stride_row: stride,
        dst_stride_col: if i.one_in(16) { 1 } else { e },
        clamp_min,
        clamp_max,
    };
    // SAFETY: the buffers hold what this kernel's getters say it reads and writes for this
    // shape: the packed LHS of `m` rounded up to `m_step` (or `m` rows of `k` elements
    // `lhs_stride` bytes apart), the packed RHS of `n` rounded up to `n_step`, `dst` `m` rows
    // of `n` elements `stride` bytes apart (`dst_size` when dense).
    let ran = unreported(|| unsafe { (kernel.run)(&args) });
    if ran.is_none() {
        assert!(dst.iter().all(|&b| b == CANARY), "{}: reported but wrote dst", kernel.name);
    }
}

/// `len` bytes of f32 (`elem` 4) or f16 (`elem` 2) values (`Input::values`: finite, NaN, Inf
/// or subnormal); the length cut to whole elements is padded with raw bytes.
fn float_bytes(i: &mut Input<'_>, elem: usize, len: usize) -> Vec<u8> {
    let mut v = if elem == 4 {
        bytes_of(&i.values::<f32>(len / 4)).to_vec()
    } else {
        bytes_of(&i.values::<f16>(len / 2)).to_vec()
    };
    v.resize(len, 0);
    v
}

/// `Some(a * b + c)` without overflow.
fn mad(a: usize, b: usize, c: usize) -> Option<usize> {
    a.checked_mul(b)?.checked_add(c)
}

/// `true` with probability 1/16, never once the input is exhausted (its zeros then draw the valid
/// arguments: the packers need long inputs to get past their checks).
fn rare(i: &mut Input<'_>) -> bool {
    i.byte() % 16 == 15
}

/// A packer as a correct caller uses it: every getter, then `kai_run_*` on inputs of exactly the
/// lengths KleidiAI's contract gives and a packed buffer of exactly the reported size.
fn packer(i: &mut Input<'_>) {
    let tables = [kai::pack::PACKERS, kai::float::PACKERS];
    let table = tables[i.upto(1)];
    let p = &table[i.upto(table.len() - 1)];
    let lhs = p.layout.is_empty();
    let float = p.format.starts_with("float");
    let pk = if float && i.one_in(2) {
        // The float packers accept only their own parameters: often those.
        qgemm::Packing { mr: i.pick(&[1, 8]), nr: i.pick(&[8, 12, 16, 32]), kr: i.pick(&[1, 4]), sr: 1 }
    } else {
        i.packing()
    };
    let mut a = KaiPackArgs {
        num_groups: if rare(i) { i.upto(2) } else { 1 },
        m: if i.one_in(2) { 1 } else { i.dim(17) },
        n: i.dim(40),
        k: if i.one_in(3) { i.dim(300) } else { 32 * i.upto(8) },
        bl: i.block_len(),
        mr: pk.mr,
        nr: pk.nr,
        kr: pk.kr,
        sr: pk.sr,
        idx: 0,
        m_idx_start: 0,
        src_stride: 0,
        scale_stride: 0,
        extra_bytes: if rare(i) { 1 } else { 0 },
        scale_dt: if rare(i) { u32::from(i.byte()) } else { KAI_DT_BF16 },
        src: core::ptr::null(),
        bias: core::ptr::null(),
        scale: core::ptr::null(),
        zero: core::ptr::null(),
        packed: core::ptr::null_mut(),
        params: core::ptr::null(),
        lut: core::ptr::null(),
    };
    // The getters (any may report; none may crash).
    let step = p.step.and_then(|g| unreported(|| g(&a)));
    let step = step.filter(|&s| s > 0).unwrap_or(1);
    a.idx = step * i.upto(4);
    a.src_stride = i.dim(4096);
    for g in [Some(p.src_offset), p.bias_offset, p.packed_stride, Some(p.packed_offset)].into_iter().flatten() {
        let _ = unreported(|| g(&a));
    }
    let cap = 1 << 22;
    let (elem, kb) = (p.elem, a.k.checked_div(a.bl).unwrap_or(0));
    // The raw source: its rows and stride (in bytes) as the contract describes them.
    let (rows, row) = if lhs {
        (a.m, a.k.saturating_mul(elem))
    } else {
        let nxk = p.layout == "NxK";
        let (outer, inner) = if nxk { (a.n, a.k) } else { (a.k, a.n) };
        match p.format {
            "qsi4cxp" | "qsi4c32p" => (outer, inner.div_ceil(2)),
            "qsi4c32pscalef16" => (a.n, kb.saturating_mul(a.bl / 2 + 2)),
            "qai4c32p" => (a.n, a.k / 2),
            "qsu2cxp" => (a.n, a.k / 4),
            "qsi8cxp" => (outer, inner),
            _ => (outer, inner.saturating_mul(elem)),
        }
    };
    let packed_rows = if lhs {
        a.m_idx_start = if i.one_in(4) { i.upto(9) } else { 0 };
        a.m.checked_add(a.m_idx_start)
    } else {
        Some(a.n)
    };
    let Some(packed_rows) = packed_rows else { return };
    let gap = if i.one_in(8) { i.upto(3) } else { elem * i.upto(2) };
    a.src_stride = row.saturating_add(gap);
    // Rows start at `lhs` + `m_idx_start` rows for the per-block LHS packers (they read from
    // row 0), at the first row to pack for the others.
    let skip = if p.format.starts_with("qsi8d32p") { a.m_idx_start } else { 0 };
    let dense = matches!(p.format, "qsi4cxp" | "qsi4c32pscalef16" | "qai4c32p" | "qsu2cxp" | "qsi8cxp");
    let src_len = if rows == 0 {
        Some(0)
    } else if dense {
        rows.checked_mul(row)
    } else {
        mad(rows - 1 + skip, a.src_stride, row)
    };
    let Some(src_len) = src_len else { return };
    // The packed buffer: exactly the reported size (from the offset of `m_idx_start`).
    let size_args = KaiPackArgs { m: packed_rows, ..a };
    let Some(size) = unreported(|| (p.packed_size)(&size_args)) else { return };
    let Some(offset) = unreported(|| (p.packed_offset)(&KaiPackArgs { idx: a.m_idx_start, ..a })) else { return };
    if size == 0 || offset > size || src_len > cap || size > cap {
        return;
    }
    let src = float_bytes(i, elem.max(2), src_len);
    // Scales, offsets and bias, as the format describes them.
    let n = a.n;
    let (scale_len, zero_len) = match p.format {
        "qsi4cxp" | "qsu2cxp" | "qsi8cxp" => (n.checked_mul(4), Some(0)),
        "qsi4c32p" => {
            a.scale_stride = kb.saturating_mul(2).saturating_add(if i.one_in(8) { 1 } else { 2 * i.upto(1) });
            (if n == 0 { Some(0) } else { mad(n - 1, a.scale_stride, kb.saturating_mul(2)) }, Some(0))
        }
        "qai4c32p" => {
            (n.checked_mul(kb).and_then(|v| v.checked_mul(4)), n.checked_mul(kb).and_then(|v| v.checked_mul(4)))
        }
        _ => (Some(0), Some(0)),
    };
    let (Some(scale_len), Some(zero_len)) = (scale_len, zero_len) else { return };
    let bias_len = n.saturating_mul(p.bias_elem.max(4));
    if scale_len > cap || zero_len > cap || bias_len > cap {
        return;
    }
    let scale = float_bytes(i, if p.format == "qsi4c32p" { 2 } else { 4 }, scale_len);
    let zero = float_bytes(i, 4, zero_len);
    let bias = if lhs || i.one_in(2) { None } else { Some(float_bytes(i, p.bias_elem.max(2), n * p.bias_elem)) };
    let lut: [i32; 4] = core::array::from_fn(|_| i32::from(i.byte() as i8));
    let zp = |i: &mut Input<'_>, good: u8| if rare(i) { i.byte() } else { good };
    let rhs_zero_point = if p.format == "qsu2cxp" {
        2
    } else if i.one_in(2) {
        0
    } else {
        8
    };
    let qs4 = kai_rhs_pack_qs4cxs1s0_param {
        lhs_zero_point: if rare(i) { i.byte() as i8 } else { 1 },
        rhs_zero_point: zp(i, rhs_zero_point),
    };
    let qsi4c32 = kai_rhs_pack_qsi4c32p_qsu4c32s1s0_params {
        lhs_zero_point: if rare(i) { i.byte() as i8 } else { 1 },
        rhs_zero_point: zp(i, 8),
        scale_dt: a.scale_dt,
    };
    let qsi8 = kai_rhs_pack_qsi8cx_params {
        lhs_zero_point: if rare(i) { i32::from(i.byte()) } else { 1 },
        scale_multiplier: f32::from(i.byte()),
    };
    let params: *const c_void = match p.format {
        _ if rare(i) => core::ptr::null(),
        "qsi4c32p" => (&raw const qsi4c32).cast(),
        "qsi8cxp" => (&raw const qsi8).cast(),
        f if f.starts_with("float") => core::ptr::null(),
        _ => (&raw const qs4).cast(),
    };
    let mut packed = vec![CANARY; size];
    a.src = src.as_ptr().cast();
    a.scale = if scale_len == 0 { core::ptr::null() } else { scale.as_ptr().cast() };
    a.zero = if zero_len == 0 { core::ptr::null() } else { zero.as_ptr().cast() };
    a.bias = bias.as_ref().map_or(core::ptr::null(), |b| b.as_ptr().cast());
    a.params = params;
    a.lut = if i.one_in(2) { core::ptr::null() } else { lut.as_ptr() };
    // SAFETY: `offset <= size`, so the pointer is inside `packed` or one past its end.
    a.packed = unsafe { packed.as_mut_ptr().add(offset) }.cast();
    // SAFETY: every buffer holds what KleidiAI's contract for this packer and these arguments
    // says it reads or writes: `src` `rows` rows of `row` bytes `src_stride` apart (dense for the
    // formats without a stride; from row 0 for the per-block LHS packers), the scales, offsets
    // and bias as the format lays them out, `params` the format's struct (or null), `lut` null
    // or 4 `int32_t`, and the packed output `get_*_packed_size` bytes from its start, written
    // from `get_*_packed_offset(m_idx_start)`.
    let ran = unreported(|| unsafe { (p.run)(&a) });
    if ran.is_none() {
        assert!(packed.iter().all(|&b| b == CANARY), "{}: reported but wrote the packed output", p.name);
    }
}

/// Exactly `len` bytes ([`Input::bytes`], which stops at 1 MiB, then zeros).
fn exact_bytes(i: &mut Input<'_>, len: usize) -> Vec<u8> {
    let mut v = i.bytes(len);
    v.resize(len, 0);
    v
}
