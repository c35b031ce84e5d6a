//! Weight quantization: from f32 (or [`half::f16`] / [`half::bf16`]) weights to the raw inputs of
//! the RHS packers, in caller buffers. One module per weight format; each quantizer is plain
//! scalar arithmetic (deterministic, the same bits on every target) and validates its input
//! like the packers (typed errors, nothing written on a rejected call).
//!
//! * [`qsi4cxp`]: symmetric int4 per channel (f32 scales);
//! * [`qsi4c32p`]: symmetric int4 per block of `bl` with bf16 scales;
//! * [`q4_0`]: GGML `Q4_0` blocks (int4 per block with f16 scales), the input of
//!   [`rhs::qsi4c32pscalef16::pack`](crate::rhs::qsi4c32pscalef16::pack);
//! * [`qsi8cxp`]: symmetric int8 per channel (f32 scales);
//! * [`qai4c32p`]: asymmetric int4 per block of `bl` (an f32 scale and an f32 offset per block),
//!   the input of [`rhs::qai4c32p::pack`](crate::rhs::qai4c32p::pack);
//! * [`qsu2cxp`]: 2-bit codes through a 4-entry table with an f32 scale per channel, the input
//!   of [`rhs::qsu2cxp::pack`](crate::rhs::qsu2cxp::pack).
//!
//! The symmetric formats share the scale rules of [`Method`] (round to nearest, GGML's signed
//! maximum, the error-minimizing search and its importance-weighted form) and take the weights
//! as [`Weights`] (NxK or KxN).
//!
//! * [`divide_depths`]: folds the inverse of an activation-aware (AWQ) input scale into f32
//!   weights before quantization, for a layer run with
//!   [`op::Linear::with_input_scale`](crate::op::Linear::with_input_scale).
//!
//! * [`gptq`]: the same symmetric formats ([`qsi4cxp`], [`qsi4c32p`], [`q4_0`], [`qsi8cxp`])
//!   quantized by GPTQ, which feeds each depth's rounding error into the depths not yet
//!   quantized through the inverse of `X^T X` over calibration activations `X` (accumulated by
//!   [`gptq::Hessian`]), to keep the layer's outputs rather than its weights close.
//!
//! From float weights to a layer in one call (quantize into a caller workspace, then pack):
//! each family's `op::Linear::quantize_pack` ([`op::QuantizePack`](crate::op::QuantizePack)).

mod fast;
pub mod gptq;
pub mod q4_0;
pub mod qai4c32p;
pub mod qsi4c32p;
pub mod qsi4cxp;
pub mod qsi8cxp;
pub mod qsu2cxp;
mod symmetric;

pub use symmetric::{Method, Weights};

use crate::element::Element;
use crate::error::{Buffer, Error, Result, Stride};

/// Divides depth `j` of every channel of the `n x k` f32 weights `w` (`layout`, rows `stride`
/// elements apart) by `scale[j]`, in place: the weights to quantize for a layer whose
/// activations are multiplied by `scale` at run time
/// ([`op::Linear::with_input_scale`](crate::op::Linear::with_input_scale)), so that
/// `(x diag(scale)) (W diag(scale)^-1)^T = x W^T`. `scale` holds `k` values whose reciprocals are
/// finite ([`Error::NonFinite`] on [`Buffer::InputScale`] for a non-finite or zero value); a
/// quotient that overflows is left for the quantizer to reject. Nothing is written on an error.
pub fn divide_depths(
    n: usize,
    k: usize,
    w: &mut [f32],
    layout: crate::rhs::Layout,
    stride: usize,
    scale: &[f32],
) -> Result<()> {
    crate::rhs::check_nk(n, k)?;
    let (rows, cols) = match layout {
        crate::rhs::Layout::NxK => (n, k),
        crate::rhs::Layout::KxN => (k, n),
    };
    if stride < cols {
        return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: stride, needed: cols });
    }
    let needed = (rows - 1).checked_mul(stride).and_then(|v| v.checked_add(cols)).ok_or(Error::SizeOverflow)?;
    check_out(w.len(), needed, Buffer::Rhs)?;
    check_out(scale.len(), k, Buffer::InputScale)?;
    if let Some(index) = scale[..k].iter().position(|v| !v.is_finite() || *v == 0.0) {
        return Err(Error::NonFinite { buffer: Buffer::InputScale, index });
    }
    for r in 0..rows {
        let row = &mut w[r * stride..r * stride + cols];
        match layout {
            crate::rhs::Layout::NxK => row.iter_mut().zip(&scale[..k]).for_each(|(v, s)| *v /= s),
            crate::rhs::Layout::KxN => row.iter_mut().for_each(|v| *v /= scale[r]),
        }
    }
    Ok(())
}

