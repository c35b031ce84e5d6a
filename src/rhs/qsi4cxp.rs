//! `qsi4cxp`: int4 weights, symmetric, one f32 scale per output channel, packed in tiles of
//! `nr` channels (`rhs_pack_{nxk,kxn}_qsi4cxp_qs4cxs1s0`; docs/formats.md, §RHS and
//! §Arithmetic: RHS packer sums).
//!
//! Tile layout (`Kp = roundup(k, 32)`, `bd = kr / sr`, tile stride `nr * (Kp/2 + 12)` bytes):
//!
//! ```text
//! 0              nr*Kp/2  data: column i's byte q at (q/bd)*nr*bd + i*bd + q%bd; byte q holds
//!                         depth 32*(q/16) + q%16 in its low nibble and that depth + 16 in its high
//! nr*Kp/2        4*nr     i32 rsum[i] = 16 * sum_j w[c][j]
//! nr*Kp/2+4*nr   4*nr     f32 scale[c] * 0.0625
//! nr*Kp/2+8*nr   4*nr     f32 bias[c] (0 when absent)
//! ```

use crate::arith::write_u32;
use crate::error::{Buffer, Error, Result};
use crate::packing::{Packing, padded_k};
use crate::rhs::{Int4Source, Layout, check_channel_params, check_nk, pair_group};

