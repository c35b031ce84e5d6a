//! The C library's entry points (capi/), called by their Rust paths so the signatures cannot
//! drift from the header.
//!
//! Layer 1 (`qgemm_*`), for the family a byte picks (bad family codes and kernel handles too):
//! the CPU functions, the kernel handle functions (`count`, `at`, `resolve`, `get_info`,
//! `is_available`, `select`, `select_for`), the kernel size and offset functions,
//! `qgemm_kernel_run` / `_u16` on arbitrary packed bytes, and the operator
//! (`qgemm_linear_packed_size`, `from_packed`, `set_lut`, `scratch_size`, `run`, `prepare`,
//! `split`, `run_part`, on a layer struct whose fields the fuzzer may corrupt), with null,
//! misaligned and short buffers. Every call must return a status (no panic, no ASan report);
//! an error status must leave every output untouched (docs/c-api.md: "Every function returns
//! `QGEMM_OK` or an error status and leaves its outputs untouched on error"); and
//! `qgemm_kernel_run` of a scalar kernel must agree with the Rust `Kernel::run` on the same
//! arguments: the same verdict and, on success, the same output bits.
//!
//! Layer 2 (`kai_*`), as a correct caller uses it: see [`kai`].
#![no_main]

use core::ffi::c_void;

use libfuzzer_sys::fuzz_target;
use qgemm::op::Operator;
use qgemm::{Clamp, CpuFeatures, Family, MatmulArgs, Tier};
use qgemm_capi::api::linear::*;
use qgemm_capi::api::*;
use qgemm_capi::cpu::*;
use qgemm_capi::status::{qgemm_status, qgemm_status_message};

#[path = "common.rs"]
mod common;
use common::{CANARY, DrawParams, FAMILIES, Input, Plain, Visit, bytes_of, canary, for_family};

/// The body of an entry of the C-call tables in [`pack`] and [`quant`] (used nowhere else):
/// `$call` in the one `unsafe` block those tables need. Each entry is a closure coerced to an
/// `unsafe fn` type whose `# Safety` section (on the type) is this proof's premise.
macro_rules! forward {
    ($call:expr) => {
        // SAFETY: this is the body of a table entry (an `unsafe fn` closure) that forwards its
        // arguments to the `qgemm_*` function it names, lengths unchanged and pointers only
        // cast to that function's element types. The entry's caller upholds the entry type's
        // contract: every pointer is null or points into a live allocation (`Out`, `Buf`,
        // `input_of` / `output_of` over a live `Vec` or local) that holds at least the length
        // passed with it, in elements of the C type, from that point (one byte in comes with
        // one element fewer); a struct pointer is null or a live struct whose own pointers
        // obey the same rule. The rest the callee checks before any access, by its documented
        // contract (docs/c-api.md, status values): a null pointer is
        // `QGEMM_ERROR_NULL_POINTER`, a misaligned one `QGEMM_ERROR_MISALIGNED_POINTER`, a
        // length shorter than it needs `QGEMM_ERROR_BUFFER_TOO_SHORT`, bad codes and shapes
        // their errors. So every access the callee makes is inside a live allocation.
        unsafe { $call }
    };
}

#[path = "capi/kai.rs"]
mod kai;
#[path = "capi/pack.rs"]
mod pack;
#[path = "capi/quant.rs"]
mod quant;

const OK: qgemm_status = qgemm_status::QGEMM_OK;

/// A C out pointer for one `T`: null, aligned or misaligned (one byte in), into canary-filled
/// storage of 8-byte words (aligned for every out type here).
struct Out<T> {
    buf: Vec<u64>,
    mode: u8,
    _t: core::marker::PhantomData<T>,
}

impl<T: Copy> Out<T> {
    /// Mostly a valid pointer; sometimes null or misaligned.
    fn new(i: &mut Input<'_>) -> Self {
        let mode = if rarely(i, 12) { 1 + i.byte() % 2 } else { 0 };
        // One byte in is aligned for a byte-sized `T`: null instead.
        let mode = if mode == 2 && align_of::<T>() == 1 { 1 } else { mode };
        let buf = vec![u64::from_ne_bytes([CANARY; 8]); size_of::<T>().div_ceil(8) + 1];
        Out { buf, mode, _t: core::marker::PhantomData }
    }

