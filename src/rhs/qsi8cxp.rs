//! `qsi8cxp`: int8 weights, symmetric, one f32 scale per output channel, packed in tiles of
//! `nr` channels (`rhs_pack_{nxk,kxn}_qsi8cxp_qsi8cx`; docs/formats.md, §RHS `qsi8cxp`).
//!
//! Tile layout (`Kp = roundup(k, 32)`, `sr = 1` so `bd = kr`, tile stride `nr * (Kp + 12)`
//! bytes):
//!
//! ```text
//! 0            nr*Kp    data: column i's depth j at (j/bd)*nr*bd + i*bd + j%bd (0 for j >= k)
//! nr*Kp        4*nr     i32 rsum[i] = sum_j w[c][j]   (wrapping)
//! nr*Kp+4*nr   4*nr     f32 scale[c]
//! nr*Kp+8*nr   4*nr     f32 bias[c] (0 when absent)
//! ```

use crate::arith::write_u32;
use crate::error::{Buffer, Error, Result, Stride};
use crate::packing::{Packing, padded_k};
use crate::rhs::{Layout, check_channel_params, check_nk};

/// Raw int8 weights, one value per byte.
///
/// NxK: element `(c, j)` is `data[c * stride + j]`. KxN: element `(c, j)` is
/// `data[j * stride + c]`.
#[derive(Debug, Clone, Copy)]
pub struct Int8Source<'a> {
    /// The values.
    pub data: &'a [i8],
    /// Orientation.
    pub layout: Layout,
    /// Row stride in elements (bytes): at least `k` (NxK) or `n` (KxN).
    pub stride: usize,
}

impl<'a> Int8Source<'a> {
    /// Dense NxK weights: `n` rows of `k` values.
    pub const fn nxk(data: &'a [i8], k: usize) -> Self {
        Int8Source { data, layout: Layout::NxK, stride: k }
    }

    /// Dense KxN weights: `k` rows of `n` values.
    pub const fn kxn(data: &'a [i8], n: usize) -> Self {
        Int8Source { data, layout: Layout::KxN, stride: n }
    }

    /// Checks the stride and the length of `data` for an `n x k` weight matrix.
    fn check(&self, n: usize, k: usize) -> Result<()> {
        let (rows, row) = match self.layout {
            Layout::NxK => (n, k),
            Layout::KxN => (k, n),
        };
        if self.stride < row {
            return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: self.stride, needed: row });
        }
        let needed = (rows - 1).checked_mul(self.stride).and_then(|v| v.checked_add(row));
        let needed = needed.ok_or(Error::SizeOverflow)?;
        if self.data.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: self.data.len(), needed });
        }
        Ok(())
    }

    /// The value of channel `c` at depth `j < k`; a padding channel `c >= n` copies channel
    /// `n - 1` in both layouts (docs/formats.md, §RHS `qsi8cxp`).
    #[inline]
    fn value(&self, n: usize, c: usize, j: usize) -> i8 {
        let c = c.min(n - 1);
        match self.layout {
            Layout::NxK => self.data[c * self.stride + j],
            Layout::KxN => self.data[j * self.stride + c],
        }
    }
}

