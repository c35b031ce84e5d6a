//! `qsi8d32p`: f32 activations quantized per block of `bl` values to symmetric int8 with one
//! f16 scale per row and block, packed in tiles of `mr` rows (`lhs_quant_pack_qsi8d32p_f32`;
//! docs/formats.md, §LHS and §Arithmetic: qsi8d32p quantization).
//!
//! Tile layout (`nb = k / bl`, `bd = kr / sr`, tile stride `mr * nb * (bl + 2)` bytes): `nb`
//! block groups of `mr * (bl + 2)` bytes each,
//!
//! ```text
//! 0      2*mr    f16 scale[r][b]  (at 2r)
//! 2*mr   mr*bl   int8 q[r][b*bl + j] at 2*mr + (j/bd)*mr*bd + r*bd + j%bd
//! ```
//!
//! Unlike KleidiAI's packer, whose `lhs` pointer is row 0 even when `m_idx_start > 0`, the
//! `lhs` slice here starts at the first row to pack, as for [`qai8dxp`](super::qai8dxp).

use half::f16;

use crate::error::{Buffer, Error, Result};
use crate::lhs::quant;
use crate::packing::{Packing, check_blocks};

/// Bytes of one packed tile of `mr` rows: `mr * (k/bl) * (bl + 2)`.
pub fn tile_stride(k: usize, bl: usize, mr: usize) -> Result<usize> {
    check_blocks(k, bl)?;
    (k / bl).checked_mul(bl + 2).and_then(|v| v.checked_mul(mr)).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed LHS for `m` rows.
pub fn packed_size(m: usize, k: usize, bl: usize, packing: &Packing) -> Result<usize> {
    super::tiles_size(m, packing, |mr| tile_stride(k, bl, mr))
}

/// Byte offset of the tile that holds row `m_idx` (a multiple of `mr`).
pub fn packed_offset(m_idx: usize, k: usize, bl: usize, packing: &Packing) -> Result<usize> {
    super::tile_offset(m_idx, packing, |mr| tile_stride(k, bl, mr))
}

/// Quantization of one block: `(f16 scale, f32 reciprocal)` from its absolute maximum.
#[inline]
pub(crate) fn block_quant(amax: f32) -> (f16, f32) {
    let scale = amax / 127.0;
    let rep = if scale != 0.0 { 1.0 / scale } else { 0.0 };
    (f16::from_f32(scale), rep)
}

/// `round_away(x * rep)`, within `[-127, 127]` (a NaN product, `0 * inf` when the scale is
/// subnormal, gives 0).
#[cfg(test)]
fn quantize(x: f32, rep: f32) -> i8 {
    quant::quantize_one(x, rep, 0, -127, 127)
}

/// Quantizes and packs `m` rows of f32 activations in blocks of `bl`
/// (`lhs_quant_pack_qsi8d32p_f32`).
///
/// * `lhs`: row `i` of the call (matrix row `m_idx_start + i`) starts at `lhs[i * lhs_stride]`
///   (`lhs_stride` in elements, `>= k`).
/// * `lhs_packed`: starts at the tile that holds row `m_idx_start` and holds every tile the
///   call touches (`ceil((m_idx_start % mr + m) / mr)` tiles).
///
/// Rejects NaN/Inf input ([`Error::NonFinite`]) and blocks whose scale `amax / 127` overflows
/// f16 (`amax` above about 8.3e6, [`Error::ScaleOverflow`]) before writing anything.
#[allow(clippy::too_many_arguments)]
pub fn quantize_pack(
    packing: &Packing,
    m: usize,
    k: usize,
    bl: usize,
    m_idx_start: usize,
    lhs: &[f32],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_lhs()?;
    check_blocks(k, bl)?;
    if m == 0 {
        return Ok(());
    }
    let mr = packing.mr;
    let ts = tile_stride(k, bl, mr)?;
    // All or nothing: every check, including finiteness and the f16 range of every block
    // scale, before writing a byte.
    let first_slot = super::check_call(mr, m, k, m_idx_start, lhs, lhs_stride, lhs_packed.len(), ts)?;
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        for (b, block) in row.chunks_exact(bl).enumerate() {
            if block_quant(quant::abs_max(block)).0.is_infinite() {
                return Err(Error::ScaleOverflow { buffer: Buffer::Lhs, index: i * lhs_stride + b * bl });
            }
        }
    }

    let bd = packing.block_depth();
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let slot_abs = first_slot + i;
        let tile = &mut lhs_packed[(slot_abs / mr) * ts..(slot_abs / mr + 1) * ts];
        let r = slot_abs % mr;
        for (b, block) in row.chunks_exact(bl).enumerate() {
            let (scale, rep) = block_quant(quant::abs_max(block));
            let group = &mut tile[b * mr * (bl + 2)..(b + 1) * mr * (bl + 2)];
            group[2 * r..2 * r + 2].copy_from_slice(&scale.to_bits().to_le_bytes());
            for (g, part) in block.chunks_exact(quant::GROUP).enumerate() {
                let q = quant::quantize_group(part, rep, 0, -127, 127);
                for (t, chunk) in q.chunks_exact(bd).enumerate() {
                    let at = 2 * mr + (g * quant::GROUP / bd + t) * mr * bd + r * bd;
                    for (dst, &v) in group[at..at + bd].iter_mut().zip(chunk) {
                        *dst = v as u8;
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_block_has_zero_scale_and_values() {
        let (s, rep) = block_quant(0.0);
        assert_eq!((s.to_bits(), rep), (0, 0.0));
        assert_eq!(quantize(0.0, rep), 0);
    }

    #[test]
    fn scale_overflow_is_rejected() {
        let p = Packing { mr: 1, nr: 4, kr: 16, sr: 2 };
        let mut x = [1.0f32; 64];
        x[40] = 1e7;
        let mut out = [0u8; 2 * 34];
        let e = quantize_pack(&p, 1, 64, 32, 0, &x, 64, &mut out).unwrap_err();
        assert_eq!(e, Error::ScaleOverflow { buffer: Buffer::Lhs, index: 32 });
    }
}