/// Bytes of one packed tile of `nr` channels: `nr * (Kp/2 + 12)`.
pub fn tile_stride(k: usize, nr: usize) -> Result<usize> {
    (padded_k(k)? / 2 + 12).checked_mul(nr).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed RHS for `n` channels (`get_rhs_packed_size`).
pub fn packed_size(n: usize, k: usize, packing: &Packing) -> Result<usize> {
    packing.check_rhs_int4()?;
    n.div_ceil(packing.nr).checked_mul(tile_stride(k, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Byte offset of the tile that holds channel `n_idx` (`get_rhs_packed_offset`); `n_idx` must
/// be a multiple of `nr`.
pub fn packed_offset(n_idx: usize, k: usize, packing: &Packing) -> Result<usize> {
    packing.check_rhs_int4()?;
    packing.check_n_start(n_idx)?;
    (n_idx / packing.nr).checked_mul(tile_stride(k, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Packs `n` channels of int4 weights with per-channel f32 scales and an optional f32 bias.
///
/// * `rhs`: the raw weights ([`Int4Source`]: NxK or KxN, s1s0 nibble order, signed or
///   zero-point-8 nibbles, row stride in bytes).
/// * `scale`: `n` f32 scales; `bias`: `n` f32 values or `None` (packs zeros). All finite.
/// * `rhs_packed`: at least [`packed_size`] bytes; exactly that many are written.
///
/// Channels past `n` in the last tile are filled as KleidiAI does (docs/formats.md, §RHS), so the
/// packed bytes equal KleidiAI's for the same input.
pub fn pack(
    packing: &Packing,
    n: usize,
    k: usize,
    rhs: &Int4Source<'_>,
    scale: &[f32],
    bias: Option<&[f32]>,
    rhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_rhs_int4()?;
    check_nk(n, k)?;
    rhs.check(n, k)?;
    check_channel_params(n, scale, bias)?;
    let size = packed_size(n, k, packing)?;
    if rhs_packed.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: rhs_packed.len(), needed: size });
    }

    let nr = packing.nr;
    let bd = packing.kr / packing.sr;
    let kp = padded_k(k)?;
    let ts = tile_stride(k, nr)?;
    let n_pad = n.div_ceil(nr) * nr;
    // NxK channels with whole 32-depth groups whose chunks are 4, 8 or 16 bytes: NEON, 16 bytes
    // a group (the last partial group, padding channels and KxN take the group path below).
    let fast = cfg!(all(target_arch = "aarch64", target_feature = "neon"))
        && rhs.layout == Layout::NxK
        && matches!(bd, 4 | 8 | 16);
    for c in 0..n_pad {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
        let src = c.min(n - 1);
        // Wrapping like the kernels, which compute modulo 2^32: `16 * sum` wraps for k > 2^24.
        let mut sum = 0i32;
        let whole = if fast && c < n { k / 32 } else { 0 };
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if whole > 0 {
            let row = rhs.data[c * rhs.stride..][..16 * whole].as_ptr();
            let dst = tile.as_mut_ptr().wrapping_add(i * bd);
            let signed = rhs.encoding == crate::rhs::Int4Encoding::Signed;
            // SAFETY: group `g < whole` reads the row's 16 bytes `16g..16g + 16` (inside the
            // `16 * whole` bytes just sliced) and writes chunks `t < 16 / bd` at
            // `dst + (16g / bd + t) * nr * bd`: column `i`'s bytes of the tile's group `g`.
            sum = unsafe { neon::pack_groups(row, whole, signed, dst, bd, nr * bd) };
        }
        for g in whole..kp / 32 {
            let values = rhs.group(n, k, c, g);
            sum = sum.wrapping_add(values.iter().map(|&v| i32::from(v)).sum::<i32>());
            let bytes = pair_group(&values);
            for (t, chunk) in bytes.chunks_exact(bd).enumerate() {
                let at = (16 * g / bd + t) * nr * bd + i * bd;
                tile[at..at + bd].copy_from_slice(chunk);
            }
        }
        let extras = nr * kp / 2;
        write_u32(tile, extras + 4 * i, sum.wrapping_mul(16) as u32);
        write_u32(tile, extras + 4 * nr + 4 * i, (scale[src] * 0.0625).to_bits());
        let b = bias.map_or(0.0, |b| b[src]);
        write_u32(tile, extras + 8 * nr + 4 * i, b.to_bits());
    }
    Ok(())
}

/// The NEON group packer of NxK int4 rows.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use core::arch::aarch64::*;

    /// Packs `groups` 32-depth groups of one NxK row at `row` (16 source bytes each, s1s0:
    /// depths `2t`, `2t + 1` in byte `t`): byte `q` of a packed group holds depth `q` in its low
    /// nibble and depth `q + 16` in its high one, two's complement, stored as chunks of `bd`
    /// bytes `step` apart (chunk `t` of group `g` at `dst + (16g / bd + t) * step`). Returns
    /// the sum of the values. `signed`: the nibbles are two's complement; else zero point 8.
    ///
    /// In registers: with `u` the unsigned nibble `value + 8` (`x ^ 0x88` for signed input),
    /// `ZIP1`/`ZIP2` of the bytes and their high nibbles give depths 0-15 and 16-31, `SLI #4`
    /// joins them, `EOR 0x88` makes them two's complement; the sum is `sum(u) - 8 * 32` per
    /// group, accumulated with `UADALP`.
    ///
    /// # Safety
    ///
    /// `row` is readable for `16 * groups` bytes; `dst + t * step` is writable for `bd` bytes
    /// (`bd` 4, 8 or 16) for every `t < 16 * groups / bd`.
    pub(super) unsafe fn pack_groups(
        row: *const u8,
        groups: usize,
        signed: bool,
        dst: *mut u8,
        bd: usize,
        step: usize,
    ) -> i32 {
        // SAFETY: forwarded from the caller's contract (`bd` is 4, 8 or 16).
        unsafe {
            match (bd, signed) {
                (16, false) => pack_groups_bd::<16, false>(row, groups, dst, step),
                (8, false) => pack_groups_bd::<8, false>(row, groups, dst, step),
                (_, false) => pack_groups_bd::<4, false>(row, groups, dst, step),
                (16, true) => pack_groups_bd::<16, true>(row, groups, dst, step),
                (8, true) => pack_groups_bd::<8, true>(row, groups, dst, step),
                (_, true) => pack_groups_bd::<4, true>(row, groups, dst, step),
            }
        }
    }

    /// [`pack_groups`] for chunks of `BD` bytes and two's complement (`SIGNED`) or zero-point-8
    /// nibbles.
    ///
    /// # Safety
    ///
    /// As [`pack_groups`] with `bd = BD`.
    #[inline(always)]
    unsafe fn pack_groups_bd<const BD: usize, const SIGNED: bool>(
        row: *const u8,
        groups: usize,
        dst: *mut u8,
        step: usize,
    ) -> i32 {
        // SAFETY: NEON is enabled for the whole target; the loads and stores are the caller's
        // contract.
        unsafe {
            let k88 = vdupq_n_u8(0x88);
            let advance = 16 / BD * step;
            // One group: `u` (unsigned nibbles) into the packed bytes at `at`. `ZIP1` of the raw
            // bytes and the high nibbles puts depth `q`'s nibble in the low half of byte `q`
            // (its high half, another depth, is overwritten by `SLI`), `ZIP2` the depths 16 on.
            // Sums: `u_lo + u_hi = u - 15 * u_hi` per byte, so `UADALP` of `u` and of the high
            // nibbles into u16 lanes (at most 510 a group per lane).
            let group = |src: *const u8, at: *mut u8, acc: (uint16x8_t, uint16x8_t)| {
                let x = vld1q_u8(src);
                let u = if SIGNED { veorq_u8(x, k88) } else { x };
                let hi = vshrq_n_u8::<4>(u);
                let packed = veorq_u8(vsliq_n_u8::<4>(vzip1q_u8(u, hi), vzip2q_u8(u, hi)), k88);
                crate::packing::store_chunks_strided::<BD>(packed, at, step);
                (vpadalq_u8(acc.0, u), vpadalq_u8(acc.1, hi))
            };
            let (mut src, mut at) = (row, dst);
            // Folded into `total` every 128 groups (64 per accumulator pair: u16 lanes).
            let mut total = 0u32;
            let mut done = 0;
            while done < groups {
                let batch = (groups - done).min(128);
                let zero = vdupq_n_u16(0);
                let (mut a0, mut a1) = ((zero, zero), (zero, zero));
                for _ in 0..batch / 2 {
                    a0 = group(src, at, a0);
                    a1 = group(src.add(16), at.add(advance), a1);
                    src = src.add(32);
                    at = at.add(2 * advance);
                }
                if batch % 2 == 1 {
                    a0 = group(src, at, a0);
                    src = src.add(16);
                    at = at.add(advance);
                }
                let bytes = vaddlvq_u16(a0.0).wrapping_add(vaddlvq_u16(a1.0));
                let highs = vaddlvq_u16(a0.1).wrapping_add(vaddlvq_u16(a1.1));
                total = total.wrapping_add(bytes.wrapping_sub(15 * highs));
                done += batch;
            }
            // `sum(values) = sum(u) - 8 * 32` per group, modulo 2^32 like the group path.
            (total as i32).wrapping_sub((256 * groups) as i32)
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::rhs::Int4Encoding;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn every_packing_matches_the_element_formula() {
        let mut s = 3u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 24) as u8
        };
        for (n, k) in [(5usize, 32usize), (8, 4096), (7, 100), (4, 64), (9, 31), (2, 8256)] {
            for layout in [Layout::NxK, Layout::KxN] {
                let (rows, row_bytes) = if layout == Layout::NxK { (n, k.div_ceil(2)) } else { (k, n.div_ceil(2)) };
                let stride = row_bytes + 3;
                let data: Vec<u8> = (0..rows * stride).map(|_| next()).collect();
                let scale: Vec<f32> = (0..n).map(|c| 0.5 + c as f32).collect();
                let bias: Vec<f32> = (0..n).map(|c| c as f32 - 2.0).collect();
                for encoding in [Int4Encoding::Signed, Int4Encoding::ZeroPoint8] {
                    let src = Int4Source { data: &data, layout, stride, encoding };
                    for (nr, kr) in [(4, 8), (4, 16), (8, 16), (8, 32), (4, 4), (4, 2)] {
                        let p = Packing { mr: 1, nr, kr, sr: 2 };
                        let size = packed_size(n, k, &p).unwrap();
                        let mut got = vec![0x5au8; size];
                        pack(&p, n, k, &src, &scale, Some(&bias), &mut got).unwrap();
                        let (bd, kp, ts) = (kr / 2, k.div_ceil(32) * 32, tile_stride(k, nr).unwrap());
                        let mut want = vec![0u8; size];
                        for c in 0..n.div_ceil(nr) * nr {
                            let (t, i) = (c / nr * ts, c % nr);
                            let v = |j: usize| if j < k { src.value(n, c, j) } else { 0 };
                            let mut sum = 0i32;
                            for q in 0..kp / 2 {
                                let (d, e) = (32 * (q / 16) + q % 16, 32 * (q / 16) + q % 16 + 16);
                                sum += i32::from(v(d)) + i32::from(v(e));
                                want[t + (q / bd) * nr * bd + i * bd + q % bd] =
                                    (v(d) as u8 & 0xf) | ((v(e) as u8) << 4);
                            }
                            let x = t + nr * kp / 2;
                            want[x + 4 * i..x + 4 * i + 4].copy_from_slice(&(16 * sum).to_le_bytes());
                            let sc = scale[c.min(n - 1)] * 0.0625;
                            want[x + 4 * nr + 4 * i..x + 4 * nr + 4 * i + 4].copy_from_slice(&sc.to_le_bytes());
                            let b = bias[c.min(n - 1)];
                            want[x + 8 * nr + 4 * i..x + 8 * nr + 4 * i + 4].copy_from_slice(&b.to_le_bytes());
                        }
                        assert_eq!(got, want, "n {n} k {k} {layout:?} {encoding:?} nr {nr} kr {kr}");
                    }
                }
            }
        }
    }

    #[test]
    fn spec_example_byte_position() {
        // docs/formats.md, §RHS: nr = 4, kr = 8, sr = 2: column 3, byte q = 18 sits at 78 and holds
        // depths 34 (low) and 50 (high).
        let (nr, bd, q, i) = (4usize, 4usize, 18usize, 3usize);
        assert_eq!((q / bd) * nr * bd + i * bd + q % bd, 78);
        assert_eq!(32 * (q / 16) + q % 16, 34);
    }
}
