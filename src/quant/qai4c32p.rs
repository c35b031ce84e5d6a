//! Asymmetric int4 per block (`qai4c32p`, GGML `Q4_1`-like): each block of `bl` weights of a
//! channel becomes 16-level codes `u` and an f32 `scale` and `zero` with
//! `w ≈ (u - 8) * scale + zero` (docs/formats.md, §Layout: qai4c32p), written as the raw input of
//! [`rhs::qai4c32p::pack`](crate::rhs::qai4c32p::pack): `n` rows of `k / 2` bytes of s0s1 codes
//! (the first depth of a pair in the high nibble) and `n * k / bl` scales and offsets.
//!
//! ```
//! use qgemm::quant::qai4c32p::{self, Method};
//!
//! let (n, k, bl) = (2, 64, 32);
//! let w: Vec<f32> = (0..n * k).map(|i| (i % 16) as f32 * 0.25 - 1.0).collect();
//! let (code_bytes, params) = qai4c32p::sizes(n, k, bl)?;
//! let (mut codes, mut zero, mut scale) = (vec![0u8; code_bytes], vec![0f32; params], vec![0f32; params]);
//! qai4c32p::quantize(Method::MinMax, n, k, bl, &w, k, &mut codes, &mut zero, &mut scale)?;
//! // Weights on a grid of 16 levels per block come back exactly.
//! let u = |j: usize| if j % 2 == 0 { codes[j / 2] >> 4 } else { codes[j / 2] & 0xf };
//! assert_eq!((u(1) as f32 - 8.0) * scale[0] + zero[0], w[1]);
//! # Ok::<(), qgemm::Error>(())
//! ```

use crate::element::Element;
use crate::error::{Buffer, Error, Result};
use crate::packing::check_blocks;
use crate::rhs::check_nk;

/// How a block's scale and offset are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Method {
    /// GGML `Q4_1`'s rule: the block's range `[min, max]` in 15 steps,
    /// `scale = (max - min) / 15`, `zero = min + 8 * scale`, `u = round((w - min) / scale)`.
    MinMax,
    /// [`Method::MinMax`], then the least-squares `scale` and `zero` for those codes (a line fit
    /// of `w` on `u`), then the codes again for the fitted (stored) values: never a larger
    /// squared error than `MinMax` on the same block.
    Fitted,
}

/// `(code bytes, values per parameter array)` for an `n x k` matrix in blocks of `bl`:
/// `n * k / 2` and `n * k / bl`.
pub fn sizes(n: usize, k: usize, bl: usize) -> Result<(usize, usize)> {
    check_nk(n, k)?;
    check_blocks(k, bl)?;
    let codes = n.checked_mul(k / 2).ok_or(Error::SizeOverflow)?;
    Ok((codes, n * (k / bl)))
}

/// Quantizes `n` channels of `k` weights (`w`: row `c` at `w[c * w_stride..]`, `w_stride >= k`
/// elements, every value finite) in blocks of `bl` (a multiple of 32 dividing `k`) into
/// `codes` (`n * k / 2` bytes, dense rows of `k / 2`), `zero` and `scale` (`n * k / bl` each,
/// `[c][b]`). Nothing is written unless every check passes.
#[allow(clippy::too_many_arguments)]
pub fn quantize<S: Element>(
    method: Method,
    n: usize,
    k: usize,
    bl: usize,
    w: &[S],
    w_stride: usize,
    codes: &mut [u8],
    zero: &mut [f32],
    scale: &mut [f32],
) -> Result<()> {
    let (code_bytes, params) = sizes(n, k, bl)?;
    super::check_weights(n, k, w, w_stride)?;
    if codes.len() < code_bytes {
        return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: codes.len(), needed: code_bytes });
    }
    for (buf, buffer) in [(&*zero, Buffer::Zero), (&*scale, Buffer::Scale)] {
        if buf.len() < params {
            return Err(Error::BufferTooShort { buffer, given: buf.len(), needed: params });
        }
    }
    let nb = k / bl;
    for c in 0..n {
        let row = &w[c * w_stride..c * w_stride + k];
        let out = &mut codes[c * (k / 2)..(c + 1) * (k / 2)];
        for b in 0..nb {
            let block = &row[b * bl..(b + 1) * bl];
            let (z, s) = block_params(method, block);
            zero[c * nb + b] = z;
            scale[c * nb + b] = s;
            for (j, v) in block.iter().enumerate() {
                let u = code(v.to_f32(), z, s);
                let at = (b * bl + j) / 2;
                out[at] = if j % 2 == 0 { (out[at] & 0x0f) | (u << 4) } else { (out[at] & 0xf0) | u };
            }
        }
    }
    Ok(())
}

/// The code of `w` for the stored `zero` and `scale` (f32): the nearest of the 16 levels
/// `(u - 8) * scale + zero` (ties away from zero), computed in f64 (exact for these f32 inputs
/// up to the final rounding).
fn code(w: f32, zero: f32, scale: f32) -> u8 {
    if scale == 0.0 {
        return 8;
    }
    let t = (f64::from(w) - f64::from(zero)) / f64::from(scale) + 8.0;
    libm::round(t).clamp(0.0, 15.0) as u8
}

