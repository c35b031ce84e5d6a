//! Symmetric int8 per channel (`qsi8cxp`): each channel's `k` weights become codes in
//! `[-128, 127]` and one f32 scale, written as the raw input of
//! [`rhs::qsi8cxp::pack`](crate::rhs::qsi8cxp::pack) (`n` rows of `k` int8 values, `n` scales).

use super::symmetric::{Method, Weights, check_call, quantize_group};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::rhs::check_nk;

/// `(codes, scales)` for `n x k` weights: `n * k` and `n`.
pub fn sizes(n: usize, k: usize) -> Result<(usize, usize)> {
    check_nk(n, k)?;
    Ok((n.checked_mul(k).ok_or(Error::SizeOverflow)?, n))
}

/// Quantizes the `n x k` weights `w` (every value finite) per channel by `method` into `codes`
/// (at least `n * k`, dense rows of `k`) and `scale` (at least `n`). Nothing is written unless
/// every check passes.
pub fn quantize<S: Element>(
    method: Method<'_>,
    n: usize,
    k: usize,
    w: &Weights<'_, S>,
    codes: &mut [i8],
    scale: &mut [f32],
) -> Result<()> {
    let (code_len, scales) = sizes(n, k)?;
    check_call(Some(&method), n, k, w, (codes.len(), code_len), Some((scale.len(), scales)))?;
    for c in 0..n {
        let out = &mut codes[c * k..(c + 1) * k];
        // Round to nearest on f32 NxK rows: NEON.
        if let Some(x) = super::fast::rtn_row(&method, w, c, 0, k) {
            scale[c] = super::fast::rtn_scale(x, 127, |s| s);
            super::fast::rtn_codes(x, scale[c], 127, out);
            continue;
        }
        // An f32 scale of finite weights is finite.
        scale[c] = quantize_group(&method, k, 0, |j| w.at(c, j), 127, |s| s, |j, q| out[j] = q).unwrap_or(0.0);
    }
    Ok(())
}
