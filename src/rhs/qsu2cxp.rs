//! `qsu2cxp`: 2-bit weight codes mapped through a 4-entry look-up table, one f32 scale per output
//! channel, f32 bias (`rhs_pack_nxk_qsu2cxp4x4bf32sf32_qsu2cx_neon`; family
//! [`qai8dxp_qsu2cxp`](crate::qai8dxp_qsu2cxp)).
//!
//! Raw input (NxK only, what the caller provides):
//!
//! * `rhs`: `n` rows of `rhs_stride >= k/4` bytes; depth `j` of channel `c` is the unsigned 2-bit
//!   code `u = (rhs[c * rhs_stride + j/4] >> (2 * (j % 4))) & 3` (first depth in the lowest bits);
//! * `lut`: the table, four `i32`, or `None` for [`DEFAULT_LUT`] `{-2, -1, 0, 1}` (the weight is
//!   then `u - 2`). The weight of code `u` is `lut[u]`, used as int8. Every entry must lie in
//!   `[-64, 63]` ([`Error::LutOutOfRange`]; see below). The kernels take the **same** table at
//!   run time ([`MatmulArgs::with_lut`](crate::MatmulArgs::with_lut)): the packed data keeps
//!   the unmapped codes, only `rsum` depends on the table here;
//! * `scale`: `n` f32 (dequantization scale per channel, copied); `bias`: `n` f32 or `None`
//!   (zeros). All finite.
//!
//! Packings: `nr = 4`, `kr = 4`, `sr = 1` only (KleidiAI's packer declares `nr == 4` and
//! `kr / sr == 4`; qgemm's kernels of the family use `kr = 4, sr = 1`), `k` a multiple of 32.
//!
//! Tile layout (4 channels, tile stride `nr * (k/4 + 12)` bytes):
//!
//! ```text
//! 0            nr*k/4   codes: depths 16g..16g+15 of the tile's columns take the 16 bytes at
//!                       16g; column i owns bytes 16g + 4i .. 16g + 4i + 3, and its byte t holds
//!                       the codes of depths 16g + t, + 4, + 8, + 12 in bits 0-1, 2-3, 4-5, 6-7
//! nr*k/4       4*nr     i32 rsum[i] = sum_j lut[u[c][j]]
//! nr*k/4+4*nr  4*nr     f32 scale[c] (copied)
//! nr*k/4+8*nr  4*nr     f32 bias[c] (0 when absent)
//! ```
//!
//! **Padding channels** (`n <= c < roundup(n, 4)`) are *not* copies of channel `n - 1` (unlike
//! the other RHS formats): their code bytes are `0xAA` (code 2 everywhere) and their `rsum`,
//! `scale` and `bias` are 0, as KleidiAI writes them.
//!
//! Divergence from KleidiAI (table narrowing): KleidiAI's kernels use the table narrowed to
//! int8, and its packer sums the table values for `rsum` in int8 (wrapping) for every tile but
//! the last and in int32 for the last one. For entries in `[-64, 63]` all three agree; for
//! others the packed `rsum` and the kernels disagree (depending on the tile), so qgemm rejects
//! such tables in the packer and in [`Kernel::run`](crate::Kernel::run).

use crate::arith::write_u32;
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};
use crate::packing::Packing;
use crate::rhs::{check_channel_params, check_nk};

/// The table KleidiAI uses when given none: code `u` stands for `u - 2`.
pub const DEFAULT_LUT: [i32; 4] = [-2, -1, 0, 1];

/// Smallest table entry qgemm accepts.
pub const LUT_MIN: i32 = -64;
/// Largest table entry qgemm accepts.
pub const LUT_MAX: i32 = 63;

/// Every entry of `lut` in `[LUT_MIN, LUT_MAX]`, else [`Error::LutOutOfRange`] with the first
/// offending one.
pub fn check_lut(lut: &[i32; 4]) -> Result<()> {
    match lut.iter().position(|v| !(LUT_MIN..=LUT_MAX).contains(v)) {
        Some(index) => Err(Error::LutOutOfRange { index, value: lut[index] }),
        None => Ok(()),
    }
}

