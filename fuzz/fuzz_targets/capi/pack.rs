//! Layer 1's packers through their C wrappers: every LHS and RHS packer (quantized and float)
//! with its `_packed_size` and `_packed_offset`, and the operator's weight functions
//! (`qgemm_linear_quantize_workspace_size`, `_quantize_pack`, `_pack`, `_pack_u16`,
//! `_set_input_scale`). Drawn shapes, packings (a kernel's or arbitrary; null or misaligned),
//! layouts, strides, sources (null, misaligned, short), bias or none; the packed buffer near the
//! size the library reports. Every error status must leave every output untouched.

use qgemm::half::f16;
use qgemm_capi::api::float::*;
use qgemm_capi::api::linear::*;
use qgemm_capi::api::*;
use qgemm_capi::status::qgemm_status;

use super::quant::{Buf, layout, matrix_len, row_len};
use super::{Out, check_status, checked, input_of, output_of, rarely};
use crate::common::{Input, canary};

// The `unsafe fn` types of the tables below (`Query`, `LinearPack`, the `pack` fields) share one
// contract, `forward!`'s premise. # Safety: every pointer argument is null or points into a
// live allocation holding at least the length passed with it (in elements of the C function's
// type) from that point; a struct pointer is null or a live struct whose pointers obey the same
// rule; an out pointer with no length is null or has room for its value (`Out`). Alignment,
// nulls and lengths shorter than the callee needs may be anything: the callee checks them.
type Query = unsafe fn(*const qgemm_packing, usize, usize, usize, *mut usize) -> qgemm_status;
type FloatQuery = unsafe extern "C" fn(usize, usize, *mut usize) -> qgemm_status;
/// A source `(pointer, length in its elements)`.
type Src = (*const u8, usize);
type Dst = (*mut u8, usize);

/// Calls a size or offset function `f` with a drawn out pointer (null, misaligned or valid):
/// its answer, or 0 after an error.
fn ask(i: &mut Input<'_>, name: &str, f: impl FnOnce(*mut usize) -> qgemm_status) -> usize {
    let mut out = Out::<usize>::new(i);
    checked(name, f(out.ptr()), &out, &[]).unwrap_or(0)
}

/// A drawn packing struct, `None` for a null pointer.
fn packing(i: &mut Input<'_>) -> Option<qgemm_packing> {
    let p = i.packing();
    (!rarely(i, 16)).then_some(qgemm_packing { mr: p.mr, nr: p.nr, kr: p.kr, sr: p.sr })
}

/// A packing pointer over `p`: null, or `p`, or one byte into it (misaligned).
fn packing_ptr(i: &mut Input<'_>, p: &Option<qgemm_packing>) -> *const qgemm_packing {
    p.as_ref().map_or(core::ptr::null(), |p| input_of(i, core::slice::from_ref(p)).0)
}

/// A quantizing LHS packer: `pack(packing, [m, k, bl, m_idx_start], lhs, lhs_stride, out)`,
/// `lhs` of `elem`-byte values.
struct QLhs {
    name: &'static str,
    size: Query,
    offset: Query,
    elem: usize,
    pack: unsafe fn(*const qgemm_packing, [usize; 4], Src, usize, Dst) -> qgemm_status,
}

