//! Layer 1's quantizers, Hessian and GPTQ functions (`qgemm_quant_*`) through their C
//! wrappers: drawn shapes, weight structs (element type, layout, stride, null or misaligned
//! data, bad codes), methods and importance, `_sizes` answers, then output buffers near those
//! lengths (null, misaligned, short). Every error status must leave every output untouched;
//! the in-place functions (`hessian_add`, `hessian_scale_inputs`, `divide_depths`) must leave
//! their data unchanged.

use qgemm::half::f16;
use qgemm_capi::api::quant::*;
use qgemm_capi::api::{QGEMM_LAYOUT_KXN, QGEMM_LAYOUT_NXK, qgemm_quant_hessian, qgemm_weights};
use qgemm_capi::status::qgemm_status;

use super::{Out, check_status, checked, input_of, output_of, rarely};
use crate::common::{CANARY, Input, bytes_of, canary};

/// A layout code: NxK or KxN mostly, rarely any.
pub fn layout(i: &mut Input<'_>) -> u32 {
    if rarely(i, 16) { u32::from(i.byte()) } else { i.pick(&[QGEMM_LAYOUT_NXK, QGEMM_LAYOUT_KXN]) }
}

/// Elements of an `n x k` matrix in `layout`, rows `stride` apart (the row length for KxN is
/// `n`, else `k`); and that row length.
pub fn matrix_len(layout: u32, n: usize, k: usize, stride: usize) -> usize {
    let rows = if layout == QGEMM_LAYOUT_KXN { k } else { n };
    rows.saturating_sub(1).saturating_mul(stride).saturating_add(stride.min(row_len(layout, n, k)))
}

/// The row length of an `n x k` matrix in `layout`.
pub fn row_len(layout: u32, n: usize, k: usize) -> usize {
    if layout == QGEMM_LAYOUT_KXN { n } else { k }
}

/// Weights of drawn element type, layout and stride, their storage kept alive by the struct.
struct Weights {
    _f32: Vec<f32>,
    _half: Vec<f16>,
    w: qgemm_weights,
}

fn weights(i: &mut Input<'_>, n: usize, k: usize) -> Weights {
    let layout = layout(i);
    let stride = i.stride(row_len(layout, n, k));
    let needed = matrix_len(layout, n, k, stride);
    let elem = if rarely(i, 16) { u32::from(i.byte()) } else { i.upto(2) as u32 };
    let (f, h): (Vec<f32>, Vec<f16>) =
        if elem == QGEMM_WEIGHTS_F32 { (i.near(needed), Vec::new()) } else { (Vec::new(), i.near(needed)) };
    let (data, len) = if elem == QGEMM_WEIGHTS_F32 {
        let (p, len) = input_of(i, &f);
        (p.cast(), len)
    } else {
        let (p, len) = input_of(i, &h);
        (p.cast(), len)
    };
    Weights { _f32: f, _half: h, w: qgemm_weights { data, len, elem, layout, stride } }
}

/// A canary-filled output of `len` elements of `elem` bytes (8-byte aligned storage), passed
/// mostly as is, sometimes null or one byte in (one element fewer).
pub struct Buf {
    buf: Vec<u64>,
    arg: (*mut u8, usize),
}

impl Buf {
    pub fn new(i: &mut Input<'_>, elem: usize, len: usize) -> Buf {
        let mut buf = vec![u64::from_ne_bytes([CANARY; 8]); (len * elem).div_ceil(8) + 1];
        let arg = match i.byte() % 16 {
            15 => (core::ptr::null_mut(), len),
            // SAFETY: the storage holds one word more than `len` elements, so one byte in is
            // inside it and `len - 1` elements from there still fit.
            14 if len > 0 && elem > 1 => (unsafe { buf.as_mut_ptr().cast::<u8>().add(1) }, len - 1),
            _ => (buf.as_mut_ptr().cast(), len),
        };
        Buf { buf, arg }
    }

    pub fn bytes(&self) -> &[u8] {
        bytes_of(&self.buf)
    }

    /// The C `(pointer, length)` drawn for it.
    pub fn arg(&self) -> (*mut u8, usize) {
        self.arg
    }
}

/// The method word and importance of a quantizer call (`lut` for `qsu2cxp`).
#[derive(Clone, Copy)]
struct Extra {
    method: u32,
    importance: (*const f32, usize),
    lut: *const i32,
}

/// The GPTQ arguments: Hessian, damping, workspace.
#[derive(Clone, Copy)]
struct Gptq {
    hessian: *const qgemm_quant_hessian,
    damp: f32,
    work: (*mut f64, usize),
}

