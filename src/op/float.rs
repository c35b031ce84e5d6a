//! The float families in the operator layer: their [`Operator`] impls (the f32/f16 rows read in
//! place, or packed as bf16 into the scratch) and each family's `Linear::pack`.
//!
//! ```
//! use qgemm::f32_f32_f32p::F32F32F32p;
//! use qgemm::op::Linear;
//! use qgemm::rhs::FloatSource;
//! use qgemm::CpuFeatures;
//!
//! let (n, k) = (3, 4);
//! let w = [0.5f32; 3 * 4]; // n x k
//! let mut packed = vec![0u8; Linear::<F32F32F32p>::packed_size(n, k)?];
//! let layer = Linear::<F32F32F32p>::pack(n, k, &FloatSource::nxk(&w, k), Some(&[1.0, 2.0, 3.0]), &mut packed)?;
//! let cpu = CpuFeatures::from_target();
//! let mut y = [0f32; 2 * 3];
//! layer.run(&cpu, 2, &[1.0f32; 2 * 4], &mut y, &mut [])?;
//! assert_eq!(y, [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]);
//! # Ok::<(), qgemm::Error>(())
//! ```

use half::f16;

use super::{Linear, Operator};
use crate::Packing;
use crate::error::{Error, Param, Result};
use crate::f16_bf16p_bf16p::F16Bf16pBf16p;
use crate::f16_f16_f16p::F16F16F16p;
use crate::f32_bf16p_bf16p::F32Bf16pBf16p;
use crate::f32_f32_f32p::F32F32F32p;
use crate::lhs::bf16p;
use crate::packing::LhsFormat;
use crate::rhs::{FloatSource, bf16p12, f16p, f32p};

/// `Operator` for a family whose kernels read the `$t` rows in place.
macro_rules! rows_operator {
    ($($fam:ty: $t:ty),+ $(,)?) => {$(
        impl Operator for $fam {
            type Src = $t;
            const ROWS: bool = true;
            fn pack_lhs(
                p: &Packing, _m: usize, _k: usize, _bl: usize, _at: usize, _x: &[$t], _s: usize, _out: &mut [u8],
            ) -> Result<()> {
                // Never called: the kernels read the rows in place (`ROWS`).
                Err(Error::Unsupported { param: Param::Mr, value: p.mr })
            }
            fn kernel_lhs<'a>(rows: &'a [$t], _packed: &'a [u8]) -> &'a [$t] {
                rows
            }
        }
    )+};
}

rows_operator!(F32F32F32p: f32, F16F16F16p: f16);

/// `Operator` for a family whose activations of type `$t` are packed as bf16 (`bf16p`).
macro_rules! bf16p_operator {
    ($($fam:ty: $t:ty),+ $(,)?) => {$(
        impl Operator for $fam {
            type Src = $t;
            fn pack_lhs(
                p: &Packing, m: usize, k: usize, _bl: usize, _at: usize, x: &[$t], s: usize, out: &mut [u8],
            ) -> Result<()> {
                // The rows from a tile start: the layout does not depend on their index.
                bf16p::pack(&p.lhs(LhsFormat::Bf16p), m, k, x, s, out)
            }
            fn kernel_lhs<'a>(_rows: &'a [$t], packed: &'a [u8]) -> &'a [u8] {
                packed
            }
        }
    )+};
}

bf16p_operator!(F32Bf16pBf16p: f32, F16Bf16pBf16p: f16);

/// `Linear::packed_size` and `Linear::pack` of a float family: `$t` weights (either layout,
/// [`FloatSource`]) and an optional bias of `$bias`, packed by `$pack(&PREFERRED_RHS, ..)` or
/// `$pack(..)`.
macro_rules! float_pack {
    ($fam:ty, $t:ty, $bias:ty, $doc:literal, |$n:ident, $k:ident, $w:ident, $b:ident, $buf:ident| $pack:expr) => {
        impl<'w> Linear<'w, $fam> {
            /// Bytes of packed weights for `n` channels of depth `k`.
            pub fn packed_size(n: usize, k: usize) -> Result<usize> {
                Self::size(n, k, 0)
            }

            #[doc = concat!("Packs `n x k` weights `w` (either layout) and an optional bias of `n` values into `buf` ",
                "(at least [`Linear::packed_size`] bytes) in the family's preferred packing (", $doc, ") and wraps them. ",
                "A NaN or infinite weight or bias is [`Error::NonFinite`], nothing written.")]
            pub fn pack(
                $n: usize,
                $k: usize,
                $w: &FloatSource<'_, $t>,
                $b: Option<&[$bias]>,
                $buf: &'w mut [u8],
            ) -> Result<Self> {
                let size = Self::packed_size($n, $k)?;
                $pack?;
                Self::from_packed($n, $k, 0, &$buf[..size])
            }
        }
    };
}

float_pack!(F32F32F32p, f32, f32, "[`f32p::F32P16`]", |n, k, w, b, buf| f32p::pack(&f32p::F32P16, n, k, w, b, buf));
float_pack!(F16F16F16p, f16, f16, "[`f16p::F16P32`]", |n, k, w, b, buf| f16p::pack(&f16p::F16P32, n, k, w, b, buf));
float_pack!(F32Bf16pBf16p, f32, f32, "[`bf16p12::BF16P12_B32`]", |n, k, w, b, buf| bf16p12::pack_b32(n, k, w, b, buf));
float_pack!(F16Bf16pBf16p, f16, f16, "[`bf16p12::BF16P12_B16`]", |n, k, w, b, buf| bf16p12::pack_b16(n, k, w, b, buf));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Family;

    #[test]
    fn the_preferred_packings_are_the_packers_formats() {
        assert_eq!(F32F32F32p::PREFERRED_RHS, f32p::F32P16);
        assert_eq!(F16F16F16p::PREFERRED_RHS, f16p::F16P32);
        assert_eq!(F32Bf16pBf16p::PREFERRED_RHS, bf16p12::BF16P12_B32);
        assert_eq!(F16Bf16pBf16p::PREFERRED_RHS, bf16p12::BF16P12_B16);
        assert_eq!(F32Bf16pBf16p::PREFERRED_LHS, Some(bf16p::BF16P8X4));
    }
}
