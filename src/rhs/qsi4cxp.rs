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
use crate::rhs::{Int4Source, check_channel_params, check_nk, pair_group};

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
    for c in 0..n_pad {
        let tile = &mut rhs_packed[(c / nr) * ts..(c / nr + 1) * ts];
        let i = c % nr;
        let src = c.min(n - 1);
        // Wrapping like the kernels, which compute modulo 2^32: `16 * sum` wraps for k > 2^24.
        let mut sum = 0i32;
        for g in 0..kp / 32 {
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

#[cfg(test)]
mod tests {

    #[test]
    fn spec_example_byte_position() {
        // docs/formats.md, §RHS: nr = 4, kr = 8, sr = 2: column 3, byte q = 18 sits at 78 and holds
        // depths 34 (low) and 50 (high).
        let (nr, bd, q, i) = (4usize, 4usize, 18usize, 3usize);
        assert_eq!((q / bd) * nr * bd + i * bd + q % bd, 78);
        assert_eq!(32 * (q / 16) + q % 16, 34);
    }
}