// Each entry forwards its arguments to the function it names (`forward!`, whose proof is there).
const QLHS: [QLhs; 6] = [
    QLhs {
        name: "qgemm_lhs_qai8dxp_quantize_pack",
        size: |p, m, k, _, o| forward!(qgemm_lhs_qai8dxp_packed_size(p, m, k, o)),
        offset: |p, m, k, _, o| forward!(qgemm_lhs_qai8dxp_packed_offset(p, m, k, o)),
        elem: 4,
        pack: |p, [m, k, _, mi], s, st, o| {
            forward!(qgemm_lhs_qai8dxp_quantize_pack(p, m, k, mi, s.0.cast(), s.1, st, o.0, o.1))
        },
    },
    QLhs {
        name: "qgemm_lhs_qai8dxp_quantize_pack_f16",
        size: |p, m, k, _, o| forward!(qgemm_lhs_qai8dxp_packed_size(p, m, k, o)),
        offset: |p, m, k, _, o| forward!(qgemm_lhs_qai8dxp_packed_offset(p, m, k, o)),
        elem: 2,
        pack: |p, [m, k, _, mi], s, st, o| {
            forward!(qgemm_lhs_qai8dxp_quantize_pack_f16(p, m, k, mi, s.0.cast(), s.1, st, o.0, o.1))
        },
    },
    QLhs {
        name: "qgemm_lhs_qai8dxp_quantize_pack_bf16",
        size: |p, m, k, _, o| forward!(qgemm_lhs_qai8dxp_packed_size(p, m, k, o)),
        offset: |p, m, k, _, o| forward!(qgemm_lhs_qai8dxp_packed_offset(p, m, k, o)),
        elem: 2,
        pack: |p, [m, k, _, mi], s, st, o| {
            forward!(qgemm_lhs_qai8dxp_quantize_pack_bf16(p, m, k, mi, s.0.cast(), s.1, st, o.0, o.1))
        },
    },
    QLhs {
        name: "qgemm_lhs_qsi8d32p_quantize_pack",
        size: |p, m, k, bl, o| forward!(qgemm_lhs_qsi8d32p_packed_size(p, m, k, bl, o)),
        offset: |p, m, k, bl, o| forward!(qgemm_lhs_qsi8d32p_packed_offset(p, m, k, bl, o)),
        elem: 4,
        pack: |p, [m, k, bl, mi], s, st, o| {
            forward!(qgemm_lhs_qsi8d32p_quantize_pack(p, m, k, bl, mi, s.0.cast(), s.1, st, o.0, o.1))
        },
    },
    QLhs {
        name: "qgemm_lhs_qsi8d32pscalef32_quantize_pack",
        size: |p, m, k, bl, o| forward!(qgemm_lhs_qsi8d32pscalef32_packed_size(p, m, k, bl, o)),
        offset: |p, m, k, bl, o| forward!(qgemm_lhs_qsi8d32pscalef32_packed_offset(p, m, k, bl, o)),
        elem: 4,
        pack: |p, [m, k, bl, mi], s, st, o| {
            forward!(qgemm_lhs_qsi8d32pscalef32_quantize_pack(p, m, k, bl, mi, s.0.cast(), s.1, st, o.0, o.1))
        },
    },
    QLhs {
        name: "qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16",
        size: |p, m, k, bl, o| forward!(qgemm_lhs_qsi8d32pscalef32_packed_size(p, m, k, bl, o)),
        offset: |p, m, k, bl, o| forward!(qgemm_lhs_qsi8d32pscalef32_packed_offset(p, m, k, bl, o)),
        elem: 2,
        pack: |p, [m, k, bl, mi], s, st, o| {
            forward!(qgemm_lhs_qsi8d32pscalef32_quantize_pack_f16(p, m, k, bl, mi, s.0.cast(), s.1, st, o.0, o.1))
        },
    },
];

/// Every input an RHS packer may take (each row's closure passes the ones its function has).
#[derive(Clone, Copy)]
struct RhsIn {
    int4: *const qgemm_int4_source,
    int8: *const qgemm_int8_source,
    raw: (*const u8, usize, usize),
    scale: (*const f32, usize),
    scale_bf16: (*const u16, usize, usize),
    zero: (*const f32, usize),
    bias: (*const f32, usize),
    lut: *const i32,
}

/// A quantized RHS packer; `raw_row` is the byte length of one row of its raw source
/// (`k`, `bl`), `int8` whether its source struct holds bytes per value (else nibbles),
/// `blocked` whether its float scales are per block.
struct QRhs {
    name: &'static str,
    size: Query,
    offset: Query,
    raw_row: fn(usize, usize) -> usize,
    int8: bool,
    blocked: bool,
    pack: unsafe fn(*const qgemm_packing, [usize; 3], &RhsIn, Dst) -> qgemm_status,
}

