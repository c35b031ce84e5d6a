//! 2-bit weights per channel (`qsu2cxp`): each channel's `k` weights become codes `u` in `0..=3`
//! and one f32 `scale` with `w ≈ scale * lut[u]` (`lut`: the 4-entry table the packer and the
//! kernels are given; default `{-2, -1, 0, 1}`), written as the raw input of
//! [`rhs::qsu2cxp::pack`](crate::rhs::qsu2cxp::pack): `n` rows of `k / 4` bytes, depth `j` in
//! bits `2 * (j % 4)` of byte `j / 4` (first depth in the lowest bits), and `n` scales.
//!
//! Per channel the scale minimizes the squared error: candidates `amax / |e|` for the table's
//! entries `e` of largest magnitude on either side (with either sign, so the longer side of an
//! asymmetric table serves the channel's larger side), each followed by the least-squares scale
//! for its codes and the codes again; the best pair is kept. Deterministic scalar arithmetic
//! (f64 sums), the same bits on every target.
//!
//! ```
//! use qgemm::quant::qsu2cxp;
//!
//! let (n, k) = (1, 32);
//! let w: Vec<f32> = (0..k).map(|j| [-1.0, -0.5, 0.0, 0.5][j % 4]).collect();
//! let (mut codes, mut scale) = (vec![0u8; n * k / 4], vec![0f32; n]);
//! qsu2cxp::quantize(n, k, &w, k, None, &mut codes, &mut scale)?;
//! assert_eq!(scale[0], 0.5); // -1 = 0.5 * lut[0] (-2), ..., 0.5 = 0.5 * lut[3] (1)
//! assert_eq!(codes[0], 0b11_10_01_00);
//! # Ok::<(), qgemm::Error>(())
//! ```

use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Result};
use crate::rhs::check_nk;
use crate::rhs::qsu2cxp::{DEFAULT_LUT, check_lut};

/// `(code bytes, scales)` for `n` channels of `k` weights: `n * k / 4` and `n`.
pub fn sizes(n: usize, k: usize) -> Result<(usize, usize)> {
    check_nk(n, k)?;
    if !k.is_multiple_of(4) {
        return Err(Error::NotMultiple { dim: Dim::K, value: k, multiple_of: 4 });
    }
    Ok((n.checked_mul(k / 4).ok_or(Error::SizeOverflow)?, n))
}

/// Quantizes `n` channels of `k` weights (`w`: row `c` at `w[c * w_stride..]`, `w_stride >= k`
/// elements, every value finite; `k` a multiple of 4, of 32 for the packer) into `codes`
/// (`n * k / 4` bytes, dense rows of `k / 4`) and `scale` (`n` values) for the table `lut`
/// (`None`: the default; every entry in `[-64, 63]`, not all zero). Nothing is written unless
/// every check passes.
#[allow(clippy::too_many_arguments)]
pub fn quantize<S: Element>(
    n: usize,
    k: usize,
    w: &[S],
    w_stride: usize,
    lut: Option<&[i32; 4]>,
    codes: &mut [u8],
    scale: &mut [f32],
) -> Result<()> {
    let (code_bytes, _) = sizes(n, k)?;
    check_table(lut)?;
    let lut = lut.unwrap_or(&DEFAULT_LUT);
    super::check_weights(n, k, w, w_stride)?;
    if codes.len() < code_bytes {
        return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: codes.len(), needed: code_bytes });
    }
    if scale.len() < n {
        return Err(Error::BufferTooShort { buffer: Buffer::Scale, given: scale.len(), needed: n });
    }
    let levels = lut.map(f64::from);
    for c in 0..n {
        let row = &w[c * w_stride..c * w_stride + k];
        let s = channel_scale(row, &levels);
        scale[c] = s;
        let out = &mut codes[c * (k / 4)..(c + 1) * (k / 4)];
        out.fill(0);
        for (j, v) in row.iter().enumerate() {
            out[j / 4] |= code(f64::from(v.to_f32()), f64::from(s), &levels) << (2 * (j % 4));
        }
    }
    Ok(())
}

/// The table's checks: every entry in `[-64, 63]`, not all zero ([`Error::LutOutOfRange`]).
pub(crate) fn check_table(lut: Option<&[i32; 4]>) -> Result<()> {
    let lut = lut.unwrap_or(&DEFAULT_LUT);
    check_lut(lut)?;
    if lut.iter().all(|&e| e == 0) {
        return Err(Error::LutOutOfRange { index: 0, value: 0 });
    }
    Ok(())
}

/// The code whose level `s * lut[u]` is nearest to `w` (the first of equals).
fn code(w: f64, s: f64, levels: &[f64; 4]) -> u8 {
    let mut best = (f64::INFINITY, 0u8);
    for (u, l) in levels.iter().enumerate() {
        let e = (w - s * l).abs();
        if e < best.0 {
            best = (e, u as u8);
        }
    }
    best.1
}