    fn ptr(&mut self) -> *mut T {
        match self.mode {
            0 => self.buf.as_mut_ptr().cast(),
            1 => core::ptr::null_mut(),
            // SAFETY: `buf` holds one word more than a `T` needs, so one byte in is inside it
            // and a `T` there still fits.
            _ => unsafe { self.buf.as_mut_ptr().cast::<u8>().add(1).cast() },
        }
    }

    /// The storage's bytes (checked only after an error: then nothing wrote them).
    fn bytes(&self) -> &[u8] {
        bytes_of(&self.buf)
    }

    /// The value written through a valid pointer (after an OK status).
    fn get(&self) -> T {
        // SAFETY: `buf` is 8-byte aligned and holds at least `size_of::<T>()` bytes, which
        // the callee wrote as a `T` (OK status through the aligned pointer).
        unsafe { self.buf.as_ptr().cast::<T>().read() }
    }
}

/// `true` with probability `1/n`, `false` once the input is used up (so a short input draws
/// valid pointers and codes, and reaches the successful paths).
fn rarely(i: &mut Input<'_>, n: u8) -> bool {
    i.byte() % n == n - 1
}

/// A C input buffer `(pointer, length)` over `v`: mostly `v` itself, sometimes null (length
/// kept) or one byte in (misaligned for a wider `T`; one element fewer, so every addressed
/// byte is inside `v`).
fn input_of<T>(i: &mut Input<'_>, v: &[T]) -> (*const T, usize) {
    match i.byte() % 16 {
        15 => (core::ptr::null(), v.len()),
        14 if !v.is_empty() && align_of::<T>() > 1 => {
            // SAFETY: one byte into a non-empty slice is inside it.
            (unsafe { v.as_ptr().cast::<u8>().add(1).cast() }, v.len() - 1)
        }
        _ => (v.as_ptr(), v.len()),
    }
}

/// As [`input_of`], for an output buffer.
fn output_of<T>(i: &mut Input<'_>, v: &mut [T]) -> (*mut T, usize) {
    let (p, len) = input_of(i, v);
    (p.cast_mut(), len)
}

/// Asserts the contract on `status`: OK, or an error with every one of `outs` untouched.
fn check_status(what: &str, status: qgemm_status, outs: &[&[u8]]) -> bool {
    if status == OK {
        return true;
    }
    for (j, out) in outs.iter().enumerate() {
        assert!(out.iter().all(|&b| b == CANARY), "{what}: {status:?} but wrote output {j}");
    }
    false
}

/// [`check_status`] for a call whose outputs are `out` and `more`; the value on success.
fn checked<T: Copy>(what: &str, status: qgemm_status, out: &Out<T>, more: &[&[u8]]) -> Option<T> {
    let mut outs = vec![out.bytes()];
    outs.extend_from_slice(more);
    if check_status(what, status, &outs) {
        assert!(out.mode == 0, "{what}: OK through a null or misaligned out pointer");
        Some(out.get())
    } else {
        None
    }
}

/// A feature word: none (the scalar kernels) mostly, else any bits.
fn features(i: &mut Input<'_>) -> u32 {
    match i.byte() % 8 {
        0 => u32::from_le_bytes([i.byte(), i.byte(), i.byte(), i.byte()]),
        1 => QGEMM_FEATURE_NEON,
        _ => 0,
    }
}

/// The CPU functions and `qgemm_status_message`.
fn cpu(i: &mut Input<'_>) {
    let word = |i: &mut Input<'_>| u64::from_le_bytes(core::array::from_fn(|_| i.byte()));
    let (hwcap, hwcap2) = (word(i), word(i));
    let mut out = Out::<u32>::new(i);
    // SAFETY: `out.ptr()` is null or valid for a write of a `u32` (misaligned: rejected
    // before any write, as the function's contract allows).
    let s = unsafe { qgemm_cpu_from_hwcap(hwcap, hwcap2, out.ptr()) };
    checked("qgemm_cpu_from_hwcap", s, &out, &[]);
    for (what, f) in [
        ("qgemm_cpu_detect", qgemm_cpu_detect as unsafe extern "C" fn(*mut u32) -> qgemm_status),
        ("qgemm_cpu_from_target", qgemm_cpu_from_target),
        ("qgemm_cpu_from_id_registers", qgemm_cpu_from_id_registers),
    ] {
        let mut out = Out::<u32>::new(i);
        // SAFETY: as above.
        checked(what, unsafe { f(out.ptr()) }, &out, &[]);
    }
    let code = i32::from_le_bytes([i.byte(), i.byte(), i.byte(), i.byte()]);
    assert!(!qgemm_status_message(code).is_null(), "qgemm_status_message({code}) is null");
}

