//! GGML `Q4_0` blocks: symmetric int4 per block of `bl` depths with an f16 scale, written as the
//! raw input of [`rhs::qsi4c32pscalef16::pack`](crate::rhs::qsi4c32pscalef16::pack): `n` rows of
//! `k / bl` blocks, each an f16 scale followed by `bl / 2` bytes, byte `q` holding depth `q`
//! (low nibble) and `q + bl / 2` (high nibble) as `code + 8`. With `bl = 32` these are GGML's
//! `block_q4_0`; with [`Method::SignedMax`] they are byte for byte `quantize_row_q4_0_ref`'s.

use half::f16;

use super::BlockOut;
use super::symmetric::{Method, Weights, check_call};
use crate::element::Element;
use crate::error::Result;
use crate::rhs::qsi4c32pscalef16::raw_block_bytes;

/// Bytes of the raw blocks of `n x k` weights in blocks of `bl` (a multiple of 32 dividing
/// `k`): `n * (k / bl) * (2 + bl / 2)` (the row stride the packer takes is
/// `(k / bl) * (2 + bl / 2)`).
pub fn size(n: usize, k: usize, bl: usize) -> Result<usize> {
    let (codes, scales) = super::qsi4c32p::sizes(n, k, bl)?;
    Ok(codes + 2 * scales)
}

/// Quantizes the `n x k` weights `w` (every value finite) per block of `bl` by `method` (the
/// scales rounded to f16 before the codes are chosen, except [`Method::SignedMax`], which
/// follows GGML) into `blocks` (at least [`size`] bytes). [`Error::ScaleOverflow`](crate::Error::ScaleOverflow)
/// (index into `w`'s data of the block's first value) when a block's scale overflows f16.
/// Nothing is written unless every check passes.
pub fn quantize<S: Element>(
    method: Method<'_>,
    n: usize,
    k: usize,
    bl: usize,
    w: &Weights<'_, S>,
    blocks: &mut [u8],
) -> Result<()> {
    let bytes = size(n, k, bl)?;
    check_call(Some(&method), n, k, w, (blocks.len(), bytes), None)?;
    let round = |s: f32| Element::to_f32(f16::from_bits(crate::arith::f16_bits(s)));
    super::check_block_scales(&method, n, k, bl, w, round)?;
    let (nb, rb, half) = (k / bl, raw_block_bytes(bl), bl / 2);
    blocks[..bytes].fill(0);
    super::quantize_int4_blocks(&method, n, k, bl, w, round, |c, b, out| {
        let at = (c * nb + b) * rb;
        match out {
            BlockOut::Code(j, q) => blocks[at + 2 + j % half] |= (((q + 8) as u8) & 0x0f) << (4 * (j / half)),
            BlockOut::Codes(q) => super::fast::pack_halves(q, &mut blocks[at + 2..at + 2 + half]),
            BlockOut::Scale(s) => blocks[at..at + 2].copy_from_slice(&crate::arith::f16_bits(s).to_le_bytes()),
        }
    });
    Ok(())
}
