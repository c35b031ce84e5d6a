//! `qsi8d32pscalef32`: activations quantized per block of `bl` values to symmetric int8 with an
//! **f32** scale and an f32 block sum per row and block, packed in tiles of `mr` rows
//! (`lhs_quant_pack_qsi8d32pscalef32_f32_neon` / `_f16_neon`; docs/formats.md, §LHS
//! `qsi8d32pscalef32`). The activations of the asymmetric int4 families
//! ([`qsi8d32p_qai4c32p`](crate::qsi8d32p_qai4c32p)): the block sum carries the weights'
//! per-block offsets.
//!
//! Tile layout (`nb = k / bl`, `bd = kr / sr`, tile stride `mr * nb * (bl + 8)` bytes): `nb`
//! block groups of `mr * (bl + 8)` bytes each,
//!
//! ```text
//! 0             mr*bl   int8 q[r][b*bl + j] at (j/bd)*mr*bd + r*bd + j%bd
//! mr*bl         4*mr    f32 bsum[r][b]   (at mr*bl + 4r)
//! mr*bl + 4*mr  4*mr    f32 scale[r][b]  (at mr*bl + 4*mr + 4r)
//! ```
//!
//! Per row and block: `mult = 127 / amax` (0 for an all-zero block), `scale = 1 / mult`,
//! `q = clamp(round(x * mult), -128, 127)` (ties to even from f32, away from zero from f16, as
//! KleidiAI's two packers), `bsum = float(sum q) * scale`.
//!
//! As for [`qsi8d32p`](super::qsi8d32p), the `lhs` slice starts at the first row to pack
//! (KleidiAI's packer takes row 0 and adds `m_idx_start` itself).

use half::f16;

use crate::element::Element;
use crate::error::{Buffer, Error, Result};
use crate::lhs::quant::{self, GROUP, Round};
use crate::packing::{Packing, check_blocks};

/// Bytes of one packed tile of `mr` rows: `mr * (k/bl) * (bl + 8)`.
pub fn tile_stride(k: usize, bl: usize, mr: usize) -> Result<usize> {
    check_blocks(k, bl)?;
    (k / bl).checked_mul(bl + 8).and_then(|v| v.checked_mul(mr)).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed LHS for `m` rows.
pub fn packed_size(m: usize, k: usize, bl: usize, packing: &Packing) -> Result<usize> {
    super::tiles_size(m, packing, |mr| tile_stride(k, bl, mr))
}

/// Byte offset of the tile that holds row `m_idx` (a multiple of `mr`).
pub fn packed_offset(m_idx: usize, k: usize, bl: usize, packing: &Packing) -> Result<usize> {
    super::tile_offset(m_idx, packing, |mr| tile_stride(k, bl, mr))
}

/// The quantization of one block from its absolute maximum: `(multiplier, stored scale)`.
/// An all-zero block, and a block whose multiplier `127 / amax` overflows f32 (`amax` below
/// about 7.5e-37, f32 input only), quantize to zero: multiplier, scale, values and block sum 0
/// (KleidiAI's packer gives such a block NaN outputs).
#[inline]
pub(crate) fn block_quant(amax: f32) -> (f32, f32) {
    let mult = if amax == 0.0 { 0.0 } else { 127.0 / amax };
    if mult.is_finite() && mult != 0.0 { (mult, 1.0 / mult) } else { (0.0, 0.0) }
}

/// `max |x|` of a block of any element type (f32 in place, others widened exactly, a group at
/// a time).
fn block_abs_max<S: Element>(block: &[S]) -> f32 {
    if let Some(x) = S::as_f32(block) {
        return quant::abs_max(x);
    }
    let mut wide = [0f32; GROUP];
    block.chunks(GROUP).fold(0.0f32, |a, part| {
        S::widen(part, &mut wide);
        a.max(quant::abs_max(&wide[..part.len()]))
    })
}

/// Whether a block's sum of dequantized values `float(sum q) * scale` overflows f32 (possible
/// for f32 values near `f32::MAX` only). `|bsum| <= 128 * bl * scale`, so only blocks near the
/// range need their exact sum.
fn block_sum_overflows<S: Element>(block: &[S], round: Round) -> bool {
    let (mult, scale) = block_quant(block_abs_max(block));
    if (128.0 * block.len() as f32 * scale).is_finite() {
        return false;
    }
    let mut wide = [0f32; GROUP];
    let sum = block.chunks_exact(GROUP).fold(0i32, |sum, part| {
        S::widen(part, &mut wide);
        let q = quant::quantize_group_split(&wide, mult, 0, -128, 127, round, GROUP);
        q.iter().fold(sum, |s, &v| s.wrapping_add(i32::from(v)))
    });
    !(sum as f32 * scale).is_finite()
}

/// Quantizes and packs `m` rows of f32 activations in blocks of `bl`, rounding ties to even
/// (`lhs_quant_pack_qsi8d32pscalef32_f32_neon`).
///
/// * `lhs`: row `i` of the call (matrix row `m_idx_start + i`) starts at `lhs[i * lhs_stride]`
///   (`lhs_stride` in elements, `>= k`).
/// * `lhs_packed`: starts at the tile that holds row `m_idx_start` and holds every tile the
///   call touches (`ceil((m_idx_start % mr + m) / mr)` tiles).
///
/// Rejects NaN/Inf input ([`Error::NonFinite`]) and blocks whose sum of dequantized values
/// `bsum` overflows f32 (values near `±f32::MAX`, [`Error::ScaleOverflow`]) before writing
/// anything. A block whose
/// multiplier `127 / amax` overflows f32 (`0 < amax < 7.5e-37`, where KleidiAI's packer gives
/// NaN outputs) is packed as an all-zero block: it contributes exactly 0.
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
    pack_rows(packing, m, k, bl, m_idx_start, lhs, lhs_stride, lhs_packed, Round::Even)
}