/// A kernel handle of family `code`: a valid one mostly, else any index and SVL.
fn handle(i: &mut Input<'_>, code: u32, count: usize) -> qgemm_kernel {
    if i.one_in(8) {
        qgemm_kernel { family: code, index: i.upto(300) as u32, svl_bytes: (i.upto(4) * 64) as u32 }
    } else {
        qgemm_kernel { family: code, index: i.upto(count.saturating_sub(1)) as u32, svl_bytes: 0 }
    }
}

struct Layer1 {
    code: u32,
}

impl Visit for Layer1 {
    fn visit<F: Operator<Params: DrawParams, Src: Plain, Dst: Plain>>(&mut self, i: &mut Input<'_>) {
        let code = self.code;
        let mut count = Out::<usize>::new(i);
        // SAFETY: `count.ptr()` is null or valid for a write of a `usize`.
        let n_kernels = checked("qgemm_kernel_count", unsafe { qgemm_kernel_count(code, count.ptr()) }, &count, &[]);
        let valid_family = (code as usize) < FAMILIES;
        assert_eq!(n_kernels.is_some(), valid_family && count.mode == 0, "qgemm_kernel_count({code})");
        if let Some(c) = n_kernels {
            assert_eq!(c, F::kernels().len(), "qgemm_kernel_count({code})");
        }
        let h = handle(i, code, F::kernels().len());
        match i.byte() % 4 {
            0 => handles::<F>(i, h),
            1 => sizes(i, h),
            2 => kernel_run::<F>(i, h),
            _ => linear::<F>(i, code),
        }
    }
}

/// The handle functions on `h` (and `qgemm_kernel_at`, `qgemm_select(_for)` of its family).
fn handles<F: Family>(i: &mut Input<'_>, h: qgemm_kernel) {
    let mut at = Out::<qgemm_kernel>::new(i);
    // SAFETY: `at.ptr()` is null or valid for a write of a `qgemm_kernel`.
    let s = unsafe { qgemm_kernel_at(h.family, h.index as usize, at.ptr()) };
    if let Some(k) = checked("qgemm_kernel_at", s, &at, &[]) {
        assert!((k.index as usize) < F::kernels().len() && k.family == h.family);
    }
    let features = features(i);
    let mut resolved = Out::<qgemm_kernel>::new(i);
    // SAFETY: as above.
    let s = unsafe { qgemm_kernel_resolve(h, features, resolved.ptr()) };
    checked("qgemm_kernel_resolve", s, &resolved, &[]);
    let mut info = Out::<qgemm_kernel_info>::new(i);
    // SAFETY: `info.ptr()` is null or valid for a write of a `qgemm_kernel_info`.
    let s = unsafe { qgemm_kernel_get_info(h, info.ptr()) };
    checked("qgemm_kernel_get_info", s, &info, &[]);
    let mut avail = Out::<u8>::new(i);
    // SAFETY: `avail.ptr()` is null or valid for a write of one byte, a `bool`'s size and
    // alignment (the callee writes only `true` or `false`).
    let s = unsafe { qgemm_kernel_is_available(h, features, avail.ptr().cast()) };
    checked("qgemm_kernel_is_available", s, &avail, &[]);
    let m = i.dim(64);
    let mut sel = Out::<qgemm_kernel>::new(i);
    // SAFETY: as above.
    let s = unsafe { qgemm_select(h.family, features, m, sel.ptr()) };
    checked("qgemm_select", s, &sel, &[]);
    let p = i.packing();
    let rhs = qgemm_rhs_packing {
        format: if i.one_in(8) { u32::from(i.byte()) } else { i.upto(9) as u32 },
        nr: p.nr,
        kr: p.kr,
        sr: p.sr,
    };
    let lhs = qgemm_lhs_packing { format: i.upto(6) as u32, mr: p.mr, kr: p.kr, sr: p.sr };
    let (rp, _) = input_of(i, core::slice::from_ref(&rhs));
    let lp = if i.one_in(2) { core::ptr::null() } else { input_of(i, core::slice::from_ref(&lhs)).0 };
    let mut sel = Out::<qgemm_kernel>::new(i);
    // SAFETY: `rp`, `lp` are null or point at (or one byte into: rejected as misaligned before
    // any read) the structs above; `sel.ptr()` as above.
    let s = unsafe { qgemm_select_for(h.family, features, m, rp, lp, sel.ptr()) };
    checked("qgemm_select_for", s, &sel, &[]);
}

