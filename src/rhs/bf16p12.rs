//! RHS formats `bf16p12_b32` and `bf16p12_b16` (docs/formats.md, §Float formats): weights
//! rounded to bf16 in tiles of 12 columns and blocks of 4 depths, each tile led by its f32 or f16
//! biases. Consumed by [`f32_bf16p_bf16p`](crate::f32_bf16p_bf16p) (`_b32`) and
//! [`f16_bf16p_bf16p`](crate::f16_bf16p_bf16p) (`_b16`).

use half::f16;

use crate::element::Element;
use crate::error::Result;
use crate::float::arith::bf16_rne;
use crate::packing::{RhsFormat, RhsPacking};
use crate::rhs::float::{FloatSource, check_pack, put};

/// Tiles of 12 columns, f32 biases (KleidiAI `bf16p12x4biasf32`).
pub const BF16P12_B32: RhsPacking = RhsPacking::float(RhsFormat::Bf16pB32, 12, 4);
/// Tiles of 12 columns, f16 biases (KleidiAI `bf16p12x4biasf16`).
pub const BF16P12_B16: RhsPacking = RhsPacking::float(RhsFormat::Bf16pB16, 12, 4);

/// Packs f32 or f16 weights (any [`Element`]) with f32 biases into [`BF16P12_B32`]
/// (KleidiAI `rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon`, `rhs_pack_kxn_bf16p12x4biasf32_f16_neon`;
/// either input layout). `out` holds at least `BF16P12_B32.packed_size(n, k, 0)` bytes.
///
/// Values are rounded to bf16 to nearest even (f16 widened exactly first); the depths from `k`
/// to `roundup(k, 4)` repeat depth 0 of their column (as KleidiAI does; the LHS is zero there);
/// padding columns and their bias slots are 0. Biases are copied bit for bit; `None` packs
/// zeros. A NaN or infinite weight or bias is rejected before anything is written
/// ([`Error::NonFinite`](crate::Error::NonFinite) on [`Buffer::Rhs`](crate::error::Buffer::Rhs)
/// with its index in `src.data`, or on [`Buffer::Bias`](crate::error::Buffer::Bias)); a finite
/// f32 weight above the largest bf16 (about 3.39e38) packs as a bf16 infinity (docs/formats.md,
/// §Non-finite input and overflow).
pub fn pack_b32<T: Element>(
    n: usize,
    k: usize,
    src: &FloatSource<'_, T>,
    bias: Option<&[f32]>,
    out: &mut [u8],
) -> Result<()> {
    pack_bf16(&BF16P12_B32, n, k, src, bias, out)
}

/// Packs f16 weights with f16 biases into [`BF16P12_B16`] (KleidiAI
/// `rhs_pack_kxn_bf16p12x4biasf16_f16_neon`; either input layout), with the rules of
/// [`pack_b32`].
pub fn pack_b16(n: usize, k: usize, src: &FloatSource<'_, f16>, bias: Option<&[f16]>, out: &mut [u8]) -> Result<()> {
    pack_bf16(&BF16P12_B16, n, k, src, bias, out)
}

fn pack_bf16<T: Element, B: Element>(
    format: &RhsPacking,
    n: usize,
    k: usize,
    src: &FloatSource<'_, T>,
    bias: Option<&[B]>,
    out: &mut [u8],
) -> Result<()> {
    let size = check_pack(format, n, k, src, bias, out)?;
    let out = &mut out[..size];
    let nr = format.nr;
    let ts = format.tile_stride(k, 0)?;
    for (t, tile) in out.chunks_exact_mut(ts).enumerate() {
        let (head, data) = tile.split_at_mut(nr * B::SIZE);
        for cc in 0..nr {
            let c = t * nr + cc;
            let b = match bias {
                Some(b) if c < n => b[c],
                _ => B::default(),
            };
            put(head, cc * B::SIZE, b);
        }
        for (q, block) in data.chunks_exact_mut(nr * 8).enumerate() {
            for cc in 0..nr {
                let c = t * nr + cc;
                for i in 0..4 {
                    let j = 4 * q + i;
                    let v = match c < n {
                        true => bf16_rne(src.at(c, if j < k { j } else { 0 }).to_f32()),
                        false => 0,
                    };
                    block[(cc * 4 + i) * 2..][..2].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    Ok(())
}
