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
    for c in 0..n {
        let row = &scale.values[c * scale.stride..c * scale.stride + nb];
        if let Some(b) = row.iter().position(|s| !s.is_finite()) {
            return Err(Error::NonFinite { buffer: Buffer::Scale, index: c * scale.stride + b });
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
    for c in 0..n.div_ceil(nr) * nr {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
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
        let extras = nb * block_bytes;
        write_u32(tile, extras + 4 * i, rsum.to_bits());
        write_u32(tile, extras + 4 * nr + 4 * i, bias.map_or(0.0, |b| b[src]).to_bits());
    }
    Ok(())
}