/// As [`quantize_pack`], from f16 activations (widened exactly), rounding ties away from zero
/// (`lhs_quant_pack_qsi8d32pscalef32_f16_neon`). No f16 block can overflow the multiplier.
#[allow(clippy::too_many_arguments)]
pub fn quantize_pack_f16(
    packing: &Packing,
    m: usize,
    k: usize,
    bl: usize,
    m_idx_start: usize,
    lhs: &[f16],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
) -> Result<()> {
    pack_rows(packing, m, k, bl, m_idx_start, lhs, lhs_stride, lhs_packed, Round::Away)
}

/// The packer of both element types, `round` being how `x * mult` becomes an integer.
#[allow(clippy::too_many_arguments)]
fn pack_rows<S: Element>(
    packing: &Packing,
    m: usize,
    k: usize,
    bl: usize,
    m_idx_start: usize,
    lhs: &[S],
    lhs_stride: usize,
    lhs_packed: &mut [u8],
    round: Round,
) -> Result<()> {
    packing.check_lhs()?;
    check_blocks(k, bl)?;
    if m == 0 {
        return Ok(());
    }
    let mr = packing.mr;
    let ts = tile_stride(k, bl, mr)?;
    // All or nothing: every check, including finiteness and the range of every block sum,
    // before writing a byte. Only f32 rows whose largest value is within a factor `256 * bl`
    // of `f32::MAX` can hold a block whose sum overflows: the others skip the per-block test.
    // f32 rows: one absolute-maximum pass per row shows a NaN or an infinity and the rows near
    // the range; the first non-finite value is reported before any overflowing block.
    let first_slot = super::check_layout(mr, m, k, m_idx_start, lhs, lhs_stride, lhs_packed.len(), ts)?;
    let limit = f32::MAX / (256.0 * bl as f32);
    let mut overflow = None;
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let Some(x) = S::as_f32(row) else {
            super::check_finite_row(row, i * lhs_stride)?;
            continue;
        };
        let amax = quant::abs_max_finite(x);
        if !amax.is_finite() {
            super::check_finite_row(row, i * lhs_stride)?;
        } else if amax >= limit && overflow.is_none() {
            overflow = row
                .chunks_exact(bl)
                .position(|block| block_sum_overflows(block, round))
                .map(|b| i * lhs_stride + b * bl);
        }
    }
    if let Some(index) = overflow {
        return Err(Error::ScaleOverflow { buffer: Buffer::Lhs, index });
    }

    let bd = packing.block_depth();
    let group_bytes = mr * (bl + 8);
    let mut wide = [0f32; GROUP];
    // Rows in blocks of 32 whose chunks are 4 or 8 bytes (or one row per tile): each block
    // loaded (f16 widened) once for its maximum, its codes and their sum (NEON).
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let fast = bl == 32 && (mr == 1 || bd == 4 || bd == 8);
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let slot_abs = first_slot + i;
        let tile = &mut lhs_packed[(slot_abs / mr) * ts..(slot_abs / mr + 1) * ts];
        let r = slot_abs % mr;
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if fast {
            use quant::neon::{AWAY, EVEN, ZERO};
            // One row per tile: the row's bytes are contiguous, whatever `bd`.
            let (bd, step) = if mr == 1 { (4, 4) } else { (bd, mr * bd) };
            let data = tile.as_mut_ptr().wrapping_add(r * bd);
            let sums = tile.as_mut_ptr().wrapping_add(mr * bl + 4 * r);
            let (x, blocks, gap, scales) = (row.as_ptr(), k / 32, group_bytes, 4 * mr);
            // SAFETY: reads `row[..32 * blocks]` (`32 * blocks <= k`); block `b`'s group of the
            // tile (`mr * 40` bytes at `b * gap`) holds the row's chunks `t < 32 / bd` at
            // `t * mr * bd + r * bd`, inside its `mr * 32` data bytes, then its sum at
            // `mr * 32 + 4r` and its scale `4 * mr` bytes on.
            unsafe {
                match (bd, round) {
                    (4, Round::Even) => pack_row32::<S, 4, EVEN>(x, blocks, data, sums, gap, scales, step),
                    (4, Round::Away) => pack_row32::<S, 4, AWAY>(x, blocks, data, sums, gap, scales, step),
                    (4, Round::Zero) => pack_row32::<S, 4, ZERO>(x, blocks, data, sums, gap, scales, step),
                    (_, Round::Even) => pack_row32::<S, 8, EVEN>(x, blocks, data, sums, gap, scales, step),
                    (_, Round::Away) => pack_row32::<S, 8, AWAY>(x, blocks, data, sums, gap, scales, step),
                    (_, Round::Zero) => pack_row32::<S, 8, ZERO>(x, blocks, data, sums, gap, scales, step),
                }
            }
            continue;
        }
        for (b, block) in row.chunks_exact(bl).enumerate() {
            let (mult, scale) = block_quant(block_abs_max(block));
            let group = &mut tile[b * group_bytes..(b + 1) * group_bytes];
            let mut sum = 0i32;
            for (g, part) in block.chunks_exact(GROUP).enumerate() {
                let x = match S::as_f32(part) {
                    Some(x) => x,
                    None => {
                        S::widen(part, &mut wide);
                        &wide[..]
                    }
                };
                let q = quant::quantize_group_split(x, mult, 0, -128, 127, round, GROUP);
                sum = q.iter().fold(sum, |s, &v| s.wrapping_add(i32::from(v)));
                let bytes = q.map(|v| v as u8);
                for (t, chunk) in bytes.chunks_exact(bd).enumerate() {
                    let at = (g * GROUP / bd + t) * mr * bd + r * bd;
                    group[at..at + bd].copy_from_slice(chunk);
                }
            }
            // `float(sum)` is exact for `bl <= 2^17` (`|sum| <= 128 * bl`), rounded to nearest
            // beyond, in every tier alike.
            let bsum = sum as f32 * scale;
            group[mr * bl + 4 * r..mr * bl + 4 * r + 4].copy_from_slice(&bsum.to_le_bytes());
            group[mr * bl + 4 * mr + 4 * r..mr * bl + 4 * mr + 4 * r + 4].copy_from_slice(&scale.to_le_bytes());
        }
    }
    Ok(())
}