/// `k >= 1` and a multiple of 32 (the depth granule of the format).
pub(crate) fn check_depth(k: usize) -> Result<()> {
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    if !k.is_multiple_of(32) {
        return Err(Error::NotMultiple { dim: Dim::K, value: k, multiple_of: 32 });
    }
    Ok(())
}

/// The format's packing: `nr = 4`, `kr = 4`, `sr = 1` (any legal `mr`).
pub(crate) fn check_packing(packing: &Packing) -> Result<()> {
    packing.check_rhs_int8()?;
    if packing.nr != 4 {
        return Err(Error::Unsupported { param: Param::Nr, value: packing.nr });
    }
    if packing.kr != 4 {
        return Err(Error::Unsupported { param: Param::Kr, value: packing.kr });
    }
    Ok(())
}

/// Bytes of one packed tile of `nr` channels: `nr * (k/4 + 12)`; `k` a non-zero multiple of 32.
pub fn tile_stride(k: usize, nr: usize) -> Result<usize> {
    check_depth(k)?;
    (k / 4).checked_add(12).and_then(|b| b.checked_mul(nr)).ok_or(Error::SizeOverflow)
}

/// Bytes of the packed RHS for `n` channels (`get_rhs_packed_size`).
pub fn packed_size(n: usize, k: usize, packing: &Packing) -> Result<usize> {
    check_packing(packing)?;
    n.div_ceil(packing.nr).checked_mul(tile_stride(k, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Byte offset of the tile that holds channel `n_idx` (`get_rhs_packed_offset`); `n_idx` must
/// be a multiple of `nr`.
pub fn packed_offset(n_idx: usize, k: usize, packing: &Packing) -> Result<usize> {
    check_packing(packing)?;
    packing.check_n_start(n_idx)?;
    (n_idx / packing.nr).checked_mul(tile_stride(k, packing.nr)?).ok_or(Error::SizeOverflow)
}

/// Packs `n` channels of 2-bit codes with per-channel f32 scales and an optional f32 bias.
///
/// * `rhs`: `n` rows of `rhs_stride` bytes (`>= k/4`), four codes per byte, first depth in the
///   lowest bits; `k` a non-zero multiple of 32.
/// * `scale`: `n` finite f32 scales, stored as given; `bias`: `n` finite values or `None`
///   (zeros).
/// * `lut`: the table (every entry in `[-64, 63]`), or `None` for [`DEFAULT_LUT`]. Pass the
///   same table to the kernels ([`MatmulArgs::with_lut`](crate::MatmulArgs::with_lut)).
/// * `rhs_packed`: at least [`packed_size`] bytes; exactly that many are written.
///
/// The bytes equal KleidiAI's for the same input (padding channels: codes `0xAA`, zero `rsum`,
/// `scale` and `bias`). Every check is made before a byte is written.
#[allow(clippy::too_many_arguments)]
pub fn pack(
    packing: &Packing,
    n: usize,
    k: usize,
    rhs: &[u8],
    rhs_stride: usize,
    scale: &[f32],
    bias: Option<&[f32]>,
    lut: Option<&[i32; 4]>,
    rhs_packed: &mut [u8],
) -> Result<()> {
    check_packing(packing)?;
    check_nk(n, k)?;
    check_depth(k)?;
    let lut = lut.unwrap_or(&DEFAULT_LUT);
    check_lut(lut)?;
    let row_bytes = k / 4;
    if rhs_stride < row_bytes {
        return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: rhs_stride, needed: row_bytes });
    }
    let needed = (n - 1).checked_mul(rhs_stride).and_then(|v| v.checked_add(row_bytes));
    let needed = needed.ok_or(Error::SizeOverflow)?;
    if rhs.len() < needed {
        return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: rhs.len(), needed });
    }
    check_channel_params(n, scale, bias)?;
    let size = packed_size(n, k, packing)?;
    if rhs_packed.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: rhs_packed.len(), needed: size });
    }

    let nr = packing.nr;
    let ts = tile_stride(k, nr)?;
    let data = nr * row_bytes;
    // Whole tiles (no padding channel) take NEON for their first `64 * (k / 64)` depths; the
    // last 32 depths when `k % 64 == 32` and the tile with padding channels take the group loop.
    let steps = if cfg!(all(target_arch = "aarch64", target_feature = "neon")) { k / 64 } else { 0 };
    // The table's sums over the two codes of a nibble: in `[-128, 126]` for entries in
    // `[-64, 63]`.
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let pairs: [i8; 16] = core::array::from_fn(|x| (lut[x & 3] + lut[x >> 2]) as i8);
    for tl in 0..n.div_ceil(nr) {
        let tile = &mut rhs_packed[tl * ts..(tl + 1) * ts];
        let fast = steps > 0 && (tl + 1) * nr <= n;
        let g0 = if fast { 4 * steps } else { 0 };
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        let sums = if fast {
            let rows: [*const u8; 4] =
                core::array::from_fn(|i| rhs[(tl * nr + i) * rhs_stride..][..16 * steps].as_ptr());
            // SAFETY: `rows[i]` is the first `16 * steps` bytes of channel `4 tl + i`'s row, just
            // sliced; the tile's first `64 * steps <= nr * k / 4` bytes are its code bytes of
            // groups `0 .. 4 * steps`.
            unsafe { neon::pack_tile(rows, steps, tile.as_mut_ptr(), &pairs) }
        } else {
            [0; 4]
        };
        #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
        let sums = [0i32; 4];
        // `nr == 4` (`check_packing`): one sum per column.
        for (i, &sum) in sums.iter().enumerate() {
            let c = tl * nr + i;
            let (mut rsum, mut sc, mut b) = (sum, 0.0f32, 0.0f32);
            for g in g0..k / 16 {
                let out = &mut tile[g * 4 * nr + 4 * i..g * 4 * nr + 4 * i + 4];
                if c >= n {
                    out.fill(0xaa);
                    continue;
                }
                // Raw bytes 4g + s hold depths 16g + 4s + t (t = 0..3) at bits 2t; packed byte t
                // holds depth 16g + 4s + t at bits 2s: a 4 x 4 transpose of 2-bit fields.
                let raw = &rhs[c * rhs_stride + 4 * g..c * rhs_stride + 4 * g + 4];
                for (t, o) in out.iter_mut().enumerate() {
                    let mut byte = 0u8;
                    for (s, &r) in raw.iter().enumerate() {
                        let u = (r >> (2 * t)) & 3;
                        rsum = rsum.wrapping_add(lut[usize::from(u)]);
                        byte |= u << (2 * s);
                    }
                    *o = byte;
                }
            }
            if c < n {
                sc = scale[c];
                b = bias.map_or(0.0, |b| b[c]);
            }
            write_u32(tile, data + 4 * i, rsum as u32);
            write_u32(tile, data + 4 * nr + 4 * i, sc.to_bits());
            write_u32(tile, data + 8 * nr + 4 * i, b.to_bits());
        }
    }
    Ok(())
}

