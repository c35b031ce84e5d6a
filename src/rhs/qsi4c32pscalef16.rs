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
    for c in 0..n {
        for b in 0..nb {
            let at = c * rhs_stride + b * raw_block;
            if !f16::from_le_bytes([rhs[at], rhs[at + 1]]).is_finite() {
                return Err(Error::NonFinite { buffer: Buffer::Rhs, index: at });
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
