//! `qsi4c32p` with bf16 scales: int4 weights, symmetric, one bf16 scale per block of `bl`
//! depths per output channel, packed in tiles of `nr` channels
//! (`rhs_pack_{nxk,kxn}_qsi4c32p_qsu4c32s1s0`; docs/formats.md, §RHS and §Arithmetic: RHS packer sums).
//!
//! Tile layout (`nb = k / bl`, `bd = kr / sr`, tile stride `nr * ((bl/2 + 2) * nb + 8)`):
//!
//! ```text
//! per block b, at b*nr*(bl/2 + 2):
//!   0          nr*bl/2   data: column i's byte q at (q/bd)*nr*bd + i*bd + q%bd; byte q holds
//!                        depth b*bl + 32*(q/16) + q%16 (low nibble) and that depth + 16 (high)
//!   nr*bl/2    2*nr      bf16 scale[c][b]
//! at nr*nb*(bl/2 + 2):
//!   0          4*nr      f32 rsum[i] (sum of value * scale, accumulated per bd-byte chunk)
//!   4*nr       4*nr      f32 bias[i] (0 when absent)
//! ```

use half::bf16;

use crate::arith::write_u32;
use crate::error::{Buffer, Error, Result, Stride};
use crate::packing::{Packing, check_blocks};
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
use crate::rhs::Layout;
use crate::rhs::{Int4Source, check_bias, check_nk, pair_group};

/// Bytes of one packed tile of `nr` channels: `nr * ((bl/2 + 2) * (k/bl) + 8)`.
pub fn tile_stride(k: usize, bl: usize, nr: usize) -> Result<usize> {
    check_blocks(k, bl)?;
    (bl / 2 + 2)
        .checked_mul(k / bl)
        .and_then(|v| v.checked_add(8))
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

/// Per-block bf16 scales: block `b` of channel `c` is `values[c * stride + b]`.
#[derive(Debug, Clone, Copy)]
pub struct BlockScales<'a, T> {
    /// The scales.
    pub values: &'a [T],
    /// Distance between the scale rows of two channels, in elements (`>= k / bl`).
    pub stride: usize,
}

impl<'a, T> BlockScales<'a, T> {
    /// Dense scales: `k / bl` per channel.
    pub const fn dense(values: &'a [T], blocks_per_channel: usize) -> Self {
        BlockScales { values, stride: blocks_per_channel }
    }

    pub(crate) fn check(&self, n: usize, nb: usize) -> Result<()> {
        if self.stride < nb {
            return Err(Error::StrideTooSmall { stride: Stride::Scale, given: self.stride, needed: nb });
        }
        let needed = (n - 1).checked_mul(self.stride).and_then(|v| v.checked_add(nb));
        let needed = needed.ok_or(Error::SizeOverflow)?;
        if self.values.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Scale, given: self.values.len(), needed });
        }
        Ok(())
    }
}