type Outs = [(*mut u8, usize); 3];
// The `unsafe fn` types of `QUANTIZERS` share `forward!`'s premise. # Safety: every pointer
// argument (`weights`, `Extra`'s, `Gptq`'s, `Outs`) is null or points into a live allocation
// holding at least the length passed with it (in elements of the C function's type) from that
// point; a struct pointer is null or a live struct whose pointers obey the same rule; an out
// pointer with no length is null or has room for its value (`Out`). Alignment, nulls and
// lengths shorter than the callee needs may be anything: the callee checks them.
type Sizes = unsafe fn(usize, usize, usize, *mut usize, *mut usize) -> qgemm_status;
type Plain = unsafe fn((usize, usize, usize), *const qgemm_weights, Extra, Outs) -> qgemm_status;
type WithGptq = unsafe fn((usize, usize, usize), *const qgemm_weights, Extra, Gptq, Outs) -> qgemm_status;

/// One quantizer: its sizes function (the second length 0 when it has one output), the bytes
/// per element of its outputs (0: none; the third output has the second's length), the plain
/// call and the GPTQ one.
struct Quantizer {
    name: &'static str,
    sizes: Sizes,
    elems: [usize; 3],
    plain: Plain,
    gptq: Option<WithGptq>,
}

// Each entry forwards its arguments to the function it names (`forward!`, whose proof is there).
const QUANTIZERS: [Quantizer; 6] = [
    Quantizer {
        name: "qgemm_quant_qsi4cxp",
        sizes: |n, k, _, a, b| forward!(qgemm_quant_qsi4cxp_sizes(n, k, a, b)),
        elems: [1, 4, 0],
        plain: |(n, k, _), w, e, [c, s, _]| {
            forward!(qgemm_quant_qsi4cxp(n, k, w, e.method, e.importance.0, e.importance.1, c.0, c.1, s.0.cast(), s.1))
        },
        gptq: Some(|(n, k, _), w, e, g, [c, s, _]| {
            forward!({
                let (imp, il) = e.importance;
                qgemm_quant_gptq_qsi4cxp(
                    n,
                    k,
                    w,
                    e.method,
                    imp,
                    il,
                    g.hessian,
                    g.damp,
                    g.work.0,
                    g.work.1,
                    c.0,
                    c.1,
                    s.0.cast(),
                    s.1,
                )
            })
        }),
    },
    Quantizer {
        name: "qgemm_quant_qsi8cxp",
        sizes: |n, k, _, a, b| forward!(qgemm_quant_qsi8cxp_sizes(n, k, a, b)),
        elems: [1, 4, 0],
        plain: |(n, k, _), w, e, [c, s, _]| {
            forward!({
                let (imp, il) = e.importance;
                qgemm_quant_qsi8cxp(n, k, w, e.method, imp, il, c.0.cast(), c.1, s.0.cast(), s.1)
            })
        },
        gptq: Some(|(n, k, _), w, e, g, [c, s, _]| {
            forward!({
                let (imp, il) = e.importance;
                qgemm_quant_gptq_qsi8cxp(
                    n,
                    k,
                    w,
                    e.method,
                    imp,
                    il,
                    g.hessian,
                    g.damp,
                    g.work.0,
                    g.work.1,
                    c.0.cast(),
                    c.1,
                    s.0.cast(),
                    s.1,
                )
            })
        }),
    },
    Quantizer {
        name: "qgemm_quant_qsi4c32p",
        sizes: |n, k, bl, a, b| forward!(qgemm_quant_qsi4c32p_sizes(n, k, bl, a, b)),
        elems: [1, 2, 0],
        plain: |(n, k, bl), w, e, [c, s, _]| {
            forward!({
                let (imp, il) = e.importance;
                qgemm_quant_qsi4c32p(n, k, bl, w, e.method, imp, il, c.0, c.1, s.0.cast(), s.1)
            })
        },
        gptq: Some(|(n, k, bl), w, e, g, [c, s, _]| {
            forward!({
                let (imp, il) = e.importance;
                let (h, d, (wp, wl)) = (g.hessian, g.damp, g.work);
                qgemm_quant_gptq_qsi4c32p(n, k, bl, w, e.method, imp, il, h, d, wp, wl, c.0, c.1, s.0.cast(), s.1)
            })
        }),
    },
    Quantizer {
        name: "qgemm_quant_q4_0",
        sizes: |n, k, bl, a, _| forward!(qgemm_quant_q4_0_size(n, k, bl, a)),
        elems: [1, 0, 0],
        plain: |(n, k, bl), w, e, [c, _, _]| {
            forward!(qgemm_quant_q4_0(n, k, bl, w, e.method, e.importance.0, e.importance.1, c.0, c.1))
        },
        gptq: Some(|(n, k, bl), w, e, g, [c, _, _]| {
            forward!({
                let (imp, il) = e.importance;
                qgemm_quant_gptq_q4_0(n, k, bl, w, e.method, imp, il, g.hessian, g.damp, g.work.0, g.work.1, c.0, c.1)
            })
        }),
    },
    Quantizer {
        name: "qgemm_quant_qai4c32p",
        sizes: |n, k, bl, a, b| forward!(qgemm_quant_qai4c32p_sizes(n, k, bl, a, b)),
        elems: [1, 4, 4],
        plain: |(n, k, bl), w, e, [c, z, s]| {
            forward!(qgemm_quant_qai4c32p(n, k, bl, w, e.method, c.0, c.1, z.0.cast(), z.1, s.0.cast(), s.1))
        },
        gptq: None,
    },
    Quantizer {
        name: "qgemm_quant_qsu2cxp",
        sizes: |n, k, _, a, b| forward!(qgemm_quant_qsu2cxp_sizes(n, k, a, b)),
        elems: [1, 4, 0],
        plain: |(n, k, _), w, e, [c, s, _]| forward!(qgemm_quant_qsu2cxp(n, k, w, e.lut, c.0, c.1, s.0.cast(), s.1)),
        gptq: None,
    },
];