/// The `bl = 32` row loop of [`pack_rows`] on NEON: block `b` of the row (32 values at
/// `x + 32b`, widened exactly) gets its codes from `data + b * gap` (chunk `t` at `t * step`),
/// `x * mult` rounded by `MODE`, its f32 sum of dequantized values at `sums + b * gap` and its
/// scale `scales` bytes after that.
///
/// # Safety
///
/// `x` is aligned for `S` and readable for `32 * blocks` finite values; for every `b < blocks`,
/// `sums + b * gap` and `sums + b * gap + scales` are writable for 4 bytes and
/// `data + b * gap + t * step` for `BD` bytes, `t < 32 / BD`.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[inline(always)]
unsafe fn pack_row32<S: Element, const BD: usize, const MODE: u8>(
    x: *const S,
    blocks: usize,
    data: *mut u8,
    sums: *mut u8,
    gap: usize,
    scales: usize,
    step: usize,
) {
    // SAFETY: the caller's contract, block by block.
    unsafe {
        for b in 0..blocks {
            let (v, amax) = quant::neon::load_block32(x.add(32 * b));
            let (mult, scale) = block_quant(amax);
            let sum = quant::neon::quantize_block32_sum::<BD, MODE>(&v, mult, data.add(b * gap), step);
            let at = sums.add(b * gap);
            at.cast::<[u8; 4]>().write_unaligned((sum as f32 * scale).to_le_bytes());
            at.add(scales).cast::<[u8; 4]>().write_unaligned(scale.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_block_has_zero_scale_sum_and_values() {
        let p = Packing { mr: 1, nr: 4, kr: 8, sr: 2 };
        let x = [0.0f32; 32];
        let mut out = [0xeeu8; 40];
        quantize_pack(&p, 1, 32, 32, 0, &x, 32, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0));
    }

    #[test]
    fn ties_follow_the_element_type() {
        // amax 127 gives mult 1: 2.5 rounds to 2 (even) from f32 and to 3 (away) from f16.
        let p = Packing { mr: 1, nr: 4, kr: 8, sr: 2 };
        let mut x = [0.0f32; 32];
        x[0] = 127.0;
        x[1] = 2.5;
        let mut out = [0u8; 40];
        quantize_pack(&p, 1, 32, 32, 0, &x, 32, &mut out).unwrap();
        assert_eq!((out[0], out[1]), (127, 2));
        assert_eq!(f32::from_le_bytes(out[32..36].try_into().unwrap()), 129.0);
        assert_eq!(f32::from_le_bytes(out[36..40].try_into().unwrap()), 1.0);
        let xh: [f16; 32] = core::array::from_fn(|j| f16::from_f32(x[j]));
        quantize_pack_f16(&p, 1, 32, 32, 0, &xh, 32, &mut out).unwrap();
        assert_eq!((out[0], out[1]), (127, 3));
        assert_eq!(f32::from_le_bytes(out[32..36].try_into().unwrap()), 130.0);
    }

    #[test]
    fn every_block_depth_matches_the_reference_and_errors_keep_their_order() {
        extern crate std;
        use std::vec;
        use std::vec::Vec;
        let mut s = 5u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 6.0 - 2.5
        };
        for (m, k, bl) in [(1, 32, 32), (3, 128, 64), (5, 4096, 32), (6, 96, 32)] {
            let stride = k + 5;
            let mut x: Vec<f32> = (0..m * stride).map(|_| next()).collect();
            x[2] = 127.0 * 2.5 / 2.5; // ties: 2.5 * mult lands on .5 in some blocks
            let z = (m * stride).min(72);
            x[z - 32..z].fill(0.0); // an all-zero block (or parts of two)
            x[3] = 1.0e-38; // a tiny value beside normal ones
            for (mr, kr, sr) in [(1, 8, 2), (1, 16, 2), (4, 8, 2), (4, 16, 2), (4, 4, 1), (2, 32, 2), (3, 2, 1)] {
                let p = Packing { mr, nr: 4, kr, sr };
                let bd = p.block_depth();
                // f32 rounds ties to even, f16 (widened exactly) away from zero.
                let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
                let wide: Vec<f32> = xh.iter().map(|v| v.to_f32()).collect();
                for (src, round) in [(&x, Round::Even), (&wide, Round::Away)] {
                    for start in [0, 1] {
                        let ts = tile_stride(k, bl, mr).unwrap();
                        let size = ts * (start % mr + m).div_ceil(mr);
                        let (mut got, mut want) = (vec![0x5au8; size], vec![0x5au8; size]);
                        if round == Round::Even {
                            quantize_pack(&p, m, k, bl, start, &x, stride, &mut got).unwrap();
                        } else {
                            quantize_pack_f16(&p, m, k, bl, start, &xh, stride, &mut got).unwrap();
                        }
                        for i in 0..m {
                            let (slot, t) = ((start % mr + i) % mr, (start % mr + i) / mr);
                            for (b, block) in src[i * stride..i * stride + k].chunks_exact(bl).enumerate() {
                                let amax = block.iter().fold(0f32, |a, v| a.max(v.abs()));
                                let (mult, scale) = block_quant(amax);
                                let g = t * ts + b * mr * (bl + 8);
                                let mut sum = 0i32;
                                for (j, &v) in block.iter().enumerate() {
                                    let q = round.apply(v * mult).clamp(-128, 127);
                                    sum += q;
                                    want[g + (j / bd) * mr * bd + slot * bd + j % bd] = q as u8;
                                }
                                let (bs, sc) = (g + mr * bl + 4 * slot, g + mr * bl + 4 * mr + 4 * slot);
                                want[bs..bs + 4].copy_from_slice(&(sum as f32 * scale).to_le_bytes());
                                want[sc..sc + 4].copy_from_slice(&scale.to_le_bytes());
                            }
                        }
                        assert_eq!(got, want, "m {m} k {k} bl {bl} mr {mr} kr {kr} sr {sr} start {start} {round:?}");
                    }
                }
            }
            // A block sum overflow in an earlier row, a NaN in a later one: the NaN is reported,
            // and nothing is written either way.
            let p = Packing { mr: 4, nr: 4, kr: 4, sr: 1 };
            let mut out = vec![0x5au8; tile_stride(k, bl, 4).unwrap() * m.div_ceil(4)];
            let mut bad = x.clone();
            bad[..bl].fill(f32::MAX);
            assert_eq!(
                quantize_pack(&p, m, k, bl, 0, &bad, stride, &mut out),
                Err(Error::ScaleOverflow { buffer: Buffer::Lhs, index: 0 })
            );
            let nan_at = (m - 1) * stride + k - 1;
            bad[nan_at] = f32::NAN;
            assert_eq!(
                quantize_pack(&p, m, k, bl, 0, &bad, stride, &mut out),
                Err(Error::NonFinite { buffer: Buffer::Lhs, index: nan_at })
            );
            assert!(out.iter().all(|&b| b == 0x5a));
        }
    }

    #[test]
    fn block_whose_multiplier_overflows_packs_as_zero() {
        let p = Packing { mr: 1, nr: 4, kr: 16, sr: 2 };
        let mut x = [1.0f32; 64];
        x[32..].fill(-1e-38);
        let mut out = [0xeeu8; 80];
        quantize_pack(&p, 1, 64, 32, 0, &x, 64, &mut out).unwrap();
        assert!(out[..32].iter().all(|&b| b == 127), "first block: every value 1 = amax");
        assert!(out[40..].iter().all(|&b| b == 0), "second block: values, sum and scale 0");
    }
}
