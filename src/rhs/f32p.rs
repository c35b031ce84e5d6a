//! RHS formats `f32p16` and `f32p8` (docs/formats.md, §Float formats): f32 weights copied bit for
//! bit in tiles of 16 or 8 columns, each led by its f32 biases. Consumed by
//! [`f32_f32_f32p`](crate::f32_f32_f32p).

use crate::error::Result;
use crate::packing::{RhsFormat, RhsPacking};
use crate::rhs::float::{FloatSource, pack_copy};

/// Tiles of 16 columns (KleidiAI `x32p16x1b`, the 6x16 kernels).
pub const F32P16: RhsPacking = RhsPacking::float(RhsFormat::F32p, 16, 1);
/// Tiles of 8 columns (KleidiAI `f32p8x1biasf32`, the 6x8 kernel).
pub const F32P8: RhsPacking = RhsPacking::float(RhsFormat::F32p, 8, 1);

/// Packs `n` columns of depth `k` into `out` (at least `format.packed_size(n, k, 0)` bytes), for
/// [`F32P16`] or [`F32P8`] (KleidiAI `rhs_pack_kxn_x32p16x1b_x32_x32_neon`,
/// `rhs_pack_nxk_x32p16x1bx32_x32_x32_neon`, `rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon`, with
/// either input layout).
///
/// Values and biases are copied as bit patterns (`-0` and subnormals survive); a `None` bias
/// packs zeros. Padding columns and their bias slots are written 0 (KleidiAI leaves some of
/// those slots unwritten, docs/formats.md, §Float formats). A NaN or infinite weight or bias is
/// rejected before anything is written ([`Error::NonFinite`](crate::Error::NonFinite) on
/// [`Buffer::Rhs`](crate::error::Buffer::Rhs) with its index in `src.data`, or on
/// [`Buffer::Bias`](crate::error::Buffer::Bias)); values between the rows of a strided source
/// are not read.
pub fn pack(
    format: &RhsPacking,
    n: usize,
    k: usize,
    src: &FloatSource<'_, f32>,
    bias: Option<&[f32]>,
    out: &mut [u8],
) -> Result<()> {
    pack_copy(format, n, k, src, bias, out)
}
