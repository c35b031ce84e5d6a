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
    for c in 0..n.div_ceil(nr) * nr {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
        let (mut rsum, mut sc, mut b) = (0i32, 0.0f32, 0.0f32);
        for g in 0..k / 16 {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
