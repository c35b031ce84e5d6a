//! `qai8dxp`: f32 activations quantized per row to asymmetric int8 and packed in tiles of `mr`
//! rows (`lhs_quant_pack_qai8dxp_f32`; docs/formats.md, §LHS and §Arithmetic: qai8dxp quantization).
//!
//! Tile layout (`Kp = roundup(k, 32)`, `bd = kr / sr`, tile stride `mr * (Kp + 8)` bytes):
//!
//! ```text
//! 0            mr*Kp   int8 q[r][j] at (j/bd)*mr*bd + r*bd + j%bd   (K padding repeats q[r][k-1])
//! mr*Kp        4*mr    i32 offset[r] = -zero_point[r]
//! mr*Kp+4*mr   4*mr    f32 dq_scale[r] = 1 / multiplier[r]
//! ```

use crate::arith::{round_even, write_u32};
use crate::error::{Dim, Error, Result};
use crate::lhs::quant;
use crate::packing::{Packing, padded_k};

/// Bytes of one packed tile of `mr` rows: `mr * (Kp + 8)`.
pub fn tile_stride(k: usize, mr: usize) -> Result<usize> {
    padded_k(k)?.checked_add(8).and_then(|r| r.checked_mul(mr)).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed LHS for `m` rows (`get_lhs_packed_size`).
pub fn packed_size(m: usize, k: usize, packing: &Packing) -> Result<usize> {
    packing.check_lhs()?;
    m.div_ceil(packing.mr).checked_mul(tile_stride(k, packing.mr)?).ok_or(Error::SizeOverflow)
}

/// Byte offset of the tile that holds row `m_idx` (`get_lhs_packed_offset`); `m_idx` must be a
/// multiple of `mr`.
pub fn packed_offset(m_idx: usize, k: usize, packing: &Packing) -> Result<usize> {
    packing.check_lhs()?;
    if !m_idx.is_multiple_of(packing.mr) {
        return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: packing.mr });
    }
    (m_idx / packing.mr).checked_mul(tile_stride(k, packing.mr)?).ok_or(Error::SizeOverflow)
}

/// Quantization parameters of one row (docs/formats.md, §Arithmetic: qai8dxp quantization).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RowQuant {
    /// Quantization multiplier: `q = round_away(x * multiplier) + zero_point`.
    pub(crate) multiplier: f32,
    /// Integer zero point in `[-128, 127]`.
    pub(crate) zero_point: i32,
    /// Stored dequantization scale: `1 / multiplier`, or 0.
    pub(crate) dq_scale: f32,
}

/// The per-row quantizer of docs/formats.md, §Arithmetic: qai8dxp quantization, step by step.
pub(crate) fn row_quant(vmin: f32, vmax: f32) -> RowQuant {
    let rmin = vmin.min(0.0);
    let rmax = vmax.max(0.0);
    let multiplier = if rmin == rmax { 1.0 } else { 255.0 / (rmax - rmin) };
    let dq_scale = if multiplier != 0.0 { 1.0 / multiplier } else { 0.0 };
    let dmin = rmin * multiplier;
    let dmax = rmax * multiplier;
    let emin = -128.0 + dmin;
    let emax = 127.0 + dmax;
    let zpf = if emin + emax > 0.0 { -128.0 - dmin } else { 127.0 - dmax };
    // C fmaxf/fminf: a NaN operand is ignored (Rust's f32::max/min do the same, `clamp`
    // would propagate it).
    #[allow(clippy::manual_clamp)]
    let zpf = zpf.max(-128.0).min(127.0);
    RowQuant { multiplier, zero_point: round_even(zpf) as i32, dq_scale }
}

/// `clamp(round_away(x * multiplier) + zero_point, -128, 127)`.
#[cfg(test)]
fn quantize(x: f32, rq: &RowQuant) -> i8 {
    quant::quantize_one(x, rq.multiplier, rq.zero_point, -128, 127)
}

