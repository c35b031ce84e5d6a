//! LHS formats `bf16p1x4` and `bf16p8x4` (float.md §4): f32 or f16 activations rounded to bf16,
//! in tiles of 1 or 8 rows and blocks of 4 depths per row. Consumed by the bf16 families
//! ([`f32_bf16p_bf16p`](crate::f32_bf16p_bf16p), [`f16_bf16p_bf16p`](crate::f16_bf16p_bf16p)).

use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};
use crate::float::LhsFormat;
use crate::float::arith::bf16_rne;

/// One row per tile (KleidiAI `lhs_quant_pack_bf16p1x4_f32_neon`, the 1x36 BFDOT kernel). The
/// last `k % 4` values of a row are **truncated** to bf16, as the golden vectors (KleidiAI built
/// with GCC) hold; docs/kernels.md.
pub const BF16P1X4: LhsFormat = LhsFormat { name: "bf16p1x4", mr: 1, tail_truncated: true };
/// Eight rows per tile (KleidiAI `lhs_quant_pack_bf16p8x4_f32_neon`, `lhs_pack_bf16p8x4_f16_neon`,
/// the 8x12 BFMMLA kernels).
pub const BF16P8X4: LhsFormat = LhsFormat { name: "bf16p8x4", mr: 8, tail_truncated: false };

/// Packs `m` rows of depth `k` (row `i` at `lhs[i * lhs_stride..][..k]`, `lhs_stride >= k`
/// elements) into `out`, at least `format.packed_size(m, k)` bytes. Rows are the matrix rows
/// from a tile start: to pack rows `[m0, m)` separately (`m0` a multiple of `mr`), pass
/// `&lhs[m0 * lhs_stride..]` and `&mut out[format.packed_offset(m0, k)?..]`.
///
/// Values are rounded to bf16 to nearest even (f16 widened exactly first), except the tail of
/// [`BF16P1X4`] (see there); padding depths are 0; rows past `m` in the last tile copy that
/// tile's first row (KleidiAI's rule, float.md §4.2). Every byte of the packed size is written.
/// Non-finite values are converted like finite ones (infinity stays infinity, NaN stays NaN).
pub fn pack<T: Element>(
    format: &LhsFormat,
    m: usize,
    k: usize,
    lhs: &[T],
    lhs_stride: usize,
    out: &mut [u8],
) -> Result<()> {
    if format.mr == 0 || format.mr > 64 {
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
    let size = format.packed_size(m, k)?;
    if out.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: out.len(), needed: size });
    }
    let mr = format.mr;
    let ts = format.tile_stride(k)?;
    let rounded = if format.tail_truncated { k / 4 * 4 } else { k };
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