/// A drawn Hessian over `data` for depth `k` (through `qgemm_quant_hessian_init` and
/// `qgemm_quant_hessian_add`, or a struct the fuzzer made up), or `None`.
fn hessian(i: &mut Input<'_>, k: usize, data: &mut Vec<f64>) -> Option<qgemm_quant_hessian> {
    let mut len = Out::<usize>::new(i);
    // SAFETY: `len.ptr()` is null or valid for a write of a `usize`.
    let needed = checked("qgemm_quant_hessian_len", unsafe { qgemm_quant_hessian_len(k, len.ptr()) }, &len, &[]);
    *data = canary::<f64>(i.len_near(needed.unwrap_or(0)));
    let (dp, dlen) = output_of(i, data);
    let mut h = Out::<qgemm_quant_hessian>::new(i);
    // SAFETY: `dp` is null or inside `data` for `dlen` elements; `h.ptr()` is null or valid for
    // a write of a `qgemm_quant_hessian`.
    let s = unsafe { qgemm_quant_hessian_init(h.ptr(), dp, dlen, k) };
    let mut h = match checked("qgemm_quant_hessian_init", s, &h, &[bytes_of(data)]) {
        Some(h) => h,
        None if rarely(i, 4) => qgemm_quant_hessian { data: dp, len: dlen, k: i.dim(64), rows: i.upto(4) },
        None => return None,
    };
    for _ in 0..i.upto(2) {
        let m = i.dim(8);
        let stride = i.stride(k);
        let x: Vec<f32> = i.near(m.saturating_sub(1).saturating_mul(stride).saturating_add(k));
        let (xp, xlen) = input_of(i, &x);
        let (before, data_before) = (h, data.clone());
        // SAFETY: `h` is a live struct whose `data` is null or inside `data` (or made up, with
        // a length at most `data`'s: the library checks the rest); `xp` is inside `x`.
        let s = unsafe { qgemm_quant_hessian_add(&raw mut h, xp, xlen, m, stride) };
        if s != qgemm_status::QGEMM_OK {
            assert!((before.rows, before.len, before.k) == (h.rows, h.len, h.k), "qgemm_quant_hessian_add: {s:?}");
            assert!(bytes_of(&data_before) == bytes_of(data), "qgemm_quant_hessian_add: {s:?} but wrote data");
        }
    }
    Some(h)
}