/// The NEON tile packer: four channels at a time, 64 depths a step.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use core::arch::aarch64::*;

    /// Packs `steps` steps of 64 depths (16 raw bytes of each of the 4 rows at `rows`) into the
    /// code bytes at `dst` (64 bytes a step: groups `4s .. 4s + 4`) and returns each row's
    /// `sum lut[u]` modulo 2^32, given `pairs[x] = lut[x & 3] + lut[x >> 2]` (the sum over the
    /// two codes of a nibble `x`).
    ///
    /// In registers, for one step: `R_i` holds row `i`'s raw bytes `4m + s` (group `m`, depths
    /// `16m + 4s + t` at bits `2t`). `TRN1`/`TRN2` of bytes then of halfwords give `B_s` with
    /// `B_s[4m + i] = R_i[4m + s]`; the 4 x 4 transpose of the 2-bit fields `(s, t)` across
    /// `B_0..B_3` is two exchanges, `s0 <-> t0` (`BSL` with `0x33` and shifts by 2) then
    /// `s1 <-> t1` (`SLI`/`SRI #4`), giving `D_t` with packed byte `t` of column `i`, group `m`
    /// in lane `4m + i`; `ST4` stores byte `4 * lane + t`: `16m + 4i + t`, the tile's layout.
    /// Sums: `TBL` of each raw byte's two nibbles in `pairs`, `SADALP` into i16 lanes per row.
    ///
    /// # Safety
    ///
    /// Each `rows[i]` is readable for `16 * steps` bytes; `dst` is writable for `64 * steps`.
    pub(super) unsafe fn pack_tile(rows: [*const u8; 4], steps: usize, dst: *mut u8, pairs: &[i8; 16]) -> [i32; 4] {
        // SAFETY: NEON is enabled for the whole target; step `j` reads bytes `16j .. 16j + 16`
        // of every row and writes bytes `64j .. 64j + 64` at `dst`, inside the caller's bounds.
        unsafe {
            let table = vld1q_s8(pairs.as_ptr());
            let (m0f, m33) = (vdupq_n_u8(0x0f), vdupq_n_u8(0x33));
            let [mut r0, mut r1, mut r2, mut r3] = rows;
            let mut at = dst;
            let mut sums = [0i32; 4];
            // One row's register into its i16 sums: at most 2 * 256 per lane a step.
            let sum = |acc: int16x8_t, x: uint8x16_t| {
                let lo = vqtbl1q_s8(table, vandq_u8(x, m0f));
                let hi = vqtbl1q_s8(table, vshrq_n_u8::<4>(x));
                vpadalq_s8(vpadalq_s8(acc, lo), hi)
            };
            let h = vreinterpretq_u16_u8;
            let b = vreinterpretq_u8_u16;
            let mut done = 0;
            while done < steps {
                // At most 32 * 512 = 16384 in magnitude per i16 lane a batch.
                let batch = (steps - done).min(32);
                let zero = vdupq_n_s16(0);
                let (mut a0, mut a1, mut a2, mut a3) = (zero, zero, zero, zero);
                for _ in 0..batch {
                    let (x0, x1, x2, x3) = (vld1q_u8(r0), vld1q_u8(r1), vld1q_u8(r2), vld1q_u8(r3));
                    a0 = sum(a0, x0);
                    a1 = sum(a1, x1);
                    a2 = sum(a2, x2);
                    a3 = sum(a3, x3);
                    let (e01, o01) = (vtrn1q_u8(x0, x1), vtrn2q_u8(x0, x1));
                    let (e23, o23) = (vtrn1q_u8(x2, x3), vtrn2q_u8(x2, x3));
                    let b0 = b(vtrn1q_u16(h(e01), h(e23)));
                    let b1 = b(vtrn1q_u16(h(o01), h(o23)));
                    let b2 = b(vtrn2q_u16(h(e01), h(e23)));
                    let b3 = b(vtrn2q_u16(h(o01), h(o23)));
                    // `s0 <-> t0`: fields 1, 3 of `B_0`, `B_2` trade places with fields 0, 2 of
                    // `B_1`, `B_3` (`C_r`, `r = 2 s1 + t0`, field `2 t1 + s0`).
                    let c0 = vbslq_u8(m33, b0, vshlq_n_u8::<2>(b1));
                    let c1 = vbslq_u8(m33, vshrq_n_u8::<2>(b0), b1);
                    let c2 = vbslq_u8(m33, b2, vshlq_n_u8::<2>(b3));
                    let c3 = vbslq_u8(m33, vshrq_n_u8::<2>(b2), b3);
                    // `s1 <-> t1`: the high nibbles of `C_0`, `C_1` trade places with the low
                    // ones of `C_2`, `C_3`.
                    let d = uint8x16x4_t(
                        vsliq_n_u8::<4>(c0, c2),
                        vsliq_n_u8::<4>(c1, c3),
                        vsriq_n_u8::<4>(c2, c0),
                        vsriq_n_u8::<4>(c3, c1),
                    );
                    vst4q_u8(at, d);
                    (r0, r1, r2, r3) = (r0.add(16), r1.add(16), r2.add(16), r3.add(16));
                    at = at.add(64);
                }
                for (s, a) in sums.iter_mut().zip([a0, a1, a2, a3]) {
                    *s = s.wrapping_add(vaddlvq_s16(a));
                }
                done += batch;
            }
            sums
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
    fn reference(
        n: usize,
        k: usize,
        rhs: &[u8],
        stride: usize,
        scale: &[f32],
        bias: &[f32],
        lut: &[i32; 4],
    ) -> Vec<u8> {
        let ts = 4 * (k / 4 + 12);
        let mut want = vec![0u8; n.div_ceil(4) * ts];
        for c in 0..n.div_ceil(4) * 4 {
            let (t, i) = (c / 4 * ts, c % 4);
            let x = t + k;
            if c >= n {
                for g in 0..k / 16 {
                    want[t + 16 * g + 4 * i..t + 16 * g + 4 * i + 4].fill(0xaa);
                }
                continue;
            }
            let mut rsum = 0i64;
            for j in 0..k {
                let u = (rhs[c * stride + j / 4] >> (2 * (j % 4))) & 3;
                rsum += i64::from(lut[usize::from(u)]);
                want[t + 16 * (j / 16) + 4 * i + j % 4] |= u << (2 * (j % 16 / 4));
            }
            want[x + 4 * i..x + 4 * i + 4].copy_from_slice(&(rsum as i32).to_le_bytes());
            want[x + 16 + 4 * i..x + 16 + 4 * i + 4].copy_from_slice(&scale[c].to_le_bytes());
            want[x + 32 + 4 * i..x + 32 + 4 * i + 4].copy_from_slice(&bias[c].to_le_bytes());
        }
        want
    }

    #[test]
    fn every_shape_and_table_matches_the_element_formula() {
        let mut s = 11u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 24) as u8
        };
        let p = Packing::int8(4, 4, 4);
        // k = 4160: 65 NEON steps (two i16 batches and one more); 4128 adds a 32-depth tail.
        let shapes = [(4usize, 32usize), (8, 4096), (7, 96), (4, 64), (9, 4128), (1, 128), (6, 4160), (12, 2080)];
        let luts = [DEFAULT_LUT, [-64, 63, -64, 63], [63; 4], [-64; 4], [5, -37, 0, 61]];
        for (case, (n, k)) in shapes.into_iter().enumerate() {
            let stride = k / 4 + 3;
            let rhs: Vec<u8> = (0..n * stride)
                .map(|x| match case % 3 {
                    0 => next(),
                    1 if x % 5 == 0 => 0x00,
                    1 => 0xff,
                    _ => [0x00, 0xff, 0x55, 0xaa, 0xe4, 0x1b][usize::from(next()) % 6],
                })
                .collect();
            let scale: Vec<f32> = (0..n).map(|c| [0.0, 1e-30, 3e30, -0.25][c % 4] + c as f32).collect();
            let bias: Vec<f32> = (0..n).map(|c| c as f32 - 2.5).collect();
            for lut in &luts {
                let size = packed_size(n, k, &p).unwrap();
                let mut got = vec![0x5au8; size];
                pack(&p, n, k, &rhs, stride, &scale, Some(&bias), Some(lut), &mut got).unwrap();
                assert_eq!(got, reference(n, k, &rhs, stride, &scale, &bias, lut), "n {n} k {k} lut {lut:?}");
            }
        }
    }

    #[test]
    fn tile_layout_rsum_and_padding_channels() {
        // One channel (three padding channels), k = 32: depth j has code j % 4, except depth 5
        // (code 3 instead of 1).
        let p = Packing::int8(4, 4, 4);
        let mut raw = [0xe4u8; 8]; // codes 0, 1, 2, 3 in bits 0-1, 2-3, 4-5, 6-7
        raw[1] = 0xec; // depth 5 (byte 1, bits 2-3) = 3
        let mut out = [0u8; 4 * (8 + 12)];
        pack(&p, 1, 32, &raw, 8, &[0.5], Some(&[7.0]), None, &mut out).unwrap();
        // Column 0, byte t of group 0: depths t, 4 + t, 8 + t, 12 + t, all code t (depth 5: 3).
        assert_eq!(out[..4], [0x00, 0x5d, 0xaa, 0xff]);
        assert_eq!(out[4..16], [0xaa; 12], "padding columns: code 2");
        assert_eq!(out[16..20], [0x00, 0x55, 0xaa, 0xff]);
        assert_eq!(out[20..32], [0xaa; 12]);
        // rsum with {-2, -1, 0, 1}: 8 of each code sum to -16, depth 5 adds 2.
        assert_eq!(i32::from_le_bytes(out[32..36].try_into().unwrap()), -14);
        assert_eq!(out[36..48], [0; 12], "padding rsum");
        assert_eq!(f32::from_le_bytes(out[48..52].try_into().unwrap()), 0.5);
        assert_eq!(out[52..64], [0; 12], "padding scale");
        assert_eq!(f32::from_le_bytes(out[64..68].try_into().unwrap()), 7.0);
        assert_eq!(out[68..80], [0; 12], "padding bias");
        // A custom table changes rsum only: {-3, -1, 1, 3}: 8 * 0 + (3 - (-1)) = 4.
        let mut other = [0u8; 80];
        pack(&p, 1, 32, &raw, 8, &[0.5], Some(&[7.0]), Some(&[-3, -1, 1, 3]), &mut other).unwrap();
        assert_eq!(other[..32], out[..32]);
        assert_eq!(i32::from_le_bytes(other[32..36].try_into().unwrap()), 4);
    }

    #[test]
    fn rejects_tables_outside_the_int8_safe_range_before_writing() {
        let p = Packing::int8(1, 4, 4);
        let raw = [0u8; 8];
        let mut out = [0xeeu8; 80];
        for (lut, index, value) in
            [([-2, -1, 0, 64], 3, 64), ([-65, 0, 0, 0], 0, -65), ([0, i32::MAX, 0, 0], 1, i32::MAX)]
        {
            let e = pack(&p, 1, 32, &raw, 8, &[1.0], None, Some(&lut), &mut out);
            assert_eq!(e, Err(Error::LutOutOfRange { index, value }));
        }
        assert!(out.iter().all(|&b| b == 0xee));
        pack(&p, 1, 32, &raw, 8, &[1.0], None, Some(&[-64, 63, 0, 0]), &mut out).unwrap();
    }

    #[test]
    fn rejects_other_packings() {
        assert_eq!(packed_size(4, 32, &Packing::int8(4, 8, 4)), Err(Error::Unsupported { param: Param::Nr, value: 8 }));
        assert_eq!(packed_size(4, 32, &Packing::int8(4, 4, 8)), Err(Error::Unsupported { param: Param::Kr, value: 8 }));
        assert_eq!(packed_size(4, 32, &Packing::int4(4, 4, 8)), Err(Error::Unsupported { param: Param::Sr, value: 2 }));
        assert_eq!(tile_stride(48, 4), Err(Error::NotMultiple { dim: Dim::K, value: 48, multiple_of: 32 }));
        assert_eq!(tile_stride(0, 4), Err(Error::ZeroDim { dim: Dim::K }));
    }
}
