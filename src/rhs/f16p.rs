//! RHS formats `f16p32` and `f16p16` (docs/formats.md, §Float formats): f16 weights copied bit for
//! bit in tiles of 32 or 16 columns, each led by its f16 biases. Consumed by
//! [`f16_f16_f16p`](crate::f16_f16_f16p).

use half::f16;

use crate::error::Result;
use crate::packing::{RhsFormat, RhsPacking};
use crate::rhs::float::{FloatSource, pack_copy};

/// Tiles of 32 columns (KleidiAI `x16p32x1b`, the 6x32 kernels).
pub const F16P32: RhsPacking = RhsPacking::float(RhsFormat::F16p, 32, 1);
/// Tiles of 16 columns (KleidiAI `f16p16x1biasf16`, the 6x16 kernel).
pub const F16P16: RhsPacking = RhsPacking::float(RhsFormat::F16p, 16, 1);

/// Packs `n` columns of depth `k` into `out` (at least `format.packed_size(n, k, 0)` bytes), for
/// [`F16P32`] or [`F16P16`] (KleidiAI `rhs_pack_kxn_x16p32x1b_x16_x16_neon`,
/// `rhs_pack_nxk_x16p32x1bx16_x16_x16_neon`, `rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon`, with
/// either input layout).
///
/// Values and biases are copied as bit patterns; a `None` bias packs zeros. Padding columns and
/// their bias slots are written 0 (KleidiAI's NxK packer leaves a register's leftover in the
/// padding values, docs/formats.md, §Float formats). Non-finite weights and biases are rejected
/// as by [`f32p::pack`](crate::rhs::f32p::pack).
pub fn pack(
    format: &RhsPacking,
    n: usize,
    k: usize,
    src: &FloatSource<'_, f16>,
    bias: Option<&[f16]>,
    out: &mut [u8],
) -> Result<()> {
    pack_copy(format, n, k, src, bias, out)
}
