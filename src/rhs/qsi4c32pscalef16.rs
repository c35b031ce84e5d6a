//! `qsi4c32pscalef16`: int4 weights, symmetric, one f16 scale per block of `bl` depths per
//! channel, from GGML `Q4_0`-style blocks (`rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0`;
//! docs/formats.md, §RHS and §Arithmetic: RHS packer sums).
//!
//! Raw input: `n` rows of `k/bl` blocks; a block is an f16 scale followed by `bl/2` bytes, byte
//! `q` holding depth `q` (low nibble) and `q + bl/2` (high nibble) as unsigned `u`, value
//! `u - 8`. With `bl = 32` this is GGML's `block_q4_0`.
//!
//! Tile layout (`nb = k / bl`, `bd = kr / 2`, tile stride `nr * nb * (bl/2 + 2)`):
//!
//! ```text
//! per block b, at b*nr*(bl/2 + 2):
//!   0      2*nr      f16 scale[c][b]
//!   2*nr   nr*bl/2   column i's raw byte q XOR 0x88 at 2*nr + (q/bd)*nr*bd + i*bd + q%bd
//! ```

use half::f16;

use crate::error::{Buffer, Error, Result, Stride};
use crate::packing::{Packing, check_blocks};
use crate::rhs::check_nk;

/// Bytes of one raw `Q4_0`-style block: `2 + bl/2`.
pub const fn raw_block_bytes(bl: usize) -> usize {
    2 + bl / 2
}

/// Bytes of one packed tile of `nr` channels: `nr * (k/bl) * (bl/2 + 2)`.
pub fn tile_stride(k: usize, bl: usize, nr: usize) -> Result<usize> {
    check_blocks(k, bl)?;
    (k / bl).checked_mul(raw_block_bytes(bl)).and_then(|v| v.checked_mul(nr)).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed RHS for `n` channels.
pub fn packed_size(n: usize, k: usize, bl: usize, packing: &Packing) -> Result<usize> {
    packing.check_rhs_int4()?;
    n.div_ceil(packing.nr).checked_mul(tile_stride(k, bl, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Byte offset of the tile that holds channel `n_idx` (a multiple of `nr`).
pub fn packed_offset(n_idx: usize, k: usize, bl: usize, packing: &Packing) -> Result<usize> {
    packing.check_rhs_int4()?;
    packing.check_n_start(n_idx)?;
    (n_idx / packing.nr).checked_mul(tile_stride(k, bl, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Packs `n` channels of `Q4_0`-style blocks.
///
/// * `rhs`: `n` rows of `rhs_stride` bytes (`>= (k/bl) * (2 + bl/2)`), each `k/bl` raw blocks.
///   Every block scale must be finite.
/// * `rhs_packed`: at least [`packed_size`] bytes.
///
/// The format has no bias.
pub fn pack(
    packing: &Packing,
    n: usize,
    k: usize,
    bl: usize,
    rhs: &[u8],
    rhs_stride: usize,
    rhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_rhs_int4()?;
    check_nk(n, k)?;
    check_blocks(k, bl)?;
    let nb = k / bl;
    let raw_block = raw_block_bytes(bl);
    let row_bytes = nb * raw_block;
    if rhs_stride < row_bytes {
        return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: rhs_stride, needed: row_bytes });
    }
    let needed = (n - 1).checked_mul(rhs_stride).and_then(|v| v.checked_add(row_bytes));
    let needed = needed.ok_or(Error::SizeOverflow)?;
    if rhs.len() < needed {
        return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: rhs.len(), needed });
    }
    // The first non-finite block scale, searched value by value (on aarch64 only when a NEON
    // scan of every row has found one).
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let suspect = {
        let mut any = false;
        for c in 0..n {
            // SAFETY: row `c < n`'s `nb` scales are the 2 bytes at `c * rhs_stride + b * raw_block`,
            // `b < nb`, ending at most at `c * rhs_stride + row_bytes <= needed <= rhs.len()`.
            any |= unsafe { neon::any_non_finite_f16(rhs[c * rhs_stride..].as_ptr(), nb, raw_block) };
        }
        any
    };
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    let suspect = true;
    if suspect {
        for c in 0..n {
            for b in 0..nb {
                let at = c * rhs_stride + b * raw_block;
                if !f16::from_le_bytes([rhs[at], rhs[at + 1]]).is_finite() {
                    return Err(Error::NonFinite { buffer: Buffer::Rhs, index: at });
                }
            }
        }
    }
    let size = packed_size(n, k, bl, packing)?;
    if rhs_packed.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: rhs_packed.len(), needed: size });
    }

    let nr = packing.nr;
    let bd = packing.block_depth();
    let ts = tile_stride(k, bl, nr)?;
    let area_bytes = nr * raw_block;
    for c in 0..n.div_ceil(nr) * nr {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
        let src = c.min(n - 1);
        // Chunks of 4, 8 or 16 bytes: NEON, a whole channel at a time (padding channels too:
        // they copy channel `n - 1`).
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if matches!(bd, 4 | 8 | 16) {
            let row = rhs[src * rhs_stride..][..row_bytes].as_ptr();
            // SAFETY: `row` is the channel's `nb * raw_block` raw bytes (sliced above); the
            // tile holds `nb` areas of `area_bytes = nr * (2 + bl/2)` bytes, and block `b` writes
            // the scale at `b * area_bytes + 2i` (2 bytes, `i < nr`) and the data chunks at
            // `b * area_bytes + 2nr + t * nr * bd + i * bd` (`bd` bytes, `t < bl/2 / bd`): inside
            // the area.
            unsafe { neon::pack_row(row, nb, bl, tile.as_mut_ptr(), nr, i, bd) };
            continue;
        }
        for b in 0..nb {
            let raw = &rhs[src * rhs_stride + b * raw_block..src * rhs_stride + (b + 1) * raw_block];
            let area = &mut tile[b * area_bytes..(b + 1) * area_bytes];
            area[2 * i..2 * i + 2].copy_from_slice(&raw[..2]);
            for (q, &byte) in raw[2..].iter().enumerate() {
                area[2 * nr + (q / bd) * nr * bd + i * bd + q % bd] = byte ^ 0x88;
            }
        }
    }
    Ok(())
}