/// Packs `n` channels of int4 weights with per-block bf16 scales and an optional f32 bias.
///
/// * `rhs`: raw weights ([`Int4Source`], NxK or KxN, s1s0 nibbles; KleidiAI's packers take
///   zero-point-8 nibbles, signed ones are accepted too).
/// * `scale`: `k / bl` bf16 scales per channel; `bias`: `n` f32 values or `None`. All finite.
/// * `rhs_packed`: at least [`packed_size`] bytes.
///
/// The packed `rsum` depends on `kr` (docs/formats.md, §Arithmetic: RHS packer sums): pack with the kernel's packing.
#[allow(clippy::too_many_arguments)]
pub fn pack(
    packing: &Packing,
    n: usize,
    k: usize,
    bl: usize,
    rhs: &Int4Source<'_>,
    scale: &BlockScales<'_, bf16>,
    bias: Option<&[f32]>,
    rhs_packed: &mut [u8],
) -> Result<()> {
    packing.check_rhs_int4()?;
    check_nk(n, k)?;
    check_blocks(k, bl)?;
    rhs.check(n, k)?;
    let nb = k / bl;
    scale.check(n, nb)?;
    // Exponent bits all set: infinite or NaN. A branch-free scan (vectorized by the compiler;
    // dense scales in one run), then the search for the first one only when there is one.
    let (runs, run) = if scale.stride == nb { (1, n * nb) } else { (n, nb) };
    for r in 0..runs {
        let values = &scale.values[r * scale.stride..r * scale.stride + run];
        let mut flags = 0u16;
        for s in values {
            flags |= (s.to_bits() & 0x7f80) + 0x0080;
        }
        if flags & 0x8000 != 0
            && let Some(at) = values.iter().position(|s| !s.is_finite())
        {
            return Err(Error::NonFinite { buffer: Buffer::Scale, index: r * scale.stride + at });
        }
    }
    check_bias(n, bias)?;
    let size = packed_size(n, k, bl, packing)?;
    if rhs_packed.len() < size {
        return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: rhs_packed.len(), needed: size });
    }

    let nr = packing.nr;
    let bd = packing.block_depth();
    let ts = tile_stride(k, bl, nr)?;
    let block_bytes = nr * (bl / 2 + 2);
    let extras = nb * block_bytes;
    let n_pad = n.div_ceil(nr) * nr;
    // NxK with quads of channels (`nr % 4 == 0`) and chunks of 4, 8 or 16 bytes: NEON, four
    // channels at a time (their f32 running sums in the four lanes of a vector, each lane in
    // the scalar order); anything else takes the channel path below.
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let fast = rhs.layout == Layout::NxK && nr.is_multiple_of(4) && matches!(bd, 4 | 8 | 16);
    let mut c = 0;
    while c < n_pad {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if fast {
            let mut rows = [core::ptr::null(); 4];
            let mut scales = [core::ptr::null(); 4];
            for (j, (row, sc)) in rows.iter_mut().zip(scales.iter_mut()).enumerate() {
                let src = (c + j).min(n - 1);
                *row = rhs.data[src * rhs.stride..][..k / 2].as_ptr();
                *sc = scale.values[src * scale.stride..][..nb].as_ptr();
            }
            let signed = rhs.encoding == crate::rhs::Int4Encoding::Signed;
            // SAFETY: `rows[j]` are the `k / 2 = 16 * nb * bl/32` bytes of an NxK row and
            // `scales[j]` its `nb` scales (sliced above); the tile has `nb` areas of
            // `block_bytes = nr * (bl/2 + 2)` bytes and channels `i .. i + 4 <= nr` (`nr % 4 == 0`,
            // `i % 4 == 0`) of block `b` write their data chunks at
            // `b * block_bytes + (16g/bd + t) * nr * bd + i * bd` (`4 * bd` bytes, `g < bl/32`,
            // `t < 16/bd`) and scales at `b * block_bytes + nr * bl/2 + 2i` (8 bytes): inside it.
            let rsum = unsafe { neon::pack_quad(rows, scales, nb, bl, tile.as_mut_ptr(), nr, i, bd, signed) };
            for (j, r) in rsum.iter().enumerate() {
                let src = (c + j).min(n - 1);
                write_u32(tile, extras + 4 * (i + j), *r);
                write_u32(tile, extras + 4 * nr + 4 * (i + j), bias.map_or(0.0, |b| b[src]).to_bits());
            }
            c += 4;
            continue;
        }
        let src = c.min(n - 1);
        let mut rsum = 0.0f32;
        for b in 0..nb {
            let s = scale.values[src * scale.stride + b];
            let d = s.to_f32();
            let area = &mut tile[b * block_bytes..(b + 1) * block_bytes];
            for g in 0..bl / 32 {
                let values = rhs.group(n, k, c, b * bl / 32 + g);
                let bytes = pair_group(&values);
                for (t, chunk) in bytes.chunks_exact(bd).enumerate() {
                    let at = (16 * g / bd + t) * nr * bd + i * bd;
                    area[at..at + bd].copy_from_slice(chunk);
                }
                // One rounded f32 add per bd-byte chunk (2*bd values: depths `t` and `t + 16`
                // for its bytes `t`); the product is exact. The chunk sums come from prefix
                // sums over the 16 byte pairs (exact integers), fixed-size code whatever `bd`.
                let mut prefix = [0i32; 17];
                for t in 0..16 {
                    prefix[t + 1] = prefix[t] + i32::from(values[t]) + i32::from(values[16 + t]);
                }
                for chunk in 0..16 / bd {
                    let s = prefix[(chunk + 1) * bd] - prefix[chunk * bd];
                    rsum += s as f32 * d;
                }
            }
            let at = nr * bl / 2 + 2 * i;
            area[at..at + 2].copy_from_slice(&s.to_bits().to_le_bytes());
        }
        write_u32(tile, extras + 4 * i, rsum.to_bits());
        write_u32(tile, extras + 4 * nr + 4 * i, bias.map_or(0.0, |b| b[src]).to_bits());
        c += 1;
    }
    Ok(())
}