const QRHS: [QRhs; 6] = [
    QRhs {
        name: "qgemm_rhs_qsi4cxp_pack",
        size: |p, n, k, _, o| forward!(qgemm_rhs_qsi4cxp_packed_size(p, n, k, o)),
        offset: |p, n, k, _, o| forward!(qgemm_rhs_qsi4cxp_packed_offset(p, n, k, o)),
        raw_row: |k, _| k.div_ceil(2),
        int8: false,
        blocked: false,
        pack: |p, [n, k, _], r, o| {
            forward!(qgemm_rhs_qsi4cxp_pack(p, n, k, r.int4, r.scale.0, r.scale.1, r.bias.0, r.bias.1, o.0, o.1))
        },
    },
    QRhs {
        name: "qgemm_rhs_qsi8cxp_pack",
        size: |p, n, k, _, o| forward!(qgemm_rhs_qsi8cxp_packed_size(p, n, k, o)),
        offset: |p, n, k, _, o| forward!(qgemm_rhs_qsi8cxp_packed_offset(p, n, k, o)),
        raw_row: |k, _| k,
        int8: true,
        blocked: false,
        pack: |p, [n, k, _], r, o| {
            forward!(qgemm_rhs_qsi8cxp_pack(p, n, k, r.int8, r.scale.0, r.scale.1, r.bias.0, r.bias.1, o.0, o.1))
        },
    },
    QRhs {
        name: "qgemm_rhs_qsi4c32p_pack",
        size: |p, n, k, bl, o| forward!(qgemm_rhs_qsi4c32p_packed_size(p, n, k, bl, o)),
        offset: |p, n, k, bl, o| forward!(qgemm_rhs_qsi4c32p_packed_offset(p, n, k, bl, o)),
        raw_row: |k, _| k.div_ceil(2),
        int8: false,
        blocked: false,
        pack: |p, [n, k, bl], r, o| {
            forward!({
                let (s, sl, ss) = r.scale_bf16;
                qgemm_rhs_qsi4c32p_pack(p, n, k, bl, r.int4, s, sl, ss, r.bias.0, r.bias.1, o.0, o.1)
            })
        },
    },
    QRhs {
        name: "qgemm_rhs_qsi4c32pscalef16_pack",
        size: |p, n, k, bl, o| forward!(qgemm_rhs_qsi4c32pscalef16_packed_size(p, n, k, bl, o)),
        offset: |p, n, k, bl, o| forward!(qgemm_rhs_qsi4c32pscalef16_packed_offset(p, n, k, bl, o)),
        raw_row: |k, bl| (k / bl.max(1)).saturating_mul(2 + bl / 2),
        int8: false,
        blocked: false,
        pack: |p, [n, k, bl], r, o| {
            forward!(qgemm_rhs_qsi4c32pscalef16_pack(p, n, k, bl, r.raw.0, r.raw.1, r.raw.2, o.0, o.1))
        },
    },
    QRhs {
        name: "qgemm_rhs_qai4c32p_pack",
        size: |p, n, k, bl, o| forward!(qgemm_rhs_qai4c32p_packed_size(p, n, k, bl, o)),
        offset: |p, n, k, bl, o| forward!(qgemm_rhs_qai4c32p_packed_offset(p, n, k, bl, o)),
        raw_row: |k, _| k.div_ceil(2),
        int8: false,
        blocked: true,
        pack: |p, [n, k, bl], r, o| {
            forward!({
                let ((rp, rl, rs), (z, zl), (s, sl), (b, bll)) = (r.raw, r.zero, r.scale, r.bias);
                qgemm_rhs_qai4c32p_pack(p, n, k, bl, rp, rl, rs, z, zl, s, sl, b, bll, o.0, o.1)
            })
        },
    },
    QRhs {
        name: "qgemm_rhs_qsu2cxp_pack",
        size: |p, n, k, _, o| forward!(qgemm_rhs_qsu2cxp_packed_size(p, n, k, o)),
        offset: |p, n, k, _, o| forward!(qgemm_rhs_qsu2cxp_packed_offset(p, n, k, o)),
        raw_row: |k, _| k.div_ceil(4),
        int8: false,
        blocked: false,
        pack: |p, [n, k, _], r, o| {
            forward!({
                let ((rp, rl, rs), (s, sl), (b, bll)) = (r.raw, r.scale, r.bias);
                qgemm_rhs_qsu2cxp_pack(p, n, k, rp, rl, rs, s, sl, b, bll, r.lut, o.0, o.1)
            })
        },
    },
];