/// One quantizer of [`QUANTIZERS`], plain or GPTQ; or the Hessian functions; or
/// `qgemm_quant_divide_depths`.
pub fn run(i: &mut Input<'_>) {
    match i.byte() % 8 {
        0 => return hessian_functions(i),
        1 => return divide_depths(i),
        _ => {}
    }
    let q = &QUANTIZERS[i.upto(QUANTIZERS.len() - 1)];
    let (n, k, bl) = (i.dim(24), i.depth(256), i.block_len());
    let (mut a, mut b) = (Out::<usize>::new(i), Out::<usize>::new(i));
    // SAFETY: `a.ptr()`, `b.ptr()` are null or valid for a write of a `usize` (misaligned:
    // rejected before any write).
    let s = unsafe { (q.sizes)(n, k, bl, a.ptr(), b.ptr()) };
    let lens = if check_status(q.name, s, &[a.bytes(), b.bytes()]) { (a.get(), b.get()) } else { (0, 0) };
    let w = weights(i, n, k);
    let importance: Vec<f32> = i.near(k);
    let lut: [i32; 4] = core::array::from_fn(|_| i32::from(i.byte() as i8) >> 1);
    let method = if rarely(i, 16) { u32::from(i.byte()) } else { i.upto(4) as u32 };
    let e = Extra {
        method,
        importance: if rarely(i, 3) { (core::ptr::null(), 0) } else { input_of(i, &importance) },
        lut: if rarely(i, 2) { core::ptr::null() } else { lut.as_ptr() },
    };
    let len = [lens.0, lens.1, lens.1];
    let mut bufs = Vec::new();
    for (&elem, &need) in q.elems.iter().zip(&len) {
        let l = if elem == 0 { 0 } else { i.len_near(need) };
        bufs.push(Buf::new(i, elem, l));
    }
    let outs: Outs = core::array::from_fn(|j| if q.elems[j] == 0 { (core::ptr::null_mut(), 0) } else { bufs[j].arg });
    let wp = if rarely(i, 32) { core::ptr::null() } else { &raw const w.w };
    let s = match q.gptq.filter(|_| rarely(i, 2)) {
        None => {
            // SAFETY: `wp` is null or a live struct whose `data` is null or inside its storage
            // for `len` elements of its type (one byte in: rejected as misaligned); `e`'s
            // pointers are null or inside `importance` / `lut`; `outs` inside `bufs`.
            unsafe { (q.plain)((n, k, bl), wp, e, outs) }
        }
        Some(f) => {
            let mut data = Vec::new();
            let h = hessian(i, k, &mut data);
            let hp = h.as_ref().map_or(core::ptr::null(), |h| h as *const _);
            let mut wl = Out::<usize>::new(i);
            // SAFETY: `wl.ptr()` is null or valid for a write of a `usize`.
            let s = unsafe { qgemm_quant_gptq_workspace_len(n, k, wl.ptr()) };
            let wneed = checked("qgemm_quant_gptq_workspace_len", s, &wl, &[]).unwrap_or(0);
            let mut work = canary::<f64>(i.len_near(wneed));
            let damp = if rarely(i, 8) { f32::from_bits(u32::from(i.byte()) << 23 | 1) } else { 0.01 };
            let g = Gptq { hessian: hp, damp, work: output_of(i, &mut work) };
            // The workspace is scratch (it may be written before a late error): not checked.
            // SAFETY: as above; `hp` is null or a live struct over `data` (or made up, its
            // length at most `data`'s); `g.work` inside `work`.
            unsafe { f((n, k, bl), wp, e, g, outs) }
        }
    };
    let outs: Vec<&[u8]> = bufs.iter().map(Buf::bytes).collect();
    check_status(q.name, s, &outs);
}

/// `qgemm_quant_hessian_diagonal` and `_scale_inputs` on a drawn Hessian.
fn hessian_functions(i: &mut Input<'_>) {
    let k = i.dim(40);
    let mut data = Vec::new();
    let Some(h) = hessian(i, k, &mut data) else { return };
    let hp = if rarely(i, 16) { core::ptr::null() } else { &raw const h };
    if rarely(i, 2) {
        let mut out = canary::<f32>(i.len_near(k));
        let (op, olen) = output_of(i, &mut out);
        // SAFETY: `hp` is null or a live struct over `data`; `op` inside `out` for `olen`.
        let s = unsafe { qgemm_quant_hessian_diagonal(hp, op, olen) };
        check_status("qgemm_quant_hessian_diagonal", s, &[bytes_of(&out)]);
    } else {
        let scale: Vec<f32> = i.near(k);
        let (sp, slen) = input_of(i, &scale);
        let before = data.clone();
        // SAFETY: as above; `sp` inside `scale` for `slen`.
        let s = unsafe { qgemm_quant_hessian_scale_inputs(hp, sp, slen) };
        check_status("qgemm_quant_hessian_scale_inputs", s, &[]);
        if s != qgemm_status::QGEMM_OK {
            assert!(bytes_of(&before) == bytes_of(&data), "qgemm_quant_hessian_scale_inputs: {s:?} but wrote data");
        }
    }
}

/// `qgemm_quant_divide_depths` on drawn weights and scales: the weights unchanged on an error.
fn divide_depths(i: &mut Input<'_>) {
    let (n, k) = (i.dim(24), i.dim(64));
    let layout = layout(i);
    let stride = i.stride(row_len(layout, n, k));
    let mut w: Vec<f32> = i.near(matrix_len(layout, n, k, stride));
    let scale: Vec<f32> = i.near(k);
    let before = w.clone();
    let (wp, wlen) = output_of(i, &mut w);
    let (sp, slen) = input_of(i, &scale);
    // SAFETY: `wp` is null or inside `w` for `wlen` elements, `sp` inside `scale` for `slen`.
    let s = unsafe { qgemm_quant_divide_depths(n, k, wp, wlen, layout, stride, sp, slen) };
    if s != qgemm_status::QGEMM_OK {
        assert!(bytes_of(&before) == bytes_of(&w), "qgemm_quant_divide_depths: {s:?} but wrote the weights");
    }
}
