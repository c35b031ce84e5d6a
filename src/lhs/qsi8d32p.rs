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

/// The smallest f32 that rounds to f16 infinity (halfway between 65504 and 65536, ties to
/// even): a block scale `amax / 127` at or above it overflows.
const F16_OVERFLOW: f32 = 65520.0;

/// Quantization of one block: `(f16 scale, f32 reciprocal)` from its absolute maximum.
#[inline]
pub(crate) fn block_quant(amax: f32) -> (f16, f32) {
    let scale = amax / 127.0;
    let rep = if scale != 0.0 { 1.0 / scale } else { 0.0 };
    (f16::from_bits(crate::arith::f16_bits_nonneg(scale)), rep)
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
    // scale, before writing a byte. One pass over the blocks: a NaN or an infinity shows in the
    // block's absolute maximum; the first non-finite value is reported before any scale overflow.
    let first_slot = super::check_layout(mr, m, k, m_idx_start, lhs, lhs_stride, lhs_packed.len(), ts)?;
    let mut overflow = None;
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        // The row's absolute maximum: NaN or infinite if a value is not finite, and at or past
        // the overflow bound iff some block's is (the bound is monotonic in the maximum).
        let amax = quant::abs_max_finite(row);
        if !amax.is_finite() {
            super::check_finite_row(row, i * lhs_stride)?;
        } else if overflow.is_none() && amax / 127.0 >= F16_OVERFLOW {
            let b = row.chunks_exact(bl).position(|block| quant::abs_max(block) / 127.0 >= F16_OVERFLOW);
            overflow = Some(i * lhs_stride + b.unwrap_or(0) * bl);
        }
    }
    if let Some(index) = overflow {
        return Err(Error::ScaleOverflow { buffer: Buffer::Lhs, index });
    }

    let bd = packing.block_depth();
    // Whole blocks through the 16-value NEON quantizer when a row's chunks are 4 or 8 bytes (or
    // a tile holds one row); otherwise, and off aarch64, through the group quantizer.
    let fast = cfg!(all(target_arch = "aarch64", target_feature = "neon")) && (mr == 1 || bd == 4 || bd == 8);
    for i in 0..m {
        let row = &lhs[i * lhs_stride..i * lhs_stride + k];
        let slot_abs = first_slot + i;
        let tile = &mut lhs_packed[(slot_abs / mr) * ts..(slot_abs / mr + 1) * ts];
        let r = slot_abs % mr;
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if fast && bl == 32 {
            // One row per tile: the row's bytes are contiguous, whatever `bd`.
            let (bd, step) = if mr == 1 { (4, 4) } else { (bd, mr * bd) };
            let data = tile.as_mut_ptr().wrapping_add(2 * mr + r * bd);
            let scales = tile.as_mut_ptr().wrapping_add(2 * r);
            let (x, blocks, gap) = (row.as_ptr(), k / 32, mr * (bl + 2));
            // SAFETY: reads `row[..32 * blocks]` (`32 * blocks <= k`); block `b`'s group of the
            // tile (`mr * 34` bytes at `b * gap`) holds the row's 2 scale bytes at `2r` and,
            // after the `2 * mr` scale bytes, its chunks `t < 32 / bd` at `t * mr * bd + r * bd`.
            unsafe {
                match bd {
                    4 => pack_row32::<4>(x, blocks, data, scales, gap, step),
                    _ => pack_row32::<8>(x, blocks, data, scales, gap, step),
                }
            }
            continue;
        }
        for (b, block) in row.chunks_exact(bl).enumerate() {
            let (scale, rep) = block_quant(quant::abs_max_finite(block));
            let group = &mut tile[b * mr * (bl + 2)..(b + 1) * mr * (bl + 2)];
            group[2 * r..2 * r + 2].copy_from_slice(&scale.to_bits().to_le_bytes());
            if fast {
                #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
                {
                    // One row per tile: the row's bytes are contiguous, whatever `bd`.
                    let (bd, step) = if mr == 1 { (4, 4) } else { (bd, mr * bd) };
                    let base = group.as_mut_ptr().wrapping_add(2 * mr + r * bd);
                    let (x, blocks) = (block.as_ptr(), bl / 16);
                    // SAFETY: block `h < bl / 16` reads `block[16h..16h + 16]` and writes chunks
                    // `t < 16 / bd` of depth `16h + bd t` at `base + (16h / bd + t) * mr * bd`: the
                    // row's `bd` bytes of that chunk, inside the group's `mr * bl` data bytes after
                    // its `2 * mr` scale bytes.
                    unsafe {
                        match bd {
                            4 => quant::neon::quantize_i8_chunks::<_, 4, true, { quant::neon::AWAY }>(
                                x, blocks, rep, 0, base, step,
                            ),
                            8 => quant::neon::quantize_i8_chunks::<_, 8, true, { quant::neon::AWAY }>(
                                x, blocks, rep, 0, base, step,
                            ),
                            _ => {} // `fast` is false
                        }
                    }
                }
                continue;
            }
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

/// The `bl = 32` row loop of [`quantize_pack`] on NEON: block `b` of the row (32 values at
/// `x + 32b`) gets its f16 scale at `scales + b * gap` and its codes from `data + b * gap`, chunk
/// `t` at `t * step`.
///
/// # Safety
///
/// `x` is aligned for f32 and readable for `32 * blocks` finite values whose scales are below
/// the f16 overflow bound; for every `b < blocks`, `scales + b * gap` is writable for 2 bytes
/// and `data + b * gap + t * step` for `BD` bytes, `t < 32 / BD`.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[inline(always)]
unsafe fn pack_row32<const BD: usize>(
    x: *const f32,
    blocks: usize,
    data: *mut u8,
    scales: *mut u8,
    gap: usize,
    step: usize,
) {
    // SAFETY: the caller's contract, block by block.
    unsafe {
        for b in 0..blocks {
            let (v, amax) = quant::neon::load_block32(x.add(32 * b));
            let (scale, rep) = block_quant(amax);
            scales.add(b * gap).cast::<[u8; 2]>().write_unaligned(scale.to_bits().to_le_bytes());
            quant::neon::quantize_block32_sym::<BD>(&v, rep, data.add(b * gap), step);
        }
    }
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
    fn every_block_depth_matches_the_reference_and_errors_keep_their_order() {
        extern crate std;
        use std::vec;
        use std::vec::Vec;
        let mut s = 11u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 6.0 - 2.5
        };
        for (m, k, bl) in [(1, 32, 32), (3, 128, 64), (5, 4096, 32), (6, 96, 32)] {
            let stride = k + 5;
            let mut x: Vec<f32> = (0..m * stride).map(|_| next()).collect();
            x[1] = 0.0;
            x[33] = -1.0e-40; // subnormal block maximum in some shapes
            for (mr, kr, sr) in [(1, 16, 2), (4, 16, 2), (4, 8, 1), (4, 4, 1), (2, 32, 2), (3, 2, 1)] {
                let p = Packing { mr, nr: 4, kr, sr };
                let bd = p.block_depth();
                for start in [0, 1] {
                    let ts = tile_stride(k, bl, mr).unwrap();
                    let size = ts * (start % mr + m).div_ceil(mr);
                    let (mut got, mut want) = (vec![0x5au8; size], vec![0x5au8; size]);
                    quantize_pack(&p, m, k, bl, start, &x, stride, &mut got).unwrap();
                    for i in 0..m {
                        let (slot, t) = ((start % mr + i) % mr, (start % mr + i) / mr);
                        for (b, block) in x[i * stride..i * stride + k].chunks_exact(bl).enumerate() {
                            let amax = block.iter().fold(0f32, |a, v| a.max(v.abs()));
                            let (scale, rep) = block_quant(amax);
                            let g = t * ts + b * mr * (bl + 2);
                            want[g + 2 * slot..g + 2 * slot + 2].copy_from_slice(&scale.to_bits().to_le_bytes());
                            for (j, &v) in block.iter().enumerate() {
                                want[g + 2 * mr + (j / bd) * mr * bd + slot * bd + j % bd] = quantize(v, rep) as u8;
                            }
                        }
                    }
                    assert_eq!(got, want, "m {m} k {k} bl {bl} mr {mr} kr {kr} sr {sr} start {start}");
                }
            }
            // A scale overflow in an earlier row, a NaN in a later one: the NaN is reported.
            let p = Packing { mr: 4, nr: 4, kr: 4, sr: 1 };
            let mut out = vec![0x5au8; tile_stride(k, bl, 4).unwrap() * m.div_ceil(4)];
            let mut bad = x.clone();
            bad[2] = 1e7;
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
    fn f16_conversion_below_overflow_is_the_general_one() {
        let mut bits = 0u32;
        while bits < F16_OVERFLOW.to_bits() {
            let s = f32::from_bits(bits);
            assert_eq!(crate::arith::f16_bits(s), f16::from_f32(s).to_bits(), "{s:e}");
            // Every bit pattern near f16 rounding boundaries, a sparse walk elsewhere.
            bits += if bits & 0x1fff < 4 || bits & 0x1fff > 0x1ffc || bits & 0xfff == 0 { 1 } else { 997 };
        }
    }

    #[test]
    fn f16_overflow_threshold() {
        assert!(f16::from_f32(F16_OVERFLOW).is_infinite());
        assert!(!f16::from_f32(f32::from_bits(F16_OVERFLOW.to_bits() - 1)).is_infinite());
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
