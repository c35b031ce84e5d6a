//! LHS formats `bf16p1x4` and `bf16p8x4` (docs/formats.md, §Float formats): f32 or f16
//! activations rounded to bf16, in tiles of 1 or 8 rows and blocks of 4 depths per row. Consumed
//! by the bf16 families ([`f32_bf16p_bf16p`](crate::f32_bf16p_bf16p),
//! [`f16_bf16p_bf16p`](crate::f16_bf16p_bf16p)).

use crate::element::{Element, check_finite_rows};
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};
use crate::float::arith::bf16_rne;
use crate::packing::{LhsFormat, LhsPacking, MAX_TILE};

/// One row per tile (KleidiAI `lhs_quant_pack_bf16p1x4_f32_neon`, the 1x36 BFDOT kernel). The
/// last `k % 4` values of a row are **truncated** to bf16, as the golden vectors (KleidiAI built
/// with GCC) hold; docs/formats.md, §Float formats.
pub const BF16P1X4: LhsPacking = LhsPacking { format: LhsFormat::Bf16p, mr: 1, kr: 4, sr: 1 };
/// Eight rows per tile (KleidiAI `lhs_quant_pack_bf16p8x4_f32_neon`, `lhs_pack_bf16p8x4_f16_neon`,
/// the 8x12 BFMMLA kernels).
pub const BF16P8X4: LhsPacking = LhsPacking { format: LhsFormat::Bf16p, mr: 8, kr: 4, sr: 1 };

/// Whether the packer truncates the last `k % 4` values of a row to bf16 instead of rounding
/// them: for one row per tile (`bf16p1x4`, docs/formats.md, §Float formats).
pub const fn tail_truncated(format: &LhsPacking) -> bool {
    format.mr == 1
}

/// Bytes of one tile: `mr * roundup(k, 4) * 2` (`k >= 1`, `mr` in `1..=MAX_TILE`, `kr = 4`).
pub(crate) fn tile_stride(format: &LhsPacking, k: usize) -> Result<usize> {
    if format.format != LhsFormat::Bf16p || format.kr != 4 || format.sr != 1 {
        return Err(Error::Unsupported { param: Param::Kr, value: format.kr });
    }
    if format.mr == 0 || format.mr > MAX_TILE {
        return Err(Error::Unsupported { param: Param::Mr, value: format.mr });
    }
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    k.div_ceil(4).checked_mul(4 * 2 * format.mr).ok_or(Error::SizeOverflow)
}

/// Packs `m` rows of depth `k` (row `i` at `lhs[i * lhs_stride..][..k]`, `lhs_stride >= k`
/// elements) into `out`, at least `format.packed_size(m, k, 0)` bytes. Rows are the matrix rows
/// from a tile start: to pack rows `[m0, m)` separately (`m0` a multiple of `mr`), pass
/// `&lhs[m0 * lhs_stride..]` and `&mut out[format.packed_offset(m0, k, 0)?..]`.
///
/// Values are rounded to bf16 to nearest even (f16 widened exactly first), except the tail of
/// [`BF16P1X4`] (see there); padding depths are 0; rows past `m` in the last tile copy that
/// tile's first row (KleidiAI's rule, docs/formats.md, §Float formats). Every byte of the packed
/// size is written. A NaN or infinite value is rejected before anything is written
/// ([`Error::NonFinite`] on [`Buffer::Lhs`], its index in `lhs`; values between the rows are
/// not read); a finite f32 value above the largest bf16 (about 3.39e38) packs as a bf16 infinity
/// (docs/formats.md, §Non-finite input and overflow).
pub fn pack<T: Element>(
    format: &LhsPacking,
    m: usize,
    k: usize,
    lhs: &[T],
    lhs_stride: usize,
    out: &mut [u8],
) -> Result<()> {
    if format.mr == 0 || format.mr > MAX_TILE {
        return Err(Error::Unsupported { param: Param::Mr, value: format.mr });
    }
    if m == 0 {
        return Err(Error::ZeroDim { dim: Dim::M });
    }
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    if lhs_stride < k {
        return Err(Error::StrideTooSmall { stride: Stride::Lhs, given: lhs_stride, needed: k });
    }
    let needed = (m - 1).checked_mul(lhs_stride).and_then(|v| v.checked_add(k)).ok_or(Error::SizeOverflow)?;
    if lhs.len() < needed {
        return Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: lhs.len(), needed });
    }
    let size = format.packed_size(m, k, 0)?;
    if out.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: out.len(), needed: size });
    }
    check_finite_rows(lhs, m, k, lhs_stride, Buffer::Lhs)?;
    let mr = format.mr;
    let ts = tile_stride(format, k)?;
    let rounded = if tail_truncated(format) { k / 4 * 4 } else { k };
    for (t, tile) in out[..size].chunks_exact_mut(ts).enumerate() {
        for (q, block) in tile.chunks_exact_mut(mr * 8).enumerate() {
            for r in 0..mr {
                // Rows past `m` repeat the tile's first row.
                let row = if t * mr + r < m { t * mr + r } else { t * mr };
                let x = &lhs[row * lhs_stride..][..k];
                for i in 0..4 {
                    let j = 4 * q + i;
                    let v = if j >= k {
                        0
                    } else if j < rounded {
                        bf16_rne(x[j].to_f32())
                    } else {
                        (x[j].to_f32().to_bits() >> 16) as u16
                    };
                    block[(r * 4 + i) * 2..][..2].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    Ok(())
}
