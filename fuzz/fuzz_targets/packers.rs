//! Every LHS and RHS packer (quantized and float) on fuzzer-chosen packings, shapes, starts,
//! strides, block lengths, buffer lengths and input bits (NaN, infinities, subnormals): each
//! returns `Ok` or an `Error`, never panics or touches memory outside its slices (ASan), and
//! a rejected call leaves its output untouched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qgemm::half::{bf16, f16};
use qgemm::lhs::{bf16p, qai8dxp, qsi8d32p, qsi8d32pscalef32};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::Int8Source;
use qgemm::rhs::{
    FloatSource, Int4Encoding, Int4Source, Layout, bf16p12, f16p, f32p, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp,
    qsi8cxp, qsu2cxp,
};
use qgemm::{Element, LhsFormat, Packing, RhsFormat};

#[path = "common.rs"]
mod common;
use common::{Input, canary, check};

/// Elements of `rows` rows of `row` elements `stride` apart (saturating: the packers reject
/// what does not fit).
fn extent(rows: usize, row: usize, stride: usize) -> usize {
    rows.saturating_sub(1).saturating_mul(stride).saturating_add(row)
}

fn lhs(sel: u8, i: &mut Input<'_>, p: Packing, m: usize, k: usize, bl: usize) {
    use LhsFormat::*;
    const FORMATS: [LhsFormat; 10] =
        [Qai8dxp, Qai8dxp, Qai8dxp, Qai8dxp, Qsi8d32p, Qsi8d32pscalef32, Qsi8d32pscalef32, Bf16p, Bf16p, Bf16p];
    let sel = usize::from(sel) % FORMATS.len();
    let format = p.lhs(FORMATS[sel]);
    let bl = if !(4..=6).contains(&sel) { 0 } else { bl };
    let at = if i.one_in(4) { i.upto(40) } else { p.mr.saturating_mul(i.upto(3)) };
    let stride = i.stride(k);
    let len = i.len_near(extent(m, k, stride));
    let rows = m.saturating_add(at % p.mr.max(1));
    let size = format.packed_size(rows, k, bl).unwrap_or(0);
    let _ = (format.packed_offset(at, k, bl), format.tile_stride(k, bl), bf16p::tail_truncated(&format));
    let out_len = i.len_near(size);
    let mut out = canary(out_len);
    let r = match sel {
        0 => qai8dxp::quantize_pack(&p, m, k, at, &i.values(len), stride, &mut out),
        1 => {
            let scale = i.near::<f32>(k);
            qai8dxp::quantize_pack_scaled(&p, m, k, at, &i.values(len), stride, &scale, &mut out)
        }
        2 => qai8dxp::quantize_pack_f16(&p, m, k, at, &i.values(len), stride, &mut out),
        3 => qai8dxp::quantize_pack_bf16(&p, m, k, at, &i.values(len), stride, &mut out),
        4 => qsi8d32p::quantize_pack(&p, m, k, bl, at, &i.values(len), stride, &mut out),
        5 => qsi8d32pscalef32::quantize_pack(&p, m, k, bl, at, &i.values(len), stride, &mut out),
        6 => qsi8d32pscalef32::quantize_pack_f16(&p, m, k, bl, at, &i.values(len), stride, &mut out),
        7 => bf16p::pack::<f32>(&format, m, k, &i.values(len), stride, &mut out),
        8 => bf16p::pack::<f16>(&format, m, k, &i.values(len), stride, &mut out),
        _ => bf16p::pack::<bf16>(&format, m, k, &i.values(len), stride, &mut out),
    };
    check(FORMATS[sel].name(), r, &[&out]);
}

