//! `qai4c32p`: int4 weights, **asymmetric**, one f32 scale and one f32 offset per block of `bl`
//! depths per channel, f32 bias (`rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon`;
//! docs/formats.md, §RHS `qai4c32p`). GGML `Q4_1`-like: block `b` of channel `c` dequantizes to
//! `w = (u - 8) * scale[c][b] + zero[c][b]` (`Q4_1`'s `d * u + m` is `scale = d`,
//! `zero = m + 8 d`).
//!
//! Raw input (NxK only): `n` rows of `rhs_stride >= k/2` bytes, two depths per byte in **s0s1**
//! order: depth `j` of channel `c` is the **high** nibble of byte `c * rhs_stride + j/2` for
//! even `j`, the low nibble for odd `j`; nibbles are unsigned `u` in `0..=15`.
//!
//! Tile layout (`nb = k / bl`, `bd = kr / 2`, tile stride `nr * (nb * (bl/2 + 8) + 4)`):
//!
//! ```text
//! per block b, at b*nr*(bl/2 + 8):
//!   0               nr*bl/2   data: column i's byte q at (q/bd)*nr*bd + i*bd + q%bd; byte q of
//!                             each 32-depth group holds depth q (low nibble) and q + 16 (high),
//!                             as the signed value u - 8
//!   nr*bl/2         4*nr      f32 zero[c][b], copied
//!   nr*bl/2 + 4*nr  4*nr      f32 scale16 = scale[c][b] * 0.0625
//! then at nb*nr*(bl/2 + 8):
//!   0               4*nr      f32 bias[c] (0.0 when absent)
//! ```
//!
//! Padding channels (`n <= c < roundup(n, nr)`) copy channel `n - 1`.

use crate::error::{Buffer, Error, Result, Stride};
use crate::packing::{Packing, check_blocks};
use crate::rhs::{check_bias, check_finite, check_nk};