/// A float packer: `pack(n or m, k, src, layout, stride, bias, out)` (the LHS packers ignore
/// the layout and bias); `elem` / `bias_elem` the bytes of a source / bias value (0: no bias).
struct FPack {
    name: &'static str,
    size: FloatQuery,
    offset: FloatQuery,
    elem: usize,
    bias_elem: usize,
    pack: unsafe fn([usize; 2], Src, u32, usize, Src, Dst) -> qgemm_status,
}

macro_rules! rhs_float {
    ($name:literal, $size:ident, $offset:ident, $pack:ident, $elem:literal, $bias:literal) => {
        FPack {
            name: $name,
            size: $size,
            offset: $offset,
            elem: $elem,
            bias_elem: $bias,
            pack: |[n, k], s, l, st, b, o| forward!($pack(n, k, s.0.cast(), s.1, l, st, b.0.cast(), b.1, o.0, o.1)),
        }
    };
}

macro_rules! lhs_float {
    ($name:literal, $size:ident, $offset:ident, $pack:ident, $elem:literal) => {
        FPack {
            name: $name,
            size: $size,
            offset: $offset,
            elem: $elem,
            bias_elem: 0,
            pack: |[m, k], s, _, st, _, o| forward!($pack(m, k, s.0.cast(), s.1, st, o.0, o.1)),
        }
    };
}

#[rustfmt::skip]
const FLOAT: [FPack; 11] = [
    rhs_float!("qgemm_rhs_f32p16_pack", qgemm_rhs_f32p16_packed_size, qgemm_rhs_f32p16_packed_offset, qgemm_rhs_f32p16_pack, 4, 4),
    rhs_float!("qgemm_rhs_f32p8_pack", qgemm_rhs_f32p8_packed_size, qgemm_rhs_f32p8_packed_offset, qgemm_rhs_f32p8_pack, 4, 4),
    rhs_float!("qgemm_rhs_f16p32_pack", qgemm_rhs_f16p32_packed_size, qgemm_rhs_f16p32_packed_offset, qgemm_rhs_f16p32_pack, 2, 2),
    rhs_float!("qgemm_rhs_f16p16_pack", qgemm_rhs_f16p16_packed_size, qgemm_rhs_f16p16_packed_offset, qgemm_rhs_f16p16_pack, 2, 2),
    rhs_float!("qgemm_rhs_bf16p12_b32_pack", qgemm_rhs_bf16p12_b32_packed_size, qgemm_rhs_bf16p12_b32_packed_offset, qgemm_rhs_bf16p12_b32_pack, 4, 4),
    rhs_float!("qgemm_rhs_bf16p12_b32_pack_f16", qgemm_rhs_bf16p12_b32_packed_size, qgemm_rhs_bf16p12_b32_packed_offset, qgemm_rhs_bf16p12_b32_pack_f16, 2, 4),
    rhs_float!("qgemm_rhs_bf16p12_b16_pack", qgemm_rhs_bf16p12_b16_packed_size, qgemm_rhs_bf16p12_b16_packed_offset, qgemm_rhs_bf16p12_b16_pack, 2, 2),
    lhs_float!("qgemm_lhs_bf16p1x4_pack", qgemm_lhs_bf16p1x4_packed_size, qgemm_lhs_bf16p1x4_packed_offset, qgemm_lhs_bf16p1x4_pack, 4),
    lhs_float!("qgemm_lhs_bf16p1x4_pack_f16", qgemm_lhs_bf16p1x4_packed_size, qgemm_lhs_bf16p1x4_packed_offset, qgemm_lhs_bf16p1x4_pack_f16, 2),
    lhs_float!("qgemm_lhs_bf16p8x4_pack", qgemm_lhs_bf16p8x4_packed_size, qgemm_lhs_bf16p8x4_packed_offset, qgemm_lhs_bf16p8x4_pack, 4),
    lhs_float!("qgemm_lhs_bf16p8x4_pack_f16", qgemm_lhs_bf16p8x4_packed_size, qgemm_lhs_bf16p8x4_packed_offset, qgemm_lhs_bf16p8x4_pack_f16, 2),
];