/// Squared error of a channel for the stored scale `s` and its codes.
fn error<S: Element>(row: &[S], s: f32, levels: &[f64; 4]) -> f64 {
    row.iter()
        .map(|v| {
            let w = f64::from(v.to_f32());
            let e = w - f64::from(s) * levels[usize::from(code(w, f64::from(s), levels))];
            e * e
        })
        .sum()
}

/// The scale of one channel (0 for an all-zero channel).
fn channel_scale<S: Element>(row: &[S], levels: &[f64; 4]) -> f32 {
    let amax = row.iter().fold(0f64, |a, v| a.max(f64::from(v.to_f32()).abs()));
    if amax == 0.0 {
        return 0.0;
    }
    let (lo, hi) = levels.iter().fold((0f64, 0f64), |(lo, hi), &l| (lo.min(l), hi.max(l)));
    let mut best: Option<(f64, f32)> = None;
    for e in [lo, hi] {
        for sign in [1.0, -1.0] {
            if e == 0.0 {
                continue;
            }
            let mut s = (sign * amax / e.abs()) as f32;
            // The least-squares scale for these codes: sum w l / sum l^2.
            let (num, den) = row.iter().fold((0f64, 0f64), |(a, b), v| {
                let w = f64::from(v.to_f32());
                let l = levels[usize::from(code(w, f64::from(s), levels))];
                (a + w * l, b + l * l)
            });
            if den > 0.0 {
                let fitted = (num / den) as f32;
                if fitted.is_finite() && fitted != 0.0 && error(row, fitted, levels) <= error(row, s, levels) {
                    s = fitted;
                }
            }
            let err = error(row, s, levels);
            if best.is_none_or(|(b, _)| err < b) {
                best = Some((err, s));
            }
        }
    }
    best.map_or(0.0, |(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_table_and_rejections() {
        let lut = [-3, -1, 1, 3];
        let w: [f32; 32] = core::array::from_fn(|j| [-0.75, -0.25, 0.25, 0.75][j % 4]);
        let (mut codes, mut scale) = ([0u8; 8], [0f32; 1]);
        quantize(1, 32, &w, 32, Some(&lut), &mut codes, &mut scale).unwrap();
        assert_eq!((scale[0], codes[0]), (0.25, 0b11_10_01_00));
        let (mut c2, mut s2) = ([0xeeu8; 8], [7f32; 1]);
        assert_eq!(
            quantize(1, 32, &w, 32, Some(&[0, 0, 64, 1]), &mut c2, &mut s2),
            Err(Error::LutOutOfRange { index: 2, value: 64 })
        );
        assert_eq!(
            quantize(1, 30, &w, 32, None, &mut c2, &mut s2),
            Err(Error::NotMultiple { dim: Dim::K, value: 30, multiple_of: 4 })
        );
        assert_eq!(
            quantize(1, 32, &w, 32, None, &mut c2[..7], &mut s2),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 7, needed: 8 })
        );
        assert!(c2 == [0xee; 8] && s2 == [7.0]);
    }

    #[test]
    fn rejects_short_strides_buffers_non_finite_weights_and_an_all_zero_table() {
        use crate::error::Stride;
        let ok = [0.5f32; 64];
        let (mut c, mut s) = ([0xeeu8; 16], [7f32; 2]);
        assert_eq!(
            quantize(2, 32, &ok, 31, None, &mut c, &mut s),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 31, needed: 32 })
        );
        assert_eq!(
            quantize(2, 32, &ok[..63], 32, None, &mut c, &mut s),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 63, needed: 64 })
        );
        assert_eq!(
            quantize(2, 32, &ok, 32, None, &mut c, &mut s[..1]),
            Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 1, needed: 2 })
        );
        let mut bad = ok;
        bad[40] = f32::INFINITY;
        assert_eq!(
            quantize(2, 32, &bad, 32, None, &mut c, &mut s),
            Err(Error::NonFinite { buffer: Buffer::Rhs, index: 40 })
        );
        assert_eq!(
            quantize(2, 32, &ok, 32, Some(&[0; 4]), &mut c, &mut s),
            Err(Error::LutOutOfRange { index: 0, value: 0 })
        );
        assert!(c == [0xee; 16] && s == [7.0; 2]);
        assert_eq!(sizes(1, 0), Err(Error::ZeroDim { dim: Dim::K }));
    }

    #[test]
    fn larger_side_takes_the_longer_side_of_the_table() {
        // Mostly positive weights: the scale turns negative so that +amax maps to lut[0] = -2.
        let w: [f32; 32] = core::array::from_fn(|j| [1.0, 0.5, 0.0, -0.5][j % 4]);
        let (mut codes, mut scale) = ([0u8; 8], [0f32; 1]);
        quantize(1, 32, &w, 32, None, &mut codes, &mut scale).unwrap();
        assert_eq!(scale[0], -0.5);
        assert_eq!(error(&w, scale[0], &DEFAULT_LUT.map(f64::from)), 0.0);
    }
}