/// The NEON packer of four NxK channels.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use core::arch::aarch64::*;
    use half::bf16;

    /// Packs four NxK channels (columns `i .. i + 4` of the tile at `tile`, `nr` columns,
    /// chunks of `bd` bytes: 4, 8 or 16) of `nb` blocks of `bl` depths: `rows[j]` the raw row
    /// (s1s0, two's complement if `signed`, else zero point 8), `scales[j]` its `nb` bf16 block
    /// scales. Returns the four f32 `rsum` bit patterns: per lane, the scalar running sum
    /// `rsum = fl(rsum + fl(S * d))` over the chunks in packed order (`S` the exact chunk sum).
    ///
    /// In registers, per 32-depth group and channel: with `u` the unsigned nibbles (`x ^ 0x88`
    /// for signed input) and `hi = u >> 4`, the packed bytes are `SLI(ZIP1(u, hi), ZIP2(u, hi),
    /// 4) ^ 0x88` (as `qsi4cxp`); the byte nibble sums `u - 15 * hi` are reduced by pairwise adds
    /// so that byte `t` of lane `j` of a `u32x4` holds the 4-value sum of depths `4t..4t+4` and
    /// `16 + 4t..` of channel `j` (at most 120): the chunk sums of `bd = 4` directly, of 8 and 16
    /// after widening pairwise adds. Each chunk sum, minus `8 * 2bd` (zero point), is converted,
    /// multiplied by the block scale and added to the lane's sum, chunk after chunk.
    ///
    /// # Safety
    ///
    /// `rows[j]` readable for `nb * bl/2` bytes and `scales[j]` for `nb` values; `bl` a non-zero
    /// multiple of 32; `i % 4 == 0`, `i + 4 <= nr`; `tile` writable for `nb * nr * (bl/2 + 2)`
    /// bytes.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn pack_quad(
        rows: [*const u8; 4],
        scales: [*const bf16; 4],
        nb: usize,
        bl: usize,
        tile: *mut u8,
        nr: usize,
        i: usize,
        bd: usize,
        signed: bool,
    ) -> [u32; 4] {
        // SAFETY: forwarded from the caller's contract (`bd` is 4, 8 or 16).
        unsafe {
            match (bd, signed, bl == 32) {
                (16, false, true) => pack_quad_bd::<16, false, true>(rows, scales, nb, bl, tile, nr, i),
                (8, false, true) => pack_quad_bd::<8, false, true>(rows, scales, nb, bl, tile, nr, i),
                (_, false, true) => pack_quad_bd::<4, false, true>(rows, scales, nb, bl, tile, nr, i),
                (16, true, true) => pack_quad_bd::<16, true, true>(rows, scales, nb, bl, tile, nr, i),
                (8, true, true) => pack_quad_bd::<8, true, true>(rows, scales, nb, bl, tile, nr, i),
                (_, true, true) => pack_quad_bd::<4, true, true>(rows, scales, nb, bl, tile, nr, i),
                (16, false, false) => pack_quad_bd::<16, false, false>(rows, scales, nb, bl, tile, nr, i),
                (8, false, false) => pack_quad_bd::<8, false, false>(rows, scales, nb, bl, tile, nr, i),
                (_, false, false) => pack_quad_bd::<4, false, false>(rows, scales, nb, bl, tile, nr, i),
                (16, true, false) => pack_quad_bd::<16, true, false>(rows, scales, nb, bl, tile, nr, i),
                (8, true, false) => pack_quad_bd::<8, true, false>(rows, scales, nb, bl, tile, nr, i),
                (_, true, false) => pack_quad_bd::<4, true, false>(rows, scales, nb, bl, tile, nr, i),
            }
        }
    }

    /// [`pack_quad`] for chunks of `BD` bytes, two's complement (`SIGNED`) or zero-point-8
    /// nibbles; `ONE_GROUP`: `bl == 32`.
    ///
    /// # Safety
    ///
    /// As [`pack_quad`] with `bd = BD`.
    #[inline(always)]
    unsafe fn pack_quad_bd<const BD: usize, const SIGNED: bool, const ONE_GROUP: bool>(
        rows: [*const u8; 4],
        scales: [*const bf16; 4],
        nb: usize,
        bl: usize,
        tile: *mut u8,
        nr: usize,
        i: usize,
    ) -> [u32; 4] {
        // SAFETY: NEON is enabled for the whole target. Block `b`, group `g` reads the 16 bytes
        // at `rows[j] + 16 * (b * bl/32 + g)` and scale `b` of each channel; it writes the
        // chunks `t < 16 / BD` of channels `i .. i + 4` (`4 * BD` contiguous bytes at
        // `(16g / BD + t) * nr * BD + i * BD`) and their four scales (8 bytes at
        // `nr * bl/2 + 2i`) inside block `b`'s area: the caller's contract. The scale loads are
        // from `&[bf16]` rows (2-byte aligned); the stores, `ST4` (single structure) included,
        // take any address (a packed buffer has any alignment; docs/porting.md: `SCTLR_EL1.A`
        // stays 0).
        unsafe {
            let k88 = vdupq_n_u8(0x88);
            let k15 = vdupq_n_u8(15);
            let zero_point = vdupq_n_s32(16 * BD as i32);
            let groups = if ONE_GROUP { 1 } else { bl / 32 };
            let area = nr * (bl / 2 + 2);
            let chunk_row = nr * BD;
            let mut acc = vdupq_n_f32(0.0);
            // The scales first, four blocks at a time: `LD4` (single structure) of channel `j`'s
            // scales `b .. b + 4` fills lane `j` of the four blocks' vectors, stored as the
            // blocks' 8 scale bytes; the tail block by block.
            let scale_at = tile.add(nr * bl / 2 + 2 * i);
            let mut sp = scales;
            let mut b = 0;
            while b + 4 <= nb {
                let z = vdup_n_u16(0);
                let mut q = uint16x4x4_t(z, z, z, z);
                q = vld4_lane_u16::<0>(sp[0].cast(), q);
                q = vld4_lane_u16::<1>(sp[1].cast(), q);
                q = vld4_lane_u16::<2>(sp[2].cast(), q);
                q = vld4_lane_u16::<3>(sp[3].cast(), q);
                for p in &mut sp {
                    *p = p.add(4);
                }
                vst1_u8(scale_at.add(b * area), vreinterpret_u8_u16(q.0));
                vst1_u8(scale_at.add((b + 1) * area), vreinterpret_u8_u16(q.1));
                vst1_u8(scale_at.add((b + 2) * area), vreinterpret_u8_u16(q.2));
                vst1_u8(scale_at.add((b + 3) * area), vreinterpret_u8_u16(q.3));
                b += 4;
            }
            while b < nb {
                let mut s = vdup_n_u16(0);
                s = vld1_lane_u16::<0>(sp[0].cast(), s);
                s = vld1_lane_u16::<1>(sp[1].cast(), s);
                s = vld1_lane_u16::<2>(sp[2].cast(), s);
                s = vld1_lane_u16::<3>(sp[3].cast(), s);
                for p in &mut sp {
                    *p = p.add(1);
                }
                vst1_u8(scale_at.add(b * area), vreinterpret_u8_u16(s));
                b += 1;
            }
            // Then block by block: its four scales back from the packed bytes, then its groups.
            let (mut rows, mut dst) = (rows, tile);
            for _ in 0..nb {
                let s = vreinterpret_u16_u8(vld1_u8(dst.add(nr * bl / 2 + 2 * i)));
                let d = vreinterpretq_f32_u32(vshll_n_u16::<16>(s));
                for g in 0..groups {
                    let mut packed = [vdupq_n_u8(0); 4];
                    let mut sums = [vdupq_n_u8(0); 4];
                    for j in 0..4 {
                        let x = vld1q_u8(rows[j]);
                        rows[j] = rows[j].add(16);
                        let u = if SIGNED { veorq_u8(x, k88) } else { x };
                        let hi = vshrq_n_u8::<4>(u);
                        packed[j] = veorq_u8(vsliq_n_u8::<4>(vzip1q_u8(u, hi), vzip2q_u8(u, hi)), k88);
                        sums[j] = vmlsq_u8(u, hi, k15);
                    }
                    let at = dst.add(16 * g * nr + i * BD);
                    let [p0, p1, p2, p3] = packed;
                    // Chunk `t` of the four channels: `4 * BD` contiguous bytes at
                    // `at + t * chunk_row`, one `ST4` (single structure) per chunk.
                    if BD == 16 {
                        vst1q_u8(at, p0);
                        vst1q_u8(at.add(16), p1);
                        vst1q_u8(at.add(32), p2);
                        vst1q_u8(at.add(48), p3);
                    } else if BD == 8 {
                        let v = uint64x2x4_t(
                            vreinterpretq_u64_u8(p0),
                            vreinterpretq_u64_u8(p1),
                            vreinterpretq_u64_u8(p2),
                            vreinterpretq_u64_u8(p3),
                        );
                        vst4q_lane_u64::<0>(at.cast(), v);
                        vst4q_lane_u64::<1>(at.add(chunk_row).cast(), v);
                    } else {
                        let v = uint32x4x4_t(
                            vreinterpretq_u32_u8(p0),
                            vreinterpretq_u32_u8(p1),
                            vreinterpretq_u32_u8(p2),
                            vreinterpretq_u32_u8(p3),
                        );
                        vst4q_lane_u32::<0>(at.cast(), v);
                        vst4q_lane_u32::<1>(at.add(chunk_row).cast(), v);
                        vst4q_lane_u32::<2>(at.add(2 * chunk_row).cast(), v);
                        vst4q_lane_u32::<3>(at.add(3 * chunk_row).cast(), v);
                    }
                    // Byte `t` of lane `j`: depths `4t .. 4t + 4` and `16 + 4t ..` of channel `j`
                    // (source bytes `2t, 2t + 1, 8 + 2t, 9 + 2t`), unsigned.
                    let quads = vpaddq_u32(
                        vreinterpretq_u32_u8(vpaddq_u8(sums[0], sums[1])),
                        vreinterpretq_u32_u8(vpaddq_u8(sums[2], sums[3])),
                    );
                    let mut add = |s: uint32x4_t| {
                        let v = vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(s), zero_point));
                        acc = vaddq_f32(acc, vmulq_f32(v, d));
                    };
                    if BD == 16 {
                        add(vpaddlq_u16(vpaddlq_u8(vreinterpretq_u8_u32(quads))));
                    } else if BD == 8 {
                        let halves = vreinterpretq_u32_u16(vpaddlq_u8(vreinterpretq_u8_u32(quads)));
                        add(vandq_u32(halves, vdupq_n_u32(0xffff)));
                        add(vshrq_n_u32::<16>(halves));
                    } else {
                        let byte = vdupq_n_u32(0xff);
                        add(vandq_u32(quads, byte));
                        add(vandq_u32(vshrq_n_u32::<8>(quads), byte));
                        add(vandq_u32(vshrq_n_u32::<16>(quads), byte));
                        add(vshrq_n_u32::<24>(quads));
                    }
                }
                dst = dst.add(area);
            }
            let mut out = [0u32; 4];
            vst1q_u32(out.as_mut_ptr(), vreinterpretq_u32_f32(acc));
            out
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::rhs::{Int4Encoding, Layout};
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn every_packing_matches_the_element_formula() {
        let mut s = 5u32;
        let mut next = move || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 24) as u8
        };
        // Scales of every kind: zero, -0, subnormal, the largest (chunk products overflow to
        // infinity, of both signs), negative, ordinary.
        let special = [0x0000u16, 0x8000, 0x0001, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3c23, 0x0080];
        let extremes = [0x00u8, 0xff, 0x0f, 0xf0, 0x80, 0x7f, 0x88, 0x77];
        for (n, k, bl) in [
            (5usize, 32usize, 32usize),
            (8, 4096, 32),
            (7, 192, 64),
            (9, 288, 96),
            (13, 1024, 32),
            (3, 64, 64),
            (6, 224, 32),
            (4, 640, 64),
        ] {
            let nb = k / bl;
            for layout in [Layout::NxK, Layout::KxN] {
                let (rows, row_bytes) = if layout == Layout::NxK { (n, k / 2) } else { (k, n.div_ceil(2)) };
                let stride = row_bytes + 3;
                let data: Vec<u8> = (0..rows * stride)
                    .map(|_| if next() % 4 == 0 { extremes[usize::from(next()) % 8] } else { next() })
                    .collect();
                let sstride = nb + 2;
                let scales: Vec<bf16> = (0..n * sstride)
                    .map(|_| {
                        let b = if next() % 8 == 0 {
                            special[usize::from(next()) % special.len()]
                        } else {
                            // An ordinary finite value, either sign.
                            (u16::from(next() % 64 + 0x30) << 7)
                                | u16::from(next() & 0x7f)
                                | (u16::from(next() & 1) << 15)
                        };
                        bf16::from_bits(b)
                    })
                    .collect();
                let bias: Vec<f32> = (0..n).map(|c| c as f32 * 0.25 - 1.0).collect();
                for encoding in [Int4Encoding::Signed, Int4Encoding::ZeroPoint8] {
                    let src = Int4Source { data: &data, layout, stride, encoding };
                    let sc = BlockScales { values: &scales, stride: sstride };
                    for (nr, kr) in
                        [(4, 8), (4, 16), (8, 16), (8, 8), (4, 32), (8, 32), (12, 16), (4, 4), (2, 16), (1, 8)]
                    {
                        let p = Packing { mr: 1, nr, kr, sr: 2 };
                        let size = packed_size(n, k, bl, &p).unwrap();
                        for with_bias in [true, false] {
                            let b = if with_bias { Some(&bias[..]) } else { None };
                            let mut got = vec![0x5au8; size];
                            pack(&p, n, k, bl, &src, &sc, b, &mut got).unwrap();
                            let (bd, ts, area) = (kr / 2, tile_stride(k, bl, nr).unwrap(), nr * (bl / 2 + 2));
                            let mut want = vec![0u8; size];
                            for c in 0..n.div_ceil(nr) * nr {
                                let (t, i, cs) = (c / nr * ts, c % nr, c.min(n - 1));
                                let mut rsum = 0.0f32;
                                for blk in 0..nb {
                                    let s = scales[cs * sstride + blk];
                                    let base = t + blk * area;
                                    want[base + nr * bl / 2 + 2 * i..][..2].copy_from_slice(&s.to_bits().to_le_bytes());
                                    let mut chunk = 0i32;
                                    for q in 0..bl / 2 {
                                        let j0 = blk * bl + 32 * (q / 16) + q % 16;
                                        let (lo, hi) = (src.value(n, c, j0), src.value(n, c, j0 + 16));
                                        want[base + (q / bd) * nr * bd + i * bd + q % bd] =
                                            (lo as u8 & 0xf) | ((hi as u8) << 4);
                                        chunk += i32::from(lo) + i32::from(hi);
                                        if q % bd == bd - 1 {
                                            rsum += chunk as f32 * s.to_f32();
                                            chunk = 0;
                                        }
                                    }
                                }
                                let x = t + nb * area;
                                want[x + 4 * i..][..4].copy_from_slice(&rsum.to_le_bytes());
                                let bv = if with_bias { bias[cs] } else { 0.0 };
                                want[x + 4 * nr + 4 * i..][..4].copy_from_slice(&bv.to_le_bytes());
                            }
                            assert_eq!(got, want, "n {n} k {k} bl {bl} {layout:?} {encoding:?} nr {nr} kr {kr}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn first_non_finite_scale_is_reported_before_any_write() {
        let p = Packing { mr: 1, nr: 4, kr: 16, sr: 2 };
        let (n, k, bl) = (3usize, 1024usize, 32usize);
        let data = vec![0x5au8; n * k / 2];
        let src = Int4Source::nxk(&data, k, Int4Encoding::ZeroPoint8);
        let mut out = vec![0xeeu8; packed_size(n, k, bl, &p).unwrap()];
        for at in [0usize, 7, 8, 31, 32, 33, 70, 95] {
            for bad in [0x7f80u16, 0xff80, 0x7fc0, 0xffff, 0x7f81] {
                let mut scales = vec![bf16::from_f32(0.5); n * 32];
                scales[at] = bf16::from_bits(bad);
                scales[95] = bf16::from_bits(0x7f80);
                let sc = BlockScales::dense(&scales, 32);
                let e = pack(&p, n, k, bl, &src, &sc, None, &mut out).unwrap_err();
                assert_eq!(e, Error::NonFinite { buffer: Buffer::Scale, index: at });
            }
        }
        assert!(out.iter().all(|&b| b == 0xee));
    }
}