/// `len` drawn values of `elem` bytes (4: f32, 2: f16 bits) in aligned storage, and a C
/// source over them (null, misaligned, or as is).
fn values(i: &mut Input<'_>, elem: usize, len: usize) -> (Vec<f32>, Vec<f16>, Src) {
    if elem == 4 {
        let v: Vec<f32> = i.values(len);
        let (p, l) = input_of(i, &v);
        (v, Vec::new(), (p.cast(), l))
    } else {
        let v: Vec<f16> = i.values(len);
        let (p, l) = input_of(i, &v);
        (Vec::new(), v, (p.cast(), l))
    }
}

/// The packed buffer for `needed` bytes, the call through it, and the check.
fn pack_into(i: &mut Input<'_>, name: &str, needed: usize, call: impl FnOnce(Dst) -> qgemm_status) {
    let len = i.len_near(needed);
    let out = Buf::new(i, 1, len);
    let s = call(out.arg());
    check_status(name, s, &[out.bytes()]);
}

fn quantized_lhs(i: &mut Input<'_>) {
    let q = &QLHS[i.upto(QLHS.len() - 1)];
    let p = packing(i);
    let (m, k, bl, mi) = (i.dim(12), i.depth(256), i.block_len(), if rarely(i, 4) { i.dim(16) } else { 0 });
    let pp = packing_ptr(i, &p);
    // SAFETY: `pp` is null or points at (or one byte into: rejected) `p`; the out pointer is
    // null or valid for a write of a `usize` (`ask`).
    let needed = ask(i, q.name, |o| unsafe { (q.size)(pp, m.saturating_add(mi), k, bl, o) });
    let idx = i.dim(16);
    // SAFETY: as above.
    ask(i, q.name, |o| unsafe { (q.offset)(pp, idx, k, bl, o) });
    let stride = i.stride(k);
    let rows_len = m.saturating_sub(1).saturating_mul(stride).saturating_add(k);
    let len = i.len_near(rows_len);
    let (_f, _h, src) = values(i, q.elem, len);
    let pp = packing_ptr(i, &p);
    // SAFETY: `pp` as above; `src` null or inside its storage for its length; the output
    // inside its buffer (`pack_into`).
    pack_into(i, q.name, needed, |o| unsafe { (q.pack)(pp, [m, k, bl, mi], src, stride, o) });
}

fn quantized_rhs(i: &mut Input<'_>) {
    let q = &QRHS[i.upto(QRHS.len() - 1)];
    let p = packing(i);
    let (n, k, bl) = (i.dim(24), i.depth(256), i.block_len());
    let pp = packing_ptr(i, &p);
    // SAFETY: as in `quantized_lhs`.
    let needed = ask(i, q.name, |o| unsafe { (q.size)(pp, n, k, bl, o) });
    let idx = i.dim(32);
    // SAFETY: as above.
    ask(i, q.name, |o| unsafe { (q.offset)(pp, idx, k, bl, o) });
    // The source: the structs' layout and encoding drawn, the raw rows NxK.
    let layout = layout(i);
    let row = row_len(layout, n, k);
    let (packed_row, raw_row) = (if q.int8 { row } else { row.div_ceil(2) }, (q.raw_row)(k, bl));
    let stride = i.stride(packed_row);
    let data = i.bytes_near(matrix_len(layout, n, k, stride));
    let (dp, dlen) = input_of(i, &data);
    let encoding = if rarely(i, 8) { u32::from(i.byte()) } else { i.upto(1) as u32 };
    let int4 = qgemm_int4_source { data: dp, len: dlen, layout, stride, encoding };
    let int8 = qgemm_int8_source { data: dp.cast(), len: dlen, layout, stride };
    let raw_stride = i.stride(raw_row);
    let raw = i.bytes_near(n.saturating_sub(1).saturating_mul(raw_stride).saturating_add(raw_row));
    let blocks = k / bl.max(1);
    let scale_stride = i.stride(blocks);
    let scale: Vec<f32> = i.near(if q.blocked { n.saturating_mul(blocks) } else { n });
    let scale_bf16: Vec<f16> = i.near(n.saturating_sub(1).saturating_mul(scale_stride).saturating_add(blocks));
    let zero: Vec<f32> = i.near(n.saturating_mul(blocks));
    let bias = i.bias::<f32>(n);
    let lut: [i32; 4] = core::array::from_fn(|_| i32::from(i.byte() as i8) >> 1);
    let (rp, rl) = input_of(i, &raw);
    let (sb, sbl) = input_of(i, &scale_bf16);
    let r = RhsIn {
        int4: if rarely(i, 32) { core::ptr::null() } else { &raw const int4 },
        int8: if rarely(i, 32) { core::ptr::null() } else { &raw const int8 },
        raw: (rp, rl, raw_stride),
        scale: input_of(i, &scale),
        scale_bf16: (sb.cast(), sbl, scale_stride),
        zero: input_of(i, &zero),
        bias: bias.as_ref().map_or((core::ptr::null(), 0), |b| input_of(i, b)),
        lut: if rarely(i, 2) { core::ptr::null() } else { lut.as_ptr() },
    };
    let pp = packing_ptr(i, &p);
    // SAFETY: `pp` as above; every pointer of `r` is null or inside (or one byte into, one
    // element fewer) its live storage for the length passed with it; the structs' `data`
    // inside `data`; the output inside its buffer.
    pack_into(i, q.name, needed, |o| unsafe { (q.pack)(pp, [n, k, bl], &r, o) });
}