/// The NEON scale scan and channel packer.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use core::arch::aarch64::*;

    /// Whether any of the `count` f16 values at `p + j * step` (`j < count`, little-endian, any
    /// alignment) is infinite or NaN (exponent bits all set). Eight values a step, gathered into
    /// the lanes of one vector.
    ///
    /// # Safety
    ///
    /// `p + j * step` is readable for 2 bytes for every `j < count`.
    pub(super) unsafe fn any_non_finite_f16(p: *const u8, count: usize, step: usize) -> bool {
        // SAFETY: NEON is enabled for the whole target; every read is one of the caller's
        // values (`j < count`).
        unsafe {
            let exp = vdupq_n_u16(0x7c00);
            let mut bad = vdupq_n_u16(0);
            let mut src = p;
            let read = |at: *const u8| at.cast::<u16>().read_unaligned();
            for _ in 0..count / 8 {
                let mut v = vdupq_n_u16(read(src));
                v = vsetq_lane_u16::<1>(read(src.add(step)), v);
                v = vsetq_lane_u16::<2>(read(src.add(2 * step)), v);
                v = vsetq_lane_u16::<3>(read(src.add(3 * step)), v);
                v = vsetq_lane_u16::<4>(read(src.add(4 * step)), v);
                v = vsetq_lane_u16::<5>(read(src.add(5 * step)), v);
                v = vsetq_lane_u16::<6>(read(src.add(6 * step)), v);
                v = vsetq_lane_u16::<7>(read(src.add(7 * step)), v);
                bad = vorrq_u16(bad, vceqq_u16(vandq_u16(v, exp), exp));
                src = src.add(8 * step);
            }
            let mut tail = false;
            for _ in 0..count % 8 {
                tail |= read(src) & 0x7c00 == 0x7c00;
                src = src.add(step);
            }
            tail || vmaxvq_u16(bad) != 0
        }
    }

    /// Packs the `nb` raw blocks of `bl` depths of one channel at `row` (each an f16 scale and
    /// `bl/2` bytes) into column `i` of the tile at `tile` (`nr` columns, chunks of `bd` bytes:
    /// 4, 8 or 16): block `b`'s scale at `b * area + 2i`, its byte `q` XOR `0x88` at
    /// `b * area + 2nr + (q / bd) * nr * bd + i * bd + q % bd`, `area = nr * (2 + bl/2)`.
    ///
    /// # Safety
    ///
    /// `row` is readable for `nb * (2 + bl/2)` bytes, `tile` writable for `nb * area` bytes,
    /// `i < nr`, `bl` a non-zero multiple of 32.
    pub(super) unsafe fn pack_row(row: *const u8, nb: usize, bl: usize, tile: *mut u8, nr: usize, i: usize, bd: usize) {
        // SAFETY: forwarded from the caller's contract (`bd` is 4, 8 or 16).
        unsafe {
            match (bd, bl == 32) {
                (16, true) => pack_row_bd::<16, true>(row, nb, bl, tile, nr, i),
                (8, true) => pack_row_bd::<8, true>(row, nb, bl, tile, nr, i),
                (_, true) => pack_row_bd::<4, true>(row, nb, bl, tile, nr, i),
                (16, false) => pack_row_bd::<16, false>(row, nb, bl, tile, nr, i),
                (8, false) => pack_row_bd::<8, false>(row, nb, bl, tile, nr, i),
                (_, false) => pack_row_bd::<4, false>(row, nb, bl, tile, nr, i),
            }
        }
    }

    /// [`pack_row`] for chunks of `BD` bytes; `BL32`: `bl == 32` (one 16-byte piece a block).
    ///
    /// # Safety
    ///
    /// As [`pack_row`] with `bd = BD`.
    #[inline(always)]
    unsafe fn pack_row_bd<const BD: usize, const BL32: bool>(
        row: *const u8,
        nb: usize,
        bl: usize,
        tile: *mut u8,
        nr: usize,
        i: usize,
    ) {
        // SAFETY: NEON is enabled for the whole target. Block `b` reads its `2 + bl/2` raw bytes
        // at `row + b * (2 + bl/2)` and writes its scale and `16 / BD` chunks of each 16-byte
        // piece `p` (at `2nr + 16p * nr + t * nr * BD + i * BD`, `t < 16 / BD`) inside its
        // area: the caller's contract.
        unsafe {
            let k88 = vdupq_n_u8(0x88);
            let pieces = if BL32 { 1 } else { bl / 32 };
            let raw_block = 2 + 16 * pieces;
            let area = nr * raw_block;
            let (mut src, mut scale, mut data) = (row, tile.add(2 * i), tile.add(2 * nr + i * BD));
            for _ in 0..nb {
                scale.cast::<u16>().write_unaligned(src.cast::<u16>().read_unaligned());
                for p in 0..pieces {
                    let x = veorq_u8(vld1q_u8(src.add(2 + 16 * p)), k88);
                    crate::packing::store_chunks_strided::<BD>(x, data.add(16 * p * nr), nr * BD);
                }
                src = src.add(raw_block);
                scale = scale.add(area);
                data = data.add(area);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn rng(seed: u32) -> impl FnMut() -> u8 {
        let mut s = seed;
        move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 24) as u8
        }
    }

    /// `n` rows of `k / bl` raw blocks (`stride` bytes a row, the rest filled with junk): random
    /// bytes with 0x00, 0x0f, 0xf0, 0xff, 0x80 and 0x7f among them; finite f16 scales of every
    /// kind (zero, -0, subnormal, the largest, negative, random finite).
    fn raw_rows(next: &mut impl FnMut() -> u8, n: usize, k: usize, bl: usize, stride: usize) -> Vec<u8> {
        let mut raw: Vec<u8> = (0..n * stride).map(|_| next()).collect();
        let extremes = [0x00u8, 0x0f, 0xf0, 0xff, 0x80, 0x7f, 0x88];
        let scales = [0x0000u16, 0x8000, 0x0001, 0x7bff, 0xfbff, 0x3c00, 0x0400, 0x83ff];
        for c in 0..n {
            for b in 0..k / bl {
                let at = c * stride + b * raw_block_bytes(bl);
                let s = if next().is_multiple_of(3) {
                    scales[usize::from(next()) % scales.len()]
                } else {
                    // Any finite value: the exponent not all ones.
                    let v = u16::from_le_bytes([next(), next()]);
                    if v & 0x7c00 == 0x7c00 { v & 0xbfff } else { v }
                };
                raw[at..at + 2].copy_from_slice(&s.to_le_bytes());
                for q in 0..bl / 2 {
                    if next().is_multiple_of(4) {
                        raw[at + 2 + q] = extremes[usize::from(next()) % extremes.len()];
                    }
                }
            }
        }
        raw
    }

    #[test]
    fn every_packing_matches_the_element_formula() {
        let mut next = rng(7);
        for (n, k, bl) in
            [(5usize, 32usize, 32usize), (8, 4096, 32), (7, 192, 64), (9, 288, 96), (1, 64, 32), (13, 1024, 32)]
        {
            let raw_block = raw_block_bytes(bl);
            for extra in [0, 5] {
                let stride = (k / bl) * raw_block + extra;
                let raw = raw_rows(&mut next, n, k, bl, stride);
                for (nr, kr) in [(4, 8), (4, 16), (8, 16), (8, 8), (4, 32), (4, 4), (16, 16), (1, 16)] {
                    let p = Packing { mr: 1, nr, kr, sr: 2 };
                    let size = packed_size(n, k, bl, &p).unwrap();
                    let mut got = vec![0x5au8; size];
                    pack(&p, n, k, bl, &raw, stride, &mut got).unwrap();
                    let (bd, nb, ts) = (kr / 2, k / bl, tile_stride(k, bl, nr).unwrap());
                    let mut want = vec![0u8; size];
                    for c in 0..n.div_ceil(nr) * nr {
                        let (t, i, src) = (c / nr * ts, c % nr, c.min(n - 1));
                        for b in 0..nb {
                            let (area, at) = (t + b * nr * raw_block, src * stride + b * raw_block);
                            want[area + 2 * i..area + 2 * i + 2].copy_from_slice(&raw[at..at + 2]);
                            for q in 0..bl / 2 {
                                want[area + 2 * nr + (q / bd) * nr * bd + i * bd + q % bd] = raw[at + 2 + q] ^ 0x88;
                            }
                        }
                    }
                    assert_eq!(got, want, "n {n} k {k} bl {bl} stride {stride} nr {nr} kr {kr}");
                }
            }
        }
    }

    #[test]
    fn first_non_finite_scale_is_reported_before_any_write() {
        let mut next = rng(11);
        let p = Packing { mr: 1, nr: 4, kr: 16, sr: 2 };
        for (n, k, bl) in [(3usize, 1024usize, 32usize), (2, 96, 32), (5, 640, 64)] {
            let raw_block = raw_block_bytes(bl);
            let stride = (k / bl) * raw_block + 3;
            let clean = raw_rows(&mut next, n, k, bl, stride);
            let mut out = vec![0xeeu8; packed_size(n, k, bl, &p).unwrap()];
            // Every block position (the 8-wide scan and its tail), infinities and NaNs; a second
            // bad scale later on never hides the first.
            for c in 0..n {
                for b in 0..k / bl {
                    for bad in [0x7c00u16, 0xfc00, 0x7e00, 0xffff, 0x7c01] {
                        let mut raw = clean.clone();
                        let at = c * stride + b * raw_block;
                        raw[at..at + 2].copy_from_slice(&bad.to_le_bytes());
                        let last = (n - 1) * stride + (k / bl - 1) * raw_block;
                        if last > at {
                            raw[last..last + 2].copy_from_slice(&0x7c00u16.to_le_bytes());
                        }
                        let e = pack(&p, n, k, bl, &raw, stride, &mut out).unwrap_err();
                        assert_eq!(e, Error::NonFinite { buffer: Buffer::Rhs, index: at });
                    }
                }
            }
            assert!(out.iter().all(|&b| b == 0xee));
        }
    }
}
