//! Weight quantization: from f32 (or [`half::f16`] / [`half::bf16`]) weights to the raw inputs of
//! the RHS packers, in caller buffers. One module per weight format; each quantizer is plain
//! scalar arithmetic (deterministic, the same bits on every target) and validates its input
//! like the packers (typed errors, nothing written on a rejected call).
//!
//! * [`qai4c32p`]: asymmetric int4 per block of `bl` (an f32 scale and an f32 offset per block),
//!   the input of [`rhs::qai4c32p::pack`](crate::rhs::qai4c32p::pack);
//! * [`qsu2cxp`]: 2-bit codes through a 4-entry table with an f32 scale per channel, the input
//!   of [`rhs::qsu2cxp::pack`](crate::rhs::qsu2cxp::pack).

pub mod qai4c32p;
pub mod qsu2cxp;

use crate::element::Element;
use crate::error::{Buffer, Error, Result, Stride};

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