/// `(zero, scale)` of one block.
fn block_params<S: Element>(method: Method, block: &[S]) -> (f32, f32) {
    let (lo, hi) = block.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(f64::from(v.to_f32())), hi.max(f64::from(v.to_f32())))
    });
    // In f64: `hi - lo` cannot overflow, and `lo + 8 * d` lies in `[lo, hi]`.
    let d = (hi - lo) / 15.0;
    let (mut z, mut s) = ((lo + 8.0 * d) as f32, d as f32);
    if method == Method::Fitted && s != 0.0 {
        // Least squares of w = s * (u - 8) + z over the block, for the MinMax codes.
        let (mut su, mut sw, mut suu, mut suw) = (0f64, 0f64, 0f64, 0f64);
        for v in block {
            let w = f64::from(v.to_f32());
            let u = f64::from(code(v.to_f32(), z, s)) - 8.0;
            su += u;
            sw += w;
            suu += u * u;
            suw += u * w;
        }
        let len = block.len() as f64;
        let det = len * suu - su * su;
        if det > 0.0 {
            let fs = (len * suw - su * sw) / det;
            let fz = (sw - fs * su) / len;
            let (fz32, fs32) = (fz as f32, fs as f32);
            if fs32.is_finite() && fz32.is_finite() && fs32 > 0.0 && error(block, fz32, fs32) <= error(block, z, s) {
                (z, s) = (fz32, fs32);
            }
        }
    }
    (z, s)
}

/// Squared error of a block for the stored `zero` and `scale` and its codes.
fn error<S: Element>(block: &[S], zero: f32, scale: f32) -> f64 {
    block
        .iter()
        .map(|v| {
            let w = f64::from(v.to_f32());
            let u = f64::from(code(v.to_f32(), zero, scale)) - 8.0;
            let e = w - (u * f64::from(scale) + f64::from(zero));
            e * e
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_values_round_trip_and_constant_blocks_are_exact() {
        let (n, k, bl) = (1, 64, 32);
        let mut w = [0f32; 64];
        for (j, v) in w.iter_mut().enumerate().take(32) {
            *v = -0.75 + 0.125 * (j % 16) as f32;
        }
        w[32..].fill(3.5);
        let (mut codes, mut zero, mut scale) = ([0u8; 32], [0f32; 2], [0f32; 2]);
        for method in [Method::MinMax, Method::Fitted] {
            quantize(method, n, k, bl, &w, k, &mut codes, &mut zero, &mut scale).unwrap();
            for (j, &v) in w.iter().enumerate() {
                let u = if j % 2 == 0 { codes[j / 2] >> 4 } else { codes[j / 2] & 0xf };
                let b = j / bl;
                assert_eq!((f32::from(u) - 8.0) * scale[b] + zero[b], v, "{method:?} depth {j}");
            }
            assert_eq!((zero[1], scale[1]), (3.5, 0.0));
        }
    }

    #[test]
    fn fitted_is_never_worse_than_min_max() {
        let mut s = 7u32;
        let w: [f32; 256] = core::array::from_fn(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let x = (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            x * x * x
        });
        let (mut codes, mut zero, mut scale) = ([0u8; 128], [0f32; 8], [0f32; 8]);
        let mut errs = [0f64; 2];
        for (e, method) in errs.iter_mut().zip([Method::MinMax, Method::Fitted]) {
            quantize(method, 4, 64, 32, &w, 64, &mut codes, &mut zero, &mut scale).unwrap();
            *e = w.chunks(32).enumerate().map(|(b, blk)| error(blk, zero[b], scale[b])).sum();
        }
        assert!(errs[1] <= errs[0], "{errs:?}");
    }

    #[test]
    fn rejects_bad_input_before_writing() {
        let w: [f32; 64] = core::array::from_fn(|j| if j % 2 == 0 { 1.0 } else { f32::NAN });
        let (mut codes, mut zero, mut scale) = ([0xeeu8; 32], [7f32; 2], [7f32; 2]);
        let e = quantize(Method::MinMax, 1, 64, 32, &w, 64, &mut codes, &mut zero, &mut scale);
        assert_eq!(e, Err(Error::NonFinite { buffer: Buffer::Rhs, index: 1 }));
        let ok = [1.0f32; 64];
        let e = quantize(Method::MinMax, 1, 64, 32, &ok, 64, &mut codes, &mut zero[..1], &mut scale);
        assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Zero, given: 1, needed: 2 }));
        let e = quantize(Method::MinMax, 1, 64, 48, &ok, 64, &mut codes, &mut zero, &mut scale);
        assert!(matches!(e, Err(Error::NotMultiple { .. })));
        assert!(codes.iter().all(|&b| b == 0xee) && zero == [7.0; 2] && scale == [7.0; 2]);
    }

    #[test]
    fn rejects_short_strides_and_buffers() {
        use crate::error::Stride;
        let ok = [1.0f32; 128];
        let (mut codes, mut zero, mut scale) = ([0xeeu8; 64], [7f32; 4], [7f32; 4]);
        let q = |w: &[f32], stride, c: &mut [u8], z: &mut [f32], s: &mut [f32]| {
            quantize(Method::Fitted, 2, 64, 32, w, stride, c, z, s)
        };
        assert_eq!(
            q(&ok, 63, &mut codes, &mut zero, &mut scale),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 63, needed: 64 })
        );
        assert_eq!(
            q(&ok[..127], 64, &mut codes, &mut zero, &mut scale),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 127, needed: 128 })
        );
        assert_eq!(
            q(&ok, 64, &mut codes[..63], &mut zero, &mut scale),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 63, needed: 64 })
        );
        assert_eq!(
            q(&ok, 64, &mut codes, &mut zero, &mut scale[..3]),
            Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 3, needed: 4 })
        );
        assert!(codes.iter().all(|&b| b == 0xee) && zero == [7.0; 4] && scale == [7.0; 4]);
        assert_eq!(sizes(0, 64, 32), Err(Error::ZeroDim { dim: crate::error::Dim::N }));
        assert_eq!(sizes(usize::MAX, 64, 32), Err(Error::SizeOverflow));
    }
}