/// [`Error::BufferTooShort`] when an output buffer of `given` elements is shorter than `needed`.
pub(crate) fn check_out(given: usize, needed: usize, buffer: Buffer) -> Result<()> {
    if given < needed { Err(Error::BufferTooShort { buffer, given, needed }) } else { Ok(()) }
}

/// What [`quantize_int4_blocks`] produces for block `b` of channel `c`.
pub(crate) enum BlockOut<'q> {
    /// The code of the block's depth `j` (depth `b * bl + j` of the channel).
    Code(usize, i8),
    /// The codes of the whole block, in depth order (instead of `bl` [`BlockOut::Code`]s).
    Codes(&'q [i8]),
    /// The block's stored scale, after its codes.
    Scale(f32),
}

/// Quantizes every block of `bl` depths of every channel to int4 codes by `method`, the scale
/// rounded by `round` (checked finite by [`check_block_scales`] first), calling
/// `out(c, b, ..)` for each code and then the scale.
#[allow(clippy::too_many_arguments)]
pub(crate) fn quantize_int4_blocks<S: Element>(
    method: &Method<'_>,
    n: usize,
    k: usize,
    bl: usize,
    w: &Weights<'_, S>,
    round: impl Fn(f32) -> f32 + Copy,
    mut out: impl FnMut(usize, usize, BlockOut<'_>),
) {
    let mut codes = [0i8; fast::CHUNK];
    for c in 0..n {
        for b in 0..k / bl {
            // Round to nearest on f32 NxK rows: NEON (blocks of up to `CHUNK` values).
            if let Some(x) = fast::rtn_row(method, w, c, b * bl, bl).filter(|_| bl <= fast::CHUNK) {
                let s = fast::rtn_scale(x, 7, round);
                fast::rtn_codes(x, s, 7, &mut codes);
                out(c, b, BlockOut::Codes(&codes[..bl]));
                out(c, b, BlockOut::Scale(s));
                continue;
            }
            let s = symmetric::quantize_group(
                method,
                bl,
                b * bl,
                |j| w.at(c, b * bl + j),
                7,
                round,
                |j, q| {
                    out(c, b, BlockOut::Code(j, q));
                },
            );
            out(c, b, BlockOut::Scale(s.unwrap_or(0.0)));
        }
    }
}

/// [`Error::ScaleOverflow`] at the first value of the first block of int4 codes whose scale would
/// not be finite in the stored type (`round`): [`Method::RoundToNearest`]'s scale is
/// `max |w| / 7`; the other methods' smallest candidate is `max |w| / 8`, and they never pick a
/// non-finite one.
pub(crate) fn check_block_scales<S: Element>(
    method: &Method<'_>,
    n: usize,
    k: usize,
    bl: usize,
    w: &Weights<'_, S>,
    round: impl Fn(f32) -> f32,
) -> Result<()> {
    let levels = if *method == Method::RoundToNearest { 7.0 } else { 8.0 };
    for c in 0..n {
        // No block of a row can overflow when the row's largest value does not (f32 NxK rows:
        // one 16-wide pass).
        if let Some(x) = fast::rtn_row(&Method::RoundToNearest, w, c, 0, k)
            && round(crate::lhs::quant::abs_max_finite(x) / levels).is_finite()
        {
            continue;
        }
        for b in 0..k / bl {
            let amax = match fast::rtn_row(&Method::RoundToNearest, w, c, b * bl, bl) {
                Some(x) => crate::lhs::quant::abs_max_finite(x),
                None => (0..bl).fold(0f32, |a, j| a.max(w.at(c, b * bl + j).abs())),
            };
            if !round(amax / levels).is_finite() {
                let index = match w.layout {
                    crate::rhs::Layout::NxK => c * w.stride + b * bl,
                    crate::rhs::Layout::KxN => b * bl * w.stride + c,
                };
                return Err(Error::ScaleOverflow { buffer: Buffer::Rhs, index });
            }
        }
    }
    Ok(())
}

/// Checks an `n x k` weight matrix of `w_stride`-element rows (`>= k`): its length and that
/// every value is finite ([`Error::NonFinite`] with the element index, [`Buffer::Rhs`]).
pub(crate) fn check_weights<S: Element>(n: usize, k: usize, w: &[S], w_stride: usize) -> Result<()> {
    if w_stride < k {
        return Err(Error::StrideTooSmall { stride: Stride::Rhs, given: w_stride, needed: k });
    }
    let needed = (n - 1).checked_mul(w_stride).and_then(|v| v.checked_add(k)).ok_or(Error::SizeOverflow)?;
    if w.len() < needed {
        return Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: w.len(), needed });
    }
    for c in 0..n {
        if let Some(j) = w[c * w_stride..c * w_stride + k].iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { buffer: Buffer::Rhs, index: c * w_stride + j });
        }
    }
    Ok(())
}
