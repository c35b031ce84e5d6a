//! Symmetric int4 per block of `bl` depths with bf16 scales (`qsi4c32p`): codes in `[-8, 7]`,
//! written as the raw input of [`rhs::qsi4c32p::pack`](crate::rhs::qsi4c32p::pack): `n` rows of
//! `k / 2` bytes of two's-complement nibbles (first depth of a pair in the low nibble,
//! [`Int4Encoding::Signed`](crate::rhs::Int4Encoding::Signed)) and `n * k / bl` bf16 scales,
//! `[c][b]` ([`BlockScales::dense`](crate::rhs::qsi4c32p::BlockScales::dense)).

use half::bf16;

use super::BlockOut;
use super::symmetric::{Method, Weights, check_call};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::packing::check_blocks;
use crate::rhs::check_nk;

/// `(code bytes, scales)` for `n x k` weights in blocks of `bl` (a multiple of 32 dividing
/// `k`): `n * k / 2` and `n * k / bl`.
pub fn sizes(n: usize, k: usize, bl: usize) -> Result<(usize, usize)> {
    check_nk(n, k)?;
    check_blocks(k, bl)?;
    Ok((n.checked_mul(k / 2).ok_or(Error::SizeOverflow)?, n * (k / bl)))
}

/// Quantizes the `n x k` weights `w` (every value finite) per block of `bl` by `method` (the
/// scales rounded to bf16 before the codes are chosen) into `codes` and `scale` (sizes from
/// [`sizes`]). bf16 has f32's exponent range, so no block scale can overflow (`max |w| / 7` of
/// finite weights is far below `bf16::MAX`; a search never keeps a non-finite candidate).
/// Nothing is written unless every check passes.
pub fn quantize<S: Element>(
    method: Method<'_>,
    n: usize,
    k: usize,
    bl: usize,
    w: &Weights<'_, S>,
    codes: &mut [u8],
    scale: &mut [bf16],
) -> Result<()> {
    let (code_bytes, scales) = sizes(n, k, bl)?;
    check_call(Some(&method), n, k, w, (codes.len(), code_bytes), Some((scale.len(), scales)))?;
    let round = |s: f32| bf16::from_f32(s).to_f32();
    let nb = k / bl;
    codes[..code_bytes].fill(0);
    super::quantize_int4_blocks(&method, n, k, bl, w, round, |c, b, out| match out {
        BlockOut::Code(j, q) => codes[c * (k / 2) + (b * bl + j) / 2] |= ((q as u8) & 0x0f) << (4 * (j % 2)),
        BlockOut::Codes(q) => super::fast::pack_pairs(q, &mut codes[c * (k / 2) + b * bl / 2..]),
        BlockOut::Scale(s) => scale[c * nb + b] = bf16::from_f32(s),
    });
    Ok(())
}