fn float(i: &mut Input<'_>) {
    let f = &FLOAT[i.upto(FLOAT.len() - 1)];
    let (n, k) = (i.dim(40), i.dim(96));
    // SAFETY: the out pointer is null or valid for a write of a `usize` (`ask`).
    let needed = ask(i, f.name, |o| unsafe { (f.size)(n, k, o) });
    let idx = i.dim(48);
    // SAFETY: as above.
    ask(i, f.name, |o| unsafe { (f.offset)(idx, k, o) });
    let layout = if f.bias_elem == 0 { QGEMM_LAYOUT_NXK } else { layout(i) };
    let stride = i.stride(row_len(layout, n, k));
    let len = i.len_near(matrix_len(layout, n, k, stride));
    let (_f, _h, src) = values(i, f.elem, len);
    let bias_len = if f.bias_elem == 0 || rarely(i, 2) { None } else { Some(i.len_near(n)) };
    let (_bf, _bh, bias) = values(i, f.bias_elem.max(2), bias_len.unwrap_or(0));
    let bias = if bias_len.is_some() { bias } else { (core::ptr::null(), 0) };
    // SAFETY: `src` and `bias` are null or inside their live storage for their lengths (in
    // elements of the function's types); the output inside its buffer.
    pack_into(i, f.name, needed, |o| unsafe { (f.pack)([n, k], src, layout, stride, bias, o) });
}

/// A family code: a valid one mostly, else any.
fn family(i: &mut Input<'_>) -> u32 {
    if rarely(i, 16) { u32::from_le_bytes([i.byte(), i.byte(), 0, 0]) } else { i.upto(14) as u32 }
}

type LinearPack = unsafe fn(u32, (Src, u32, usize), [usize; 2], Src, Dst, *mut qgemm_linear) -> qgemm_status;

const LINEAR_PACK: [(&str, usize, LinearPack); 2] = [
    ("qgemm_linear_pack", 4, |f, ((w, wl), l, st), [n, k], (b, bl), (o, ol), out| {
        forward!(qgemm_linear_pack(f, w.cast(), wl, l, st, n, k, b.cast(), bl, o, ol, out))
    }),
    ("qgemm_linear_pack_u16", 2, |f, ((w, wl), l, st), [n, k], (b, bl), (o, ol), out| {
        forward!(qgemm_linear_pack_u16(f, w.cast(), wl, l, st, n, k, b.cast(), bl, o, ol, out))
    }),
];

