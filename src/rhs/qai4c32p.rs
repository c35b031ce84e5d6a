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
        // Chunks of 4, 8 or 16 bytes: NEON, a whole channel at a time (padding channels too:
        // they copy channel `n - 1`).
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if matches!(bd, 4 | 8 | 16) {
            let (z, s) = (&zero[src * nb..src * nb + nb], &scale[src * nb..src * nb + nb]);
            // SAFETY: `row` is the channel's `k / 2 = nb * bl/2` bytes, `z` and `s` its `nb`
            // parameters (sliced above); the tile holds `nb` areas of `area_bytes =
            // nr * (bl/2 + 8)` bytes and block `b` writes the data chunks at `b * area_bytes +
            // (16g/bd + t) * nr * bd + i * bd` (`bd` bytes, `g < bl/32`, `t < 16/bd`), the zero
            // at `b * area_bytes + nr * bl/2 + 4i` and the scale 16 at `... + 4nr + 4i` (4 bytes
            // each, `i < nr`): inside the area.
            unsafe { neon::pack_row(row.as_ptr(), z.as_ptr(), s.as_ptr(), nb, bl, tile.as_mut_ptr(), nr, i, bd) };
            let b = bias.map_or(0.0, |b| b[src]);
            let at = nb * area_bytes + 4 * i;
            tile[at..at + 4].copy_from_slice(&b.to_le_bytes());
            continue;
        }
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

