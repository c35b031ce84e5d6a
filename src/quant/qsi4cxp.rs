//! Symmetric int4 per channel (`qsi4cxp`): each channel's `k` weights become codes in `[-8, 7]`
//! and one f32 scale, written as the raw input of
//! [`rhs::qsi4cxp::pack`](crate::rhs::qsi4cxp::pack): `n` rows of `ceil(k / 2)` bytes of
//! two's-complement nibbles, the first depth of a pair in the low nibble
//! ([`Int4Encoding::Signed`](crate::rhs::Int4Encoding::Signed)), and `n` scales.
//!
//! ```
//! use qgemm::quant::{self, Method, Weights};
//! use qgemm::rhs::{Int4Encoding, Int4Source};
//!
//! let (n, k) = (2, 8);
//! let w: Vec<f32> = (0..n * k).map(|i| i as f32 - 7.0).collect();
//! let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![0f32; n]);
//! quant::qsi4cxp::quantize(Method::RoundToNearest, n, k, &Weights::nxk(&w, k), &mut codes, &mut scale)?;
//! assert_eq!(scale[0], 1.0); // channel 0 is -7..0: max |w| / 7
//! let src = Int4Source::nxk(&codes, k, Int4Encoding::Signed); // what the packer takes
//! # let _ = src;
//! # Ok::<(), qgemm::Error>(())
//! ```

use super::symmetric::{Method, Weights, check_call, quantize_group};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::rhs::check_nk;

/// `(code bytes, scales)` for `n x k` weights: `n * ceil(k / 2)` and `n`.
pub fn sizes(n: usize, k: usize) -> Result<(usize, usize)> {
    check_nk(n, k)?;
    Ok((n.checked_mul(k.div_ceil(2)).ok_or(Error::SizeOverflow)?, n))
}

/// Quantizes the `n x k` weights `w` (every value finite) per channel by `method` into `codes`
/// (at least `n * ceil(k / 2)` bytes) and `scale` (at least `n`). Nothing is written unless every
/// check passes.
pub fn quantize<S: Element>(
    method: Method<'_>,
    n: usize,
    k: usize,
    w: &Weights<'_, S>,
    codes: &mut [u8],
    scale: &mut [f32],
) -> Result<()> {
    let (code_bytes, scales) = sizes(n, k)?;
    check_call(Some(&method), n, k, w, (codes.len(), code_bytes), Some((scale.len(), scales)))?;
    let row = k.div_ceil(2);
    for c in 0..n {
        let out = &mut codes[c * row..(c + 1) * row];
        // Round to nearest on f32 NxK rows: NEON codes, a chunk at a time, then nibble pairs.
        if let Some(x) = super::fast::rtn_row(&method, w, c, 0, k) {
            let s = super::fast::rtn_scale(x, 7, |s| s);
            let mut q = [0i8; super::fast::CHUNK];
            for (t, part) in x.chunks(super::fast::CHUNK).enumerate() {
                super::fast::rtn_codes(part, s, 7, &mut q);
                let bytes = &mut out[t * super::fast::CHUNK / 2..][..part.len().div_ceil(2)];
                super::fast::pack_pairs(&q[..part.len() / 2 * 2], bytes);
                if part.len() % 2 == 1 {
                    // The odd last depth of the row: the high nibble stays 0.
                    bytes[part.len() / 2] = q[part.len() - 1] as u8 & 0x0f;
                }
            }
            scale[c] = s;
            continue;
        }
        out.fill(0);
        // An f32 scale of finite weights is finite.
        scale[c] = quantize_group(
            &method,
            k,
            0,
            |j| w.at(c, j),
            7,
            |s| s,
            |j, q| {
                out[j / 2] |= ((q as u8) & 0x0f) << (4 * (j % 2));
            },
        )
        .unwrap_or(0.0);
    }
    Ok(())
}