/// Bytes of one packed tile of `nr` channels: `nr * ((k/bl) * (bl/2 + 8) + 4)`.
pub fn tile_stride(k: usize, bl: usize, nr: usize) -> Result<usize> {
    check_blocks(k, bl)?;
    (k / bl)
        .checked_mul(bl / 2 + 8)
        .and_then(|v| v.checked_add(4))
        .and_then(|v| v.checked_mul(nr))
        .ok_or(Error::SizeOverflow)
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

/// The unsigned 4-bit code of depth `j` in an s0s1 row (`j` even: high nibble).
#[inline]
fn code(row: &[u8], j: usize) -> u8 {
    let byte = row[j / 2];
    if j.is_multiple_of(2) { byte >> 4 } else { byte & 0xf }
}

/// Packs `n` channels of asymmetric int4 blocks.
///
/// * `rhs`: `n` rows of `rhs_stride` bytes (`>= k/2`; `k` is a multiple of `bl`, so even).
/// * `zero`, `scale`: `n * (k/bl)` finite f32 values each, row-major (`[c][b]`).
/// * `bias`: `n` finite values, or `None` (zeros).
/// * `rhs_packed`: at least [`packed_size`] bytes.
///
/// Every check is made before a byte is written.
#[allow(clippy::too_many_arguments)]
pub fn pack(
    packing: &Packing,
    n: usize,
    k: usize,
    bl: usize,
    rhs: &[u8],
    rhs_stride: usize,
    zero: &[f32],
    scale: &[f32],
    bias: Option<&[f32]>,
    rhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_rhs_int4()?;
    check_nk(n, k)?;
    check_blocks(k, bl)?;
    let nb = k / bl;
    let row_bytes = k / 2;
    if rhs_stride < row_bytes {
        return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: rhs_stride, needed: row_bytes });
    }
    let needed = (n - 1).checked_mul(rhs_stride).and_then(|v| v.checked_add(row_bytes));
    let needed = needed.ok_or(Error::SizeOverflow)?;
    if rhs.len() < needed {
        return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: rhs.len(), needed });
    }
    let params = n.checked_mul(nb).ok_or(Error::SizeOverflow)?;
    for (values, buffer) in [(zero, Buffer::Zero), (scale, Buffer::Scale)] {
        if values.len() < params {
            return Err(Error::BufferTooShort { buffer, given: values.len(), needed: params });
        }
        check_finite(&values[..params], buffer)?;
    }
    check_bias(n, bias)?;
    let size = packed_size(n, k, bl, packing)?;
    if rhs_packed.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: rhs_packed.len(), needed: size });
    }

    let nr = packing.nr;
    let bd = packing.block_depth();
    let ts = tile_stride(k, bl, nr)?;
    let area_bytes = nr * (bl / 2 + 8);
    for c in 0..n.div_ceil(nr) * nr {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
        let src = c.min(n - 1);
        let row = &rhs[src * rhs_stride..src * rhs_stride + row_bytes];
        for b in 0..nb {
            let area = &mut tile[b * area_bytes..(b + 1) * area_bytes];
            for q in 0..bl / 2 {
                let depth = b * bl + 32 * (q / 16) + q % 16;
                let byte = (code(row, depth) | code(row, depth + 16) << 4) ^ 0x88;
                area[(q / bd) * nr * bd + i * bd + q % bd] = byte;
            }
            let extras = nr * bl / 2;
            let (z, s) = (zero[src * nb + b], scale[src * nb + b] * 0.0625);
            area[extras + 4 * i..extras + 4 * i + 4].copy_from_slice(&z.to_le_bytes());
            area[extras + 4 * nr + 4 * i..extras + 4 * nr + 4 * i + 4].copy_from_slice(&s.to_le_bytes());
        }
        let b = bias.map_or(0.0, |b| b[src]);
        let at = nb * area_bytes + 4 * i;
        tile[at..at + 4].copy_from_slice(&b.to_le_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_tile_diagram() {
        // docs/formats.md §RHS qai4c32p: nr 4, kr 16 (bd 8), bl 32, k 64: tile stride 208.
        let p = Packing::int4(4, 4, 16);
        assert_eq!(tile_stride(64, 32, 4), Ok(208));
        // One channel (three padding copies): depth 0 = 0xA (high nibble of byte 0), depth 16 =
        // 0x3, every other depth 8 (value 0).
        let mut raw = [0x88u8; 32];
        raw[0] = 0xa8;
        raw[8] = 0x38;
        let (zero, scale) = ([0.5f32, -1.0], [2.0f32, 4.0]);
        let mut out = [0u8; 208];
        pack(&p, 1, 64, 32, &raw, 32, &zero, &scale, Some(&[7.0]), &mut out).unwrap();
        // Byte 0 of channel 0: (0xA | 0x3 << 4) ^ 0x88 = 0x3A ^ 0x88 = 0xB2.
        assert_eq!(out[0], 0xb2);
        assert_eq!(out[8], 0xb2, "padding channel 1 copies channel 0");
        assert_eq!(out[1], 0);
        assert_eq!(f32::from_le_bytes(out[64..68].try_into().unwrap()), 0.5);
        assert_eq!(f32::from_le_bytes(out[80..84].try_into().unwrap()), 0.125);
        assert_eq!(f32::from_le_bytes(out[96 + 80..96 + 84].try_into().unwrap()), 0.25);
        assert_eq!(f32::from_le_bytes(out[192..196].try_into().unwrap()), 7.0);
        assert_eq!(f32::from_le_bytes(out[204..208].try_into().unwrap()), 7.0);
    }

    #[test]
    fn rejects_short_and_non_finite_parameters_before_writing() {
        let p = Packing::int4(4, 4, 16);
        let raw = [0u8; 2 * 32];
        let mut out = [0xeeu8; 208];
        let ok = [1.0f32; 4];
        let e = pack(&p, 2, 64, 32, &raw, 32, &ok[..3], &ok, None, &mut out).unwrap_err();
        assert_eq!(e, Error::BufferTooShort { buffer: Buffer::Zero, given: 3, needed: 4 });
        let bad = [1.0, 1.0, f32::NAN, 1.0];
        let e = pack(&p, 2, 64, 32, &raw, 32, &ok, &bad, None, &mut out).unwrap_err();
        assert_eq!(e, Error::NonFinite { buffer: Buffer::Scale, index: 2 });
        assert!(out.iter().all(|&b| b == 0xee));
    }
}