/// The NEON channel packer.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use core::arch::aarch64::*;

    /// Packs the `nb` blocks of `bl` depths of one channel (column `i` of the tile at `tile`,
    /// `nr` columns, chunks of `bd` bytes: 4, 8 or 16): `row` the raw s0s1 bytes, `zero` and
    /// `scale` its `nb` block parameters. Block `b`'s area is at `b * area`,
    /// `area = nr * (bl/2 + 8)`.
    ///
    /// In registers, per 32-depth group: with `hi = x >> 4` (the even depths of s0s1 bytes
    /// `x`), `ZIP1(hi, x)` and `ZIP2(hi, x)` put depths `q` and `q + 16` in the low nibbles of
    /// byte `q`; `SLI #4` joins them and `EOR 0x88` makes them signed.
    ///
    /// # Safety
    ///
    /// `row` readable for `nb * bl/2` bytes, `zero` and `scale` for `nb` values; `bl` a
    /// non-zero multiple of 32; `i < nr`; `tile` writable for `nb * area` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn pack_row(
        row: *const u8,
        zero: *const f32,
        scale: *const f32,
        nb: usize,
        bl: usize,
        tile: *mut u8,
        nr: usize,
        i: usize,
        bd: usize,
    ) {
        // SAFETY: forwarded from the caller's contract (`bd` is 4, 8 or 16).
        unsafe {
            match (bd, bl == 32) {
                (16, true) => pack_row_bd::<16, true>(row, zero, scale, nb, bl, tile, nr, i),
                (8, true) => pack_row_bd::<8, true>(row, zero, scale, nb, bl, tile, nr, i),
                (_, true) => pack_row_bd::<4, true>(row, zero, scale, nb, bl, tile, nr, i),
                (16, false) => pack_row_bd::<16, false>(row, zero, scale, nb, bl, tile, nr, i),
                (8, false) => pack_row_bd::<8, false>(row, zero, scale, nb, bl, tile, nr, i),
                (_, false) => pack_row_bd::<4, false>(row, zero, scale, nb, bl, tile, nr, i),
            }
        }
    }

    /// [`pack_row`] for chunks of `BD` bytes; `ONE_GROUP`: `bl == 32`.
    ///
    /// # Safety
    ///
    /// As [`pack_row`] with `bd = BD`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn pack_row_bd<const BD: usize, const ONE_GROUP: bool>(
        row: *const u8,
        zero: *const f32,
        scale: *const f32,
        nb: usize,
        bl: usize,
        tile: *mut u8,
        nr: usize,
        i: usize,
    ) {
        // SAFETY: NEON is enabled for the whole target. Block `b` reads its `bl/2` raw bytes at
        // `row + b * bl/2` and parameter `b`, and writes inside its area: the chunks of group `g`
        // at `16g * nr + t * nr * BD + i * BD` (`t < 16 / BD`), the zero at `nr * bl/2 + 4i`
        // and the scale at `nr * bl/2 + 4nr + 4i`: the caller's contract.
        unsafe {
            let k88 = vdupq_n_u8(0x88);
            let groups = if ONE_GROUP { 1 } else { bl / 32 };
            let area = nr * (bl / 2 + 8);
            let params = nr * bl / 2 + 4 * i;
            let (mut src, mut dst) = (row, tile.add(i * BD));
            let (mut zp, mut sp) = (zero, scale);
            let mut at = tile;
            for _ in 0..nb {
                for g in 0..groups {
                    let x = vld1q_u8(src);
                    let hi = vshrq_n_u8::<4>(x);
                    let packed = veorq_u8(vsliq_n_u8::<4>(vzip1q_u8(hi, x), vzip2q_u8(hi, x)), k88);
                    crate::packing::store_chunks_strided::<BD>(packed, dst.add(16 * g * nr), nr * BD);
                    src = src.add(16);
                }
                at.add(params).cast::<f32>().write_unaligned(zp.read());
                at.add(params + 4 * nr).cast::<f32>().write_unaligned(sp.read() * 0.0625);
                zp = zp.add(1);
                sp = sp.add(1);
                dst = dst.add(area);
                at = at.add(area);
            }
        }
    }
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

    #[test]
    fn every_packing_matches_the_element_formula() {
        extern crate std;
        use std::vec;
        use std::vec::Vec;
        let mut st = 9u32;
        let mut next = move || {
            st = st.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (st >> 24) as u8
        };
        let extremes = [0x00u8, 0xff, 0x0f, 0xf0, 0x80, 0x7f, 0x88, 0x08];
        // Parameters of every kind: zeros of both signs, subnormals, the largest, tiny, ordinary.
        let special = [0.0f32, -0.0, f32::MAX, -f32::MAX, f32::MIN_POSITIVE, 1e-45, -3e-39, 1.0, 0.1];
        for (n, k, bl) in
            [(5usize, 32usize, 32usize), (8, 4096, 32), (7, 192, 64), (9, 288, 96), (13, 1024, 32), (1, 64, 64)]
        {
            let nb = k / bl;
            let stride = k / 2 + 3;
            let raw: Vec<u8> = (0..n * stride)
                .map(|_| if next() % 4 == 0 { extremes[usize::from(next()) % 8] } else { next() })
                .collect();
            let mut param = |_| {
                if next() % 6 == 0 {
                    special[usize::from(next()) % special.len()]
                } else {
                    f32::from(next()) / 37.0 - 3.0
                }
            };
            let zero: Vec<f32> = (0..n * nb).map(&mut param).collect();
            let scale: Vec<f32> = (0..n * nb).map(&mut param).collect();
            let bias: Vec<f32> = (0..n).map(|c| c as f32 * 0.5 - 2.0).collect();
            for (nr, kr) in [(4, 8), (4, 16), (8, 16), (8, 8), (4, 32), (8, 32), (4, 4), (2, 16), (3, 8)] {
                let p = Packing::int4(1, nr, kr);
                let size = packed_size(n, k, bl, &p).unwrap();
                for with_bias in [true, false] {
                    let b = if with_bias { Some(&bias[..]) } else { None };
                    let mut got = vec![0x5au8; size];
                    pack(&p, n, k, bl, &raw, stride, &zero, &scale, b, &mut got).unwrap();
                    let (bd, ts, area) = (kr / 2, tile_stride(k, bl, nr).unwrap(), nr * (bl / 2 + 8));
                    let mut want = vec![0u8; size];
                    let nib = |c: usize, j: usize| {
                        let byte = raw[c * stride + j / 2];
                        if j.is_multiple_of(2) { byte >> 4 } else { byte & 0xf }
                    };
                    for c in 0..n.div_ceil(nr) * nr {
                        let (t, i, cs) = (c / nr * ts, c % nr, c.min(n - 1));
                        for blk in 0..nb {
                            let base = t + blk * area;
                            for q in 0..bl / 2 {
                                let j = blk * bl + 32 * (q / 16) + q % 16;
                                let v = |j| (nib(cs, j) as i8 - 8) as u8;
                                want[base + (q / bd) * nr * bd + i * bd + q % bd] = (v(j) & 0xf) | (v(j + 16) << 4);
                            }
                            let x = base + nr * bl / 2;
                            want[x + 4 * i..][..4].copy_from_slice(&zero[cs * nb + blk].to_le_bytes());
                            want[x + 4 * nr + 4 * i..][..4]
                                .copy_from_slice(&(scale[cs * nb + blk] * 0.0625).to_le_bytes());
                        }
                        let bv = if with_bias { bias[cs] } else { 0.0 };
                        want[t + nb * area + 4 * i..][..4].copy_from_slice(&bv.to_le_bytes());
                    }
                    assert_eq!(got, want, "n {n} k {k} bl {bl} nr {nr} kr {kr} bias {with_bias}");
                }
            }
        }
    }

    #[test]
    fn first_non_finite_parameter_is_reported() {
        let p = Packing::int4(4, 4, 16);
        let raw = [0u8; 3 * 512];
        let mut out = [0xeeu8; 3 * 1024 * 2];
        for at in [0usize, 3, 4, 31, 32, 33, 47, 95] {
            for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::from_bits(0xffff_ffff)] {
                let mut zero = [0.5f32; 96];
                zero[at] = bad;
                zero[95] = f32::NAN;
                let e = pack(&p, 3, 1024, 32, &raw, 512, &zero, &[1.0; 96], None, &mut out).unwrap_err();
                assert_eq!(e, Error::NonFinite { buffer: Buffer::Zero, index: at });
                let e = pack(&p, 3, 1024, 32, &raw, 512, &[1.0; 96], &zero, None, &mut out).unwrap_err();
                assert_eq!(e, Error::NonFinite { buffer: Buffer::Scale, index: at });
            }
        }
        assert!(out.iter().all(|&b| b == 0xee));
    }
}