/// The size and offset functions of the kernel `h`.
fn sizes(i: &mut Input<'_>, h: qgemm_kernel) {
    let (m, n, k, bl) = (i.dim(64), i.dim(64), i.depth(512), i.block_len());
    let (mi, ni, stride) = (i.dim(64), i.dim(64), i.dim(128));
    type F3 = unsafe extern "C" fn(qgemm_kernel, usize, usize, usize, *mut usize) -> qgemm_status;
    let three: [(&str, F3, [usize; 3]); 5] = [
        ("qgemm_kernel_lhs_packed_size", qgemm_kernel_lhs_packed_size, [m, k, bl]),
        ("qgemm_kernel_rhs_packed_size", qgemm_kernel_rhs_packed_size, [n, k, bl]),
        ("qgemm_kernel_lhs_packed_offset", qgemm_kernel_lhs_packed_offset, [mi, k, bl]),
        ("qgemm_kernel_rhs_packed_offset", qgemm_kernel_rhs_packed_offset, [ni, k, bl]),
        ("qgemm_kernel_dst_offset", qgemm_kernel_dst_offset, [mi, ni, stride]),
    ];
    for (what, f, [a, b, c]) in three {
        let mut out = Out::<usize>::new(i);
        // SAFETY: `out.ptr()` is null or valid for a write of a `usize`.
        checked(what, unsafe { f(h, a, b, c, out.ptr()) }, &out, &[]);
    }
    let mut out = Out::<usize>::new(i);
    // SAFETY: as above.
    checked("qgemm_kernel_dst_size", unsafe { qgemm_kernel_dst_size(h, m, n, out.ptr()) }, &out, &[]);
}