/// Bytes of one packed tile of `nr` channels: `nr * (Kp + 12)`.
pub fn tile_stride(k: usize, nr: usize) -> Result<usize> {
    padded_k(k)?.checked_add(12).and_then(|b| b.checked_mul(nr)).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed RHS for `n` channels (`get_rhs_packed_size`).
pub fn packed_size(n: usize, k: usize, packing: &Packing) -> Result<usize> {
    packing.check_rhs_int8()?;
    n.div_ceil(packing.nr).checked_mul(tile_stride(k, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Byte offset of the tile that holds channel `n_idx` (`get_rhs_packed_offset`); `n_idx` must
/// be a multiple of `nr`.
pub fn packed_offset(n_idx: usize, k: usize, packing: &Packing) -> Result<usize> {
    packing.check_rhs_int8()?;
    packing.check_n_start(n_idx)?;
    (n_idx / packing.nr).checked_mul(tile_stride(k, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Packs `n` channels of int8 weights with per-channel f32 scales and an optional f32 bias.
///
/// * `rhs`: the raw weights ([`Int8Source`]: NxK or KxN, row stride in elements).
/// * `scale`: `n` f32 scales, stored as given; `bias`: `n` f32 values or `None` (packs zeros).
///   All finite.
/// * `rhs_packed`: at least [`packed_size`] bytes; exactly that many are written.
///
/// Channels past `n` in the last tile copy channel `n - 1`, as KleidiAI's packers do, so the
/// packed bytes equal KleidiAI's for the same input. `rsum` wraps modulo 2^32 like the kernels'
/// sums (it cannot for `k < 2^24`).
pub fn pack(
    packing: &Packing,
    n: usize,
    k: usize,
    rhs: &Int8Source<'_>,
    scale: &[f32],
    bias: Option<&[f32]>,
    rhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_rhs_int8()?;
    check_nk(n, k)?;
    rhs.check(n, k)?;
    check_channel_params(n, scale, bias)?;
    let size = packed_size(n, k, packing)?;
    if rhs_packed.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: rhs_packed.len(), needed: size });
    }

    let (nr, bd) = (packing.nr, packing.block_depth());
    let kp = padded_k(k)?;
    let ts = tile_stride(k, nr)?;
    // NxK channels (padding channels read row `n - 1`) with chunks of 4 to 32 bytes: NEON, 32
    // depths a block; the depths past the last whole block and KxN take the element loop below.
    let fast = cfg!(all(target_arch = "aarch64", target_feature = "neon"))
        && rhs.layout == Layout::NxK
        && matches!(bd, 4 | 8 | 16 | 32);
    let whole = if fast { k / 32 } else { 0 };
    for c in 0..n.div_ceil(nr) * nr {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
        let src = c.min(n - 1);
        let mut sum = 0i32;
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if whole > 0 {
            let row = rhs.data[src * rhs.stride..][..32 * whole].as_ptr().cast::<u8>();
            let dst = tile.as_mut_ptr().wrapping_add(i * bd);
            // SAFETY: `row` is the `32 * whole` bytes just sliced. Depth `q < 32 * whole <= Kp`
            // goes to `dst + (q / bd) * nr * bd + q % bd` = tile byte
            // `(q / bd) * nr * bd + i * bd + q % bd < nr * Kp <= ts`, column `i`'s byte of `q`.
            sum = unsafe { neon::pack_blocks(row, whole, dst, bd, nr * bd) };
        }
        for j in 32 * whole..kp {
            let v = if j < k { rhs.value(n, c, j) } else { 0 };
            sum = sum.wrapping_add(i32::from(v));
            tile[(j / bd) * nr * bd + i * bd + j % bd] = v as u8;
        }
        let extras = nr * kp;
        write_u32(tile, extras + 4 * i, sum as u32);
        write_u32(tile, extras + 4 * nr + 4 * i, scale[src].to_bits());
        let b = bias.map_or(0.0, |b| b[src]);
        write_u32(tile, extras + 8 * nr + 4 * i, b.to_bits());
    }
    Ok(())
}

/// The NEON block packer of NxK int8 rows.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use core::arch::aarch64::*;

    /// Copies `blocks` 32-depth blocks of one NxK row at `row` into chunks of `bd` bytes
    /// (4, 8, 16 or 32) `step` apart: depth `q` goes to `dst + (q / bd) * step + q % bd`.
    /// Returns the sum of the values modulo 2^32.
    ///
    /// # Safety
    ///
    /// `row` is readable for `32 * blocks` bytes; `dst + t * step` is writable for `bd` bytes
    /// for every `t < 32 * blocks / bd`.
    pub(super) unsafe fn pack_blocks(row: *const u8, blocks: usize, dst: *mut u8, bd: usize, step: usize) -> i32 {
        // SAFETY: forwarded from the caller's contract (`bd` is 4, 8, 16 or 32).
        unsafe {
            match bd {
                32 => pack_blocks_bd::<32>(row, blocks, dst, step),
                16 => pack_blocks_bd::<16>(row, blocks, dst, step),
                8 => pack_blocks_bd::<8>(row, blocks, dst, step),
                _ => pack_blocks_bd::<4>(row, blocks, dst, step),
            }
        }
    }

    /// [`pack_blocks`] for chunks of `BD` bytes.
    ///
    /// # Safety
    ///
    /// As [`pack_blocks`] with `bd = BD`.
    #[inline(always)]
    unsafe fn pack_blocks_bd<const BD: usize>(row: *const u8, blocks: usize, dst: *mut u8, step: usize) -> i32 {
        // SAFETY: NEON is enabled for the whole target; the loads and stores are the caller's
        // contract: block `b` reads `row + 32b .. + 32` and writes its chunks, the first 16
        // depths at `at`, the next 16 at `at + half` (`BD = 32`: one chunk, its second half).
        unsafe {
            // Bytes from one block's chunks to the next's, and from its first 16 depths to the
            // next 16.
            let advance = if BD == 32 { step } else { 32 / BD * step };
            let half = if BD == 32 { 16 } else { 16 / BD * step };
            let store = |v: int8x16_t, at: *mut u8| {
                let b = vreinterpretq_u8_s8(v);
                if BD == 32 { vst1q_u8(at, b) } else { crate::packing::store_chunks_strided::<BD>(b, at, step) }
            };
            let (mut src, mut at) = (row, dst);
            let mut total = 0i32;
            let mut done = 0;
            while done < blocks {
                // `SADALP` into i16 lanes: at most 64 * 2 * 128 = 16384 in magnitude a batch.
                let batch = (blocks - done).min(64);
                let (mut a0, mut a1) = (vdupq_n_s16(0), vdupq_n_s16(0));
                for _ in 0..batch {
                    let x0 = vld1q_s8(src.cast::<i8>());
                    let x1 = vld1q_s8(src.add(16).cast::<i8>());
                    store(x0, at);
                    store(x1, at.add(half));
                    a0 = vpadalq_s8(a0, x0);
                    a1 = vpadalq_s8(a1, x1);
                    src = src.add(32);
                    at = at.add(advance);
                }
                total = total.wrapping_add(vaddlvq_s16(a0)).wrapping_add(vaddlvq_s16(a1));
                done += batch;
            }
            total
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// The packed bytes by the element formula of the module docs.
    fn reference(p: &Packing, n: usize, k: usize, src: &Int8Source<'_>, scale: &[f32], bias: &[f32]) -> Vec<u8> {
        let (nr, bd, kp) = (p.nr, p.kr, k.div_ceil(32) * 32);
        let ts = nr * (kp + 12);
        let mut want = vec![0u8; n.div_ceil(nr) * ts];
        for c in 0..n.div_ceil(nr) * nr {
            let (t, i, cc) = (c / nr * ts, c % nr, c.min(n - 1));
            let mut sum = 0i64;
            for j in 0..kp {
                let v = if j < k { src.value(n, c, j) } else { 0 };
                sum += i64::from(v);
                want[t + (j / bd) * nr * bd + i * bd + j % bd] = v as u8;
            }
            let x = t + nr * kp;
            want[x + 4 * i..x + 4 * i + 4].copy_from_slice(&(sum as i32).to_le_bytes());
            want[x + 4 * nr + 4 * i..x + 4 * nr + 4 * i + 4].copy_from_slice(&scale[cc].to_le_bytes());
            want[x + 8 * nr + 4 * i..x + 8 * nr + 4 * i + 4].copy_from_slice(&bias[cc].to_le_bytes());
        }
        want
    }

    #[test]
    fn every_packing_matches_the_element_formula() {
        let mut s = 7u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 24) as u8
        };
        // Long rows of -128 and 127 cross the i16 batches of the NEON sums.
        let shapes = [(5usize, 32usize), (8, 4096), (7, 100), (4, 64), (9, 31), (2, 8256), (3, 2080), (1, 1), (6, 33)];
        for (case, (n, k)) in shapes.into_iter().enumerate() {
            for layout in [Layout::NxK, Layout::KxN] {
                let (rows, row) = if layout == Layout::NxK { (n, k) } else { (k, n) };
                let stride = row + 5;
                let data: Vec<i8> = (0..rows * stride)
                    .map(|x| match case % 3 {
                        0 => next() as i8,
                        1 if x % 7 == 0 => 127,
                        1 => -128,
                        _ => [-128i8, 127, 0, -1, 1][usize::from(next()) % 5],
                    })
                    .collect();
                let scale: Vec<f32> = (0..n).map(|c| [0.0, 1e-30, 3e30, -0.25][c % 4] + c as f32).collect();
                let bias: Vec<f32> = (0..n).map(|c| c as f32 - 2.5).collect();
                let src = Int8Source { data: &data, layout, stride };
                for (nr, kr) in [(4, 4), (4, 8), (8, 16), (4, 32), (3, 8), (2, 2), (1, 1)] {
                    let p = Packing::int8(1, nr, kr);
                    let size = packed_size(n, k, &p).unwrap();
                    let mut got = vec![0x5au8; size];
                    pack(&p, n, k, &src, &scale, Some(&bias), &mut got).unwrap();
                    assert_eq!(got, reference(&p, n, k, &src, &scale, &bias), "n {n} k {k} {layout:?} nr {nr} kr {kr}");
                }
            }
        }
    }

    #[test]
    fn tile_layout_and_padding_channels() {
        // nr 4, kr 8: k = 40 pads to Kp = 64; channel 5 of n = 6 is column 1 of tile 1, the
        // padding channels 6 and 7 copy channel 5.
        let (n, k) = (6usize, 40usize);
        let p = Packing::int8(1, 4, 8);
        let w: [i8; 240] = core::array::from_fn(|x| (x as i32 % 251 - 125) as i8);
        let mut out = [0u8; 2 * 4 * (64 + 12)];
        let scale = [0.5f32; 6];
        pack(&p, n, k, &Int8Source::nxk(&w, k), &scale, None, &mut out).unwrap();
        let ts = tile_stride(k, 4).unwrap();
        assert_eq!(ts, 304);
        let at = |c: usize, j: usize| out[c / 4 * ts + (j / 8) * 32 + (c % 4) * 8 + j % 8] as i8;
        for c in 0..8 {
            for j in 0..64 {
                let want = if j < k { w[c.min(5) * k + j] } else { 0 };
                assert_eq!(at(c, j), want, "c {c} j {j}");
            }
            let rsum = i32::from_le_bytes(out[c / 4 * ts + 256 + 4 * (c % 4)..][..4].try_into().unwrap());
            assert_eq!(rsum, (0..k).map(|j| i32::from(w[c.min(5) * k + j])).sum::<i32>());
        }
    }

    #[test]
    fn rejects_int4_packing_and_short_buffers() {
        let w = [0i8; 64];
        let mut out = [0u8; 4 * 44];
        let src = Int8Source::nxk(&w, 32);
        let e = pack(&Packing::int4(1, 4, 8), 2, 32, &src, &[1.0; 2], None, &mut out);
        assert!(matches!(e, Err(Error::Unsupported { .. })));
        let e = pack(&Packing::int8(1, 4, 8), 3, 32, &src, &[1.0; 3], None, &mut out);
        assert!(matches!(e, Err(Error::BufferTooShort { buffer: Buffer::Rhs, .. })));
        let e = pack(&Packing::int8(1, 4, 8), 2, 32, &src, &[1.0; 2], None, &mut out[..100]);
        assert!(matches!(e, Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, .. })));
        let e = pack(&Packing::int8(1, 4, 8), 2, 32, &src, &[1.0, f32::NAN], None, &mut out);
        assert!(matches!(e, Err(Error::NonFinite { buffer: Buffer::Scale, index: 1 })));
    }
}