/// The operator's weight functions: `quantize_pack` (with `quantize_workspace_size`) or
/// `pack` / `_u16` into a buffer near `qgemm_linear_packed_size`, then `set_input_scale` on
/// the layer made.
fn linear(i: &mut Input<'_>) {
    let code = family(i);
    let (n, k, bl) = (i.dim(24), i.depth(256), i.block_len());
    // SAFETY: the out pointer is null or valid for a write of a `usize` (`ask`).
    let needed = ask(i, "qgemm_linear_packed_size", |o| unsafe { qgemm_linear_packed_size(code, n, k, bl, o) });
    let layout = layout(i);
    let stride = i.stride(row_len(layout, n, k));
    let wlen = i.len_near(matrix_len(layout, n, k, stride));
    let bias_len = if rarely(i, 2) { None } else { Some(i.len_near(n)) };
    let buf_len = i.len_near(needed);
    let buf = Buf::new(i, 1, buf_len);
    let mut layer = Out::<qgemm_linear>::new(i);
    let _keep;
    // `pack` on a used-up input (fewer draws), `quantize_pack` else.
    let s = if i.byte().is_multiple_of(2) {
        let (name, elem, f) = LINEAR_PACK[i.upto(1)];
        let (wf, wh, w) = values(i, elem, wlen);
        let (bf, bh, b) = values(i, elem, bias_len.unwrap_or(0));
        let b = if bias_len.is_some() { b } else { (core::ptr::null(), 0) };
        _keep = (wf, wh, bf, bh);
        // SAFETY: `w` and `b` are null or inside their live storage for their lengths; the
        // buffer inside `buf`; `layer.ptr()` null or valid for a write of a `qgemm_linear`.
        let s = unsafe { f(code, (w, layout, stride), [n, k], b, buf.arg(), layer.ptr()) };
        (name, s)
    } else {
        // SAFETY: as above.
        let ws = ask(i, "qgemm_linear_quantize_workspace_size", |o| unsafe {
            qgemm_linear_quantize_workspace_size(code, n, k, bl, o)
        });
        let mut work = canary::<u8>(i.len_near(ws));
        let (wf, _, w) = values(i, 4, wlen);
        let (bf, _, b) = values(i, 4, bias_len.unwrap_or(0));
        let b = if bias_len.is_some() { b } else { (core::ptr::null(), 0) };
        let importance: Vec<f32> = i.near(k);
        let imp = if rarely(i, 2) { (core::ptr::null(), 0) } else { input_of(i, &importance) };
        let method = if rarely(i, 16) { u32::from(i.byte()) } else { i.upto(3) as u32 };
        let (wsp, wsl) = output_of(i, &mut work);
        let (bp, bl_) = buf.arg();
        _keep = (wf, Vec::new(), bf, Vec::new());
        // SAFETY: every pointer is null or inside its live storage for the length passed
        // with it; `layer.ptr()` as above. `importance` and `work` outlive the call.
        let s = unsafe {
            qgemm_linear_quantize_pack(
                code,
                w.0.cast(),
                w.1,
                layout,
                stride,
                n,
                k,
                bl,
                method,
                imp.0,
                imp.1,
                b.0.cast(),
                b.1,
                wsp,
                wsl,
                bp,
                bl_,
                layer.ptr(),
            )
        };
        ("qgemm_linear_quantize_pack", s)
    };
    let Some(mut l) = checked(s.0, s.1, &layer, &[buf.bytes()]) else { return };
    let scale: Vec<f32> = i.near(k);
    let (sp, sl) = if rarely(i, 4) { (core::ptr::null(), i.upto(2)) } else { input_of(i, &scale) };
    if rarely(i, 8) {
        l.family = u32::from(i.byte());
    }
    let before = l;
    let lp = if rarely(i, 16) { core::ptr::null_mut() } else { &raw mut l };
    // SAFETY: `lp` is null or a live `qgemm_linear` (its weights in `buf`, still alive); `sp`
    // is null or inside `scale` for `sl` values.
    let s = unsafe { qgemm_linear_set_input_scale(lp, sp, sl) };
    if s != qgemm_status::QGEMM_OK {
        let same = (before.input_scale, before.input_scale_len) == (l.input_scale, l.input_scale_len);
        assert!(same, "qgemm_linear_set_input_scale: {s:?} but wrote the layer");
    }
}

pub fn run(i: &mut Input<'_>) {
    match i.byte() % 4 {
        0 => quantized_lhs(i),
        1 => quantized_rhs(i),
        2 => float(i),
        _ => linear(i),
    }
}