/// `qgemm_kernel_run` (or `_u16`) of the kernel `h` on arbitrary bytes; for a scalar kernel
/// with no features, the same call through the Rust API must give the same verdict and bits.
fn kernel_run<F: Operator<Params: DrawParams, Src: Plain, Dst: Plain>>(i: &mut Input<'_>, h: qgemm_kernel) {
    let features = features(i);
    let (m, n) = (i.dim(12), i.dim(24));
    let k = if i.one_in(2) { i.depth(256) } else { i.dim(64) };
    let bl = if F::BLOCKED || i.one_in(16) { i.block_len() } else { 0 };
    let (m_idx, n_idx) = if i.one_in(4) { (i.upto(16), i.upto(16)) } else { (0, 0) };
    let stride = i.stride(n);
    let (lo, hi) = (f32::from(i.byte() as i8), f32::from(i.byte()));
    let (clamp_min, clamp_max) = if i.one_in(2) { (f32::NEG_INFINITY, f32::INFINITY) } else { (lo, hi) };
    // The family's parameter struct, or null (the default), or one of the wrong kind.
    let params = F::Params::draw(i, k);
    let lut = qgemm_lut_params { lut: core::array::from_fn(|j| i32::from(i.byte() as i8) >> (j % 2)) };
    let lhs_stride = qgemm_lhs_stride_params { lhs_stride_row: i.stride(k) };
    let (p_ptr, rust_params): (*const c_void, Option<F::Params>) = match i.byte() % 4 {
        0 => ((&raw const lut).cast(), None),
        1 => ((&raw const lhs_stride).cast(), None),
        _ => (core::ptr::null(), Some(<F::Params as qgemm::Params>::DEFAULT)),
    };
    let _ = params;
    let args =
        qgemm_matmul_args { m, n, k, bl, m_idx, n_idx, dst_stride_row: stride, clamp_min, clamp_max, params: p_ptr };
    let kernel = F::kernels().get(h.index as usize).filter(|_| h.svl_bytes == 0);
    let geometry = kernel.and_then(|d| d.resolve(&CpuFeatures::NONE).ok());
    let end = |s: usize, c: usize| s.saturating_add(c);
    let lhs_needed = geometry.as_ref().map_or(64, |g| {
        if F::ROWS {
            end(m_idx, m).saturating_sub(1).saturating_mul(k).saturating_add(k).saturating_mul(size_of::<F::Src>())
        } else {
            g.lhs_packed_size(end(m_idx, m), k, bl).unwrap_or(0)
        }
    });
    let rhs_needed = geometry.as_ref().map_or(64, |g| g.rhs_packed_size(end(n_idx, n), k, bl).unwrap_or(0));
    let dst_needed = m.saturating_sub(1).saturating_mul(stride).saturating_add(n);
    // The LHS as source elements (rows read in place must be aligned to them), its bytes
    // arbitrary.
    let lhs_elems = i.len_near(lhs_needed).div_ceil(size_of::<F::Src>());
    let lhs: Vec<F::Src> = i.values(lhs_elems);
    let lhs_bytes = i.len_near(lhs_needed).min(size_of_val(&lhs[..]));
    let rhs = i.bytes_near(rhs_needed);
    let mut dst = canary::<F::Dst>(i.len_near(dst_needed));
    let (lp, lhs_len) = match i.byte() % 16 {
        0 => (core::ptr::null(), lhs_bytes),
        // SAFETY: `lhs` holds at least `lhs_bytes > 0` bytes, so one byte in is inside it.
        1 if lhs_bytes > 0 => (unsafe { lhs.as_ptr().cast::<u8>().add(1) }, lhs_bytes - 1),
        _ => (lhs.as_ptr().cast::<u8>(), lhs_bytes),
    };
    let (rp, rlen) = input_of(i, &rhs);
    let (dp, dlen) = output_of(i, &mut dst);
    let ap = if i.one_in(32) { core::ptr::null() } else { &raw const args };
    // SAFETY: every pointer is null, or points at (or one byte into, with one element fewer)
    // a live buffer of at least the length passed with it; `args.params` is null or points at
    // a live `qgemm_lut_params` or `qgemm_lhs_stride_params` (the callee reads the kind its
    // family takes and rejects the others).
    let s = unsafe {
        if size_of::<F::Dst>() == 4 {
            qgemm_kernel_run(h, features, lp.cast(), lhs_len, rp, rlen, dp.cast(), dlen, ap)
        } else {
            qgemm_kernel_run_u16(h, features, lp.cast(), lhs_len, rp, rlen, dp.cast(), dlen, ap)
        }
    };
    let ok = check_status("qgemm_kernel_run", s, &[bytes_of(&dst)]);
    // The Rust oracle: a scalar kernel, no features, every pointer the buffer itself.
    let plain = lp == lhs.as_ptr().cast() && rp == rhs.as_ptr() && dp == dst.as_mut_ptr() && !ap.is_null();
    let known = (h.family as usize) < FAMILIES;
    let (Some(geometry), Some(params), true, true, 0) = (geometry, rust_params, plain, known, features) else {
        return;
    };
    if kernel.is_none_or(|d| d.tier() != Tier::Scalar) {
        return;
    }
    let Ok(clamp) = Clamp::new(clamp_min, clamp_max) else {
        assert!(!ok, "qgemm_kernel_run: OK with an invalid clamp");
        return;
    };
    let rargs = MatmulArgs::new(m, n, k)
        .with_block_len(bl)
        .with_rect(m_idx, n_idx, m, n)
        .with_dst_stride(stride)
        .with_clamp(clamp)
        .with_params(params);
    let mut rust_dst = canary::<F::Dst>(dst.len());
    let rows: Vec<F::Src> = if F::ROWS { lhs[..lhs_bytes / size_of::<F::Src>()].to_vec() } else { Vec::new() };
    let packed: &[u8] = if F::ROWS { &[] } else { &bytes_of(&lhs)[..lhs_bytes] };
    let r = geometry.run(F::kernel_lhs(&rows, packed), &rhs, &mut rust_dst, &rargs);
    if F::ROWS && !lhs_bytes.is_multiple_of(size_of::<F::Src>()) {
        return; // the C call sees a partial element the Rust slice drops
    }
    assert_eq!(ok, r.is_ok(), "qgemm_kernel_run {} vs Kernel::run: {s:?} vs {r:?}", geometry.name());
    if ok {
        assert!(
            bytes_of(&dst) == bytes_of(&rust_dst),
            "qgemm_kernel_run {}: other bits than Kernel::run",
            geometry.name()
        );
    }
}