fn rhs(sel: u8, i: &mut Input<'_>, p: Packing, n: usize, k: usize, bl: usize) {
    use RhsFormat::*;
    const FORMATS: [RhsFormat; 11] =
        [Qsi4cxp, Qsi4c32p, Qsi4c32pscalef16, Qsi8cxp, Qai4c32p, Qsu2cxp, F32p, F16p, Bf16pB32, Bf16pB32, Bf16pB16];
    let sel = usize::from(sel) % FORMATS.len();
    let format = match FORMATS[sel] {
        Bf16pB32 => bf16p12::BF16P12_B32,
        Bf16pB16 => bf16p12::BF16P12_B16,
        f => p.rhs(f),
    };
    let bl = if matches!(sel, 1 | 2 | 4) { bl } else { 0 };
    let size = format.packed_size(n, k, bl).unwrap_or(0);
    let _ = (format.packed_offset(i.upto(64), k, bl), format.tile_stride(k, bl));
    let out_len = i.len_near(size);
    let mut out = canary(out_len);
    let layout = if i.one_in(2) { Layout::NxK } else { Layout::KxN };
    let (rows, cols) = if layout == Layout::NxK { (n, k) } else { (k, n) };
    let encoding = if i.one_in(2) { Int4Encoding::Signed } else { Int4Encoding::ZeroPoint8 };
    let blocks = k.checked_div(bl).unwrap_or(0);
    // Dense rows of `row` bytes for the formats that take NxK bytes only.
    let nxk_bytes = |i: &mut Input<'_>, row: usize| {
        let stride = i.stride(row);
        (i.bytes_near(extent(n, row, stride)), stride)
    };
    let r = match sel {
        0 | 1 => {
            let stride = i.stride(cols.div_ceil(2));
            let data = i.bytes_near(extent(rows, cols.div_ceil(2), stride));
            let src = Int4Source { data: &data, layout, stride, encoding };
            let bias = i.bias(n);
            if sel == 0 {
                qsi4cxp::pack(&p, n, k, &src, &i.near::<f32>(n), bias.as_deref(), &mut out)
            } else {
                let stride = i.stride(blocks);
                let values = i.near(extent(n, blocks, stride));
                qsi4c32p::pack(&p, n, k, bl, &src, &BlockScales { values: &values, stride }, bias.as_deref(), &mut out)
            }
        }
        2 => {
            let (w, stride) = nxk_bytes(i, blocks.saturating_mul(qsi4c32pscalef16::raw_block_bytes(bl)));
            qsi4c32pscalef16::pack(&p, n, k, bl, &w, stride, &mut out)
        }
        3 => {
            let stride = i.stride(cols);
            let data: Vec<i8> = i.bytes_near(extent(rows, cols, stride)).into_iter().map(|b| b as i8).collect();
            let src = Int8Source { data: &data, layout, stride };
            let bias = i.bias(n);
            qsi8cxp::pack(&p, n, k, &src, &i.near::<f32>(n), bias.as_deref(), &mut out)
        }
        4 => {
            let (w, stride) = nxk_bytes(i, k / 2);
            let (zero, scale) = (i.near::<f32>(n.saturating_mul(blocks)), i.near::<f32>(n.saturating_mul(blocks)));
            let bias = i.bias(n);
            qai4c32p::pack(&p, n, k, bl, &w, stride, &zero, &scale, bias.as_deref(), &mut out)
        }
        5 => {
            let (w, stride) = nxk_bytes(i, k.div_ceil(4));
            let lut = [i.byte() as i8, i.byte() as i8, i.byte() as i8, i.byte() as i8].map(|v| i32::from(v) / 2);
            let (scale, bias) = (i.near::<f32>(n), i.bias(n));
            let lut = if i.one_in(2) { None } else { Some(&lut) };
            qsu2cxp::pack(&p, n, k, &w, stride, &scale, bias.as_deref(), lut, &mut out)
        }
        _ => {
            let stride = i.stride(cols);
            let len = i.len_near(extent(rows, cols, stride));
            let src = (len, layout, stride, n);
            match sel {
                6 => float(i, src, |s, b| f32p::pack(&format, n, k, s, b, &mut out)),
                7 => float(i, src, |s, b| f16p::pack(&format, n, k, s, b, &mut out)),
                8 => float::<f32, f32>(i, src, |s, b| bf16p12::pack_b32(n, k, s, b, &mut out)),
                9 => float::<f16, f32>(i, src, |s, b| bf16p12::pack_b32(n, k, s, b, &mut out)),
                _ => float(i, src, |s, b| bf16p12::pack_b16(n, k, s, b, &mut out)),
            }
        }
    };
    check(FORMATS[sel].name(), r, &[&out]);
}

/// Calls `pack` with `len` weights of `T` (`layout`, rows `stride` apart) and a bias of
/// about `n` values of `B` or none.
fn float<T: Element, B: Element>(
    i: &mut Input<'_>,
    (len, layout, stride, n): (usize, Layout, usize, usize),
    pack: impl FnOnce(&FloatSource<'_, T>, Option<&[B]>) -> qgemm::Result<()>,
) -> qgemm::Result<()> {
    let data = i.values(len);
    let bias = i.bias(n);
    pack(&FloatSource { data: &data, layout, stride }, bias.as_deref())
}

fuzz_target!(|data: &[u8]| {
    let mut i = Input(data);
    let sel = i.byte();
    let p = i.packing();
    let (m, n, k) = (i.dim(24), i.dim(40), i.depth(300));
    let bl = if i.one_in(8) { 0 } else { i.block_len() };
    if sel % 2 == 0 { lhs(sel / 2, &mut i, p, m, k, bl) } else { rhs(sel / 2, &mut i, p, n, k, bl) }
});