/// Quantizes and packs `m` rows of f32 activations (`lhs_quant_pack_qai8dxp_f32`).
///
/// * `lhs`: row 0 of the call is `lhs[0..k]`, row `i` starts at `lhs[i * lhs_stride]`
///   (`lhs_stride` in elements, `>= k`); it is the matrix row `m_idx_start + i`.
/// * `lhs_packed`: starts at the tile that holds row `m_idx_start`
///   (`&whole[packed_offset(m_idx_start / mr * mr)..]`) and must hold every tile the call touches
///   (`ceil((m_idx_start % mr + m) / mr)` tiles).
/// * Row `i` lands in slot `(m_idx_start + i) % mr`. Packing `[0, m1)` and then `[m1, m)` gives
///   the same bytes as one call, for any `m1`. Bytes of slots that no call writes keep their
///   contents.
///
/// Every value must be finite: on NaN or ±Inf the call returns [`Error::NonFinite`] and writes
/// nothing.
#[allow(clippy::too_many_arguments)]
pub fn quantize_pack(
    packing: &Packing,
    m: usize,
    k: usize,
    m_idx_start: usize,
    lhs: &[f32],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_lhs()?;
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    if m == 0 {
        return Ok(());
    }
    let mr = packing.mr;
    let ts = tile_stride(k, mr)?;
    // All or nothing: every check, including finiteness, before writing a byte.
    let first_slot = super::check_call(mr, m, k, m_idx_start, lhs, lhs_stride, lhs_packed.len(), ts)?;

    let kp = padded_k(k)?;
    let bd = packing.block_depth();
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let (vmin, vmax) = quant::min_max(row);
        let rq = row_quant(vmin, vmax);
        let slot_abs = first_slot + i;
        let tile = &mut lhs_packed[(slot_abs / mr) * ts..(slot_abs / mr + 1) * ts];
        let r = slot_abs % mr;
        for g in 0..kp / quant::GROUP {
            let part = &row[g * quant::GROUP..k.min((g + 1) * quant::GROUP)];
            let mut q = quant::quantize_group(part, rq.multiplier, rq.zero_point, -128, 127);
            // K padding repeats the last real value (only the last group can be partial).
            let last = q[part.len() - 1];
            q[part.len()..].fill(last);
            for (t, chunk) in q.chunks_exact(bd).enumerate() {
                let at = (g * quant::GROUP / bd + t) * mr * bd + r * bd;
                for (dst, &v) in tile[at..at + bd].iter_mut().zip(chunk) {
                    *dst = v as u8;
                }
            }
        }
        write_u32(tile, mr * kp + 4 * r, (-rq.zero_point) as u32);
        write_u32(tile, mr * kp + 4 * mr + 4 * r, rq.dq_scale.to_bits());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_numeric_example() {
        // docs/formats.md, §LHS: mr = 1, k = 4, x = [-1, 0.5, 2, 0].
        let p = Packing { mr: 1, nr: 4, kr: 16, sr: 2 };
        let mut out = [0u8; 40];
        quantize_pack(&p, 1, 4, 0, &[-1.0, 0.5, 2.0, 0.0], 4, &mut out).unwrap();
        assert_eq!(&out[0..4], &[0x80, 0x00, 0x7f, 0xd5]);
        assert!(out[4..32].iter().all(|&b| b == 0xd5));
        assert_eq!(&out[32..40], &[0x2b, 0, 0, 0, 0xc1, 0xc0, 0x40, 0x3c]);
    }

    #[test]
    fn zero_row_and_constant_row() {
        let z = row_quant(0.0, 0.0);
        assert_eq!((z.multiplier, z.zero_point, z.dq_scale), (1.0, 127, 1.0));
        let c = row_quant(0.7, 0.7);
        assert_eq!(c.zero_point, -128);
        assert_eq!(quantize(0.7, &c), 127);
    }

    #[test]
    fn worked_offset_example() {
        // docs/formats.md, §LHS: mr = 4, kr = 16, sr = 2, k = 40: TL = 288.
        let p = Packing { mr: 4, nr: 8, kr: 16, sr: 2 };
        assert_eq!(tile_stride(40, 4).unwrap(), 288);
        assert_eq!(packed_offset(4, 40, &p).unwrap(), 288);
        assert_eq!(packed_size(5, 40, &p).unwrap(), 576);
    }
}