/// The operator functions of family `code`.
fn linear<F: Operator<Params: DrawParams, Src: Plain, Dst: Plain>>(i: &mut Input<'_>, code: u32) {
    let mut packing = Out::<qgemm_rhs_packing>::new(i);
    // SAFETY: `packing.ptr()` is null or valid for a write of a `qgemm_rhs_packing`.
    let s = unsafe { qgemm_linear_rhs_packing(code, packing.ptr()) };
    let preferred = checked("qgemm_linear_rhs_packing", s, &packing, &[]);
    let (n, k) = (i.dim(40), if i.one_in(2) { i.depth(256) } else { i.dim(64) });
    let bl = if F::BLOCKED { i.block_len() } else { 0 };
    let mut size = Out::<usize>::new(i);
    // SAFETY: `size.ptr()` is null or valid for a write of a `usize`.
    let s = unsafe { qgemm_linear_packed_size(code, n, k, bl, size.ptr()) };
    let needed = checked("qgemm_linear_packed_size", s, &size, &[]).unwrap_or(0);
    let weights = i.bytes_near(needed);
    let mut p = preferred.unwrap_or(qgemm_rhs_packing { format: 0, nr: 4, kr: 8, sr: 2 });
    if i.one_in(4) {
        let d = i.packing();
        (p.nr, p.kr, p.sr) = (d.nr, d.kr, d.sr);
    }
    let pp = if i.one_in(2) { core::ptr::null() } else { &raw const p };
    let (wp, wlen) = input_of(i, &weights);
    let mut layer = Out::<qgemm_linear>::new(i);
    // SAFETY: `pp` is null or points at `p`; `wp` at most `wlen` bytes of `weights`;
    // `layer.ptr()` is null or valid for a write of a `qgemm_linear`.
    let s = unsafe { qgemm_linear_from_packed(code, pp, n, k, bl, wp, wlen, layer.ptr()) };
    let Some(mut l) = checked("qgemm_linear_from_packed", s, &layer, &[]) else { return };
    // A caller may corrupt the struct: its size, family, shape (never its pointers, which
    // the caller vouches for; the library checks the rest against them).
    match i.byte() % 16 {
        0 => l.size = i.upto(200),
        1 => l.family = u32::from(i.byte()),
        2 => l.n = i.dim(64),
        3 => l.k = i.dim(300),
        4 => l.bl = i.block_len(),
        5 => (l.packing.nr, l.packing.kr) = (i.upto(20), i.upto(40)),
        6 => l.weights_len = l.weights_len.saturating_sub(i.upto(3)),
        _ => {}
    }
    if i.one_in(4) {
        let lut: [i32; 4] = core::array::from_fn(|_| i32::from(i.byte() as i8));
        let before = l;
        let lp = if i.one_in(8) { core::ptr::null() } else { lut.as_ptr() };
        // SAFETY: `l` is a live `qgemm_linear`; `lp` is null or points at 4 `i32`s.
        let s = unsafe { qgemm_linear_set_lut(&raw mut l, lp) };
        if s != OK {
            assert!(before.params == l.params, "qgemm_linear_set_lut: {s:?} but wrote the table");
        }
    }
    let m = i.dim(12);
    let mut scratch_size = Out::<usize>::new(i);
    // SAFETY: `l` is live; `scratch_size.ptr()` as above.
    let s = unsafe { qgemm_linear_scratch_size(&raw const l, m, scratch_size.ptr()) };
    let scratch_needed = checked("qgemm_linear_scratch_size", s, &scratch_size, &[]).unwrap_or(0);
    let x: Vec<F::Src> = i.near(m.saturating_mul(k));
    let mut scratch = canary::<u8>(i.len_near(scratch_needed));
    let mut y = canary::<F::Dst>(i.len_near(m.saturating_mul(n)));
    let features = features(i);
    let (xp, xlen) = input_of(i, &x);
    let (sp, slen) = output_of(i, &mut scratch);
    let wide = size_of::<F::Dst>() == 4;
    if i.one_in(2) {
        let (yp, ylen) = output_of(i, &mut y);
        // SAFETY: `l` is live and its weights pointer is `weights`' (a corrupted length is at
        // most the real one); every other pointer is null or inside its buffer for its length.
        let s = unsafe {
            if wide {
                qgemm_linear_run(&raw const l, features, m, xp.cast(), xlen, yp.cast(), ylen, sp, slen)
            } else {
                qgemm_linear_run_u16(&raw const l, features, m, xp.cast(), xlen, yp.cast(), ylen, sp, slen)
            }
        };
        check_status("qgemm_linear_run", s, &[bytes_of(&y), &scratch]);
        return;
    }
    let mut call = Out::<qgemm_linear_call>::new(i);
    let (cmin, cmax) = (-f32::from(i.byte()), f32::from(i.byte()));
    // SAFETY: as above; `call.ptr()` is null or valid for a write of a `qgemm_linear_call`.
    let s = unsafe {
        if wide {
            qgemm_linear_prepare(&raw const l, features, m, xp.cast(), xlen, sp, slen, cmin, cmax, call.ptr())
        } else {
            qgemm_linear_prepare_u16(&raw const l, features, m, xp.cast(), xlen, sp, slen, cmin, cmax, call.ptr())
        }
    };
    let Some(mut c) = checked("qgemm_linear_prepare", s, &call, &[&scratch]) else { return };
    if i.one_in(8) {
        c.size = i.upto(300);
    }
    let mut rects = vec![qgemm_rect { m_idx: 0, n_idx: 0, m: 0, n: 0 }; i.upto(70)];
    let mut count = Out::<usize>::new(i);
    let parts = i.upto(70);
    let (rp, rlen) = output_of(i, &mut rects);
    // SAFETY: `c` is live and describes buffers that still live (`x`, `scratch`, `weights`);
    // `rp` is inside `rects` for `rlen`; `count.ptr()` as above.
    let s = unsafe { qgemm_linear_split(&raw const c, parts, rp, rlen, count.ptr()) };
    let got = checked("qgemm_linear_split", s, &count, &[]).map_or(0, |n| n.min(rlen));
    let todo: Vec<qgemm_rect> = if got > 0 && rp == rects.as_mut_ptr() {
        rects[..got].to_vec()
    } else {
        vec![qgemm_rect { m_idx: i.upto(12), n_idx: i.upto(40), m: i.upto(12), n: i.upto(40) }]
    };
    for rect in todo {
        let before = y.clone();
        let (yp, ylen) = output_of(i, &mut y);
        // SAFETY: as above; `yp` is inside `y` for `ylen`.
        let s = unsafe {
            if wide {
                qgemm_linear_run_part(&raw const c, rect, yp.cast(), ylen)
            } else {
                qgemm_linear_run_part_u16(&raw const c, rect, yp.cast(), ylen)
            }
        };
        if s != OK {
            assert!(bytes_of(&before) == bytes_of(&y), "qgemm_linear_run_part: {s:?} but wrote y");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut i = Input(data);
    match i.byte() % 10 {
        0 => cpu(&mut i),
        1 | 2 => kai::run(&mut i),
        3 => quant::run(&mut i),
        4 => pack::run(&mut i),
        _ => {
            let code = if i.one_in(16) { u32::from_le_bytes([i.byte(), i.byte(), 0, 0]) } else { i.upto(14) as u32 };
            // An unknown code runs the checks with family 0's types (every call must reject it).
            for_family(code as usize % FAMILIES, &mut i, &mut Layer1 { code });
        }
    }
});
