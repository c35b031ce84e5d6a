//! Float GEMM families (formats and arithmetic: docs/formats.md, §Float formats and the float
//! `Arithmetic` sections): f32 and f16 `FMLA` kernels that read the LHS rows unpacked, and bf16
//! `BFDOT`/`BFMMLA` kernels on a packed bf16 LHS.
//!
//! | family | LHS | RHS (packed, with bias) | output | fastest tier |
//! |---|---|---|---|---|
//! | [`f32_f32_f32p`] | f32 rows | [`F32P16`](crate::rhs::f32p::F32P16), [`F32P8`](crate::rhs::f32p::F32P8) | f32 | NEON `FMLA` |
//! | [`f16_f16_f16p`] | f16 rows | [`F16P32`](crate::rhs::f16p::F16P32), [`F16P16`](crate::rhs::f16p::F16P16) | f16 | FEAT_FP16 `FMLA` |
//! | [`f32_bf16p_bf16p`] | [`BF16P8X4`](crate::lhs::bf16p::BF16P8X4), [`BF16P1X4`](crate::lhs::bf16p::BF16P1X4) | [`BF16P12_B32`](crate::rhs::bf16p12::BF16P12_B32) | f32 | FEAT_BF16 `BFMMLA`, `BFDOT` |
//! | [`f16_bf16p_bf16p`] | [`BF16P8X4`](crate::lhs::bf16p::BF16P8X4) | [`BF16P12_B16`](crate::rhs::bf16p12::BF16P12_B16) | f16 | FEAT_BF16 `BFMMLA` |
//!
//! Every kernel has a scalar twin that models its instructions exactly (fused f32 and f16
//! multiply-add; the BFloat16 dot product's round-to-odd and flush to zero), so a Cortex-A53
//! or A76 computes the bits a core with FEAT_FP16 and FEAT_BF16 computes. A call takes the same
//! steps as the quantized families: pack the weights once ([`rhs::f32p`](crate::rhs::f32p),
//! [`rhs::f16p`](crate::rhs::f16p), [`rhs::bf16p12`](crate::rhs::bf16p12)), pack the LHS for the
//! bf16 families ([`lhs::bf16p`](crate::lhs::bf16p)), run a [`Kernel`](crate::Kernel).
//!
//! They are families like the quantized ones ([`Family`](crate::Family), [`Descriptor`](crate::Descriptor),
//! [`Kernel`](crate::Kernel), [`op::Linear`](crate::op::Linear)): the families that read the f32/f16
//! activation rows in place take their row stride as their parameter
//! ([`LhsStride`](crate::matmul::LhsStride)).

pub(crate) mod arith;
pub(crate) mod fma;

pub mod f16_bf16p_bf16p;
pub mod f16_f16_f16p;
pub mod f32_bf16p_bf16p;
pub mod f32_f32_f32p;

use crate::matmul::TileStrides;
use crate::packing::Packing;

/// The tile shapes a float tier's driver steps with: the resolved packing's `mr`, `nr` and the
/// call's tile strides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tiles {
    /// LHS rows per tile (1 for rows read in place).
    pub(crate) mr: usize,
    /// Bytes per packed LHS tile (0 for rows read in place).
    pub(crate) lhs_tile: usize,
    /// RHS columns per tile.
    pub(crate) nr: usize,
    /// Bytes per packed RHS tile.
    pub(crate) rhs_tile: usize,
}

impl Tiles {
    /// The tiles of a call with packing `p` and tile strides `s`.
    pub(crate) const fn new(p: &Packing, s: &TileStrides) -> Tiles {
        Tiles { mr: p.mr, lhs_tile: s.lhs, nr: p.nr, rhs_tile: s.rhs }
    }
}

/// A float family: its marker type, `Kernel`/`Descriptor` aliases, packings (`sr = 1`), the
/// `Family` impl (`lhs`: what `run` reads as LHS; `params`: `LhsStride` for rows read in place,
/// `()` for a packed LHS; `finite_rows`: `true` where `run` reads f32/f16 rows in place, which
/// [`Family::check_lhs_rows`](crate::Family::check_lhs_rows) then checks for NaN and infinity,
/// `false` for a packed LHS, which its packer checked), its scalar kernels and `KERNELS` (the
/// SIMD tier modules' lists first) and the dispatch functions (`available`, `select`,
/// `select_for`) of every family.
macro_rules! float_family {
    (@check_rows true) => {
        fn check_lhs_rows(rows: &[Self::Lhs], m: usize, k: usize, stride: usize) -> crate::Result<()> {
            crate::element::check_finite_rows(rows, m, k, stride, crate::error::Buffer::Lhs)
        }
    };
    (@check_rows false) => {};
    (
        $fam:ident, $name:literal, lhs: $lhs:ty, dst: $dst:ty, params: $params:ty, finite_rows: $rows:tt,
        formats: ($lf:ident, $rf:ident), preferred_lhs: $plhs:expr,
        packings: [$($(#[$pdoc:meta])* $pname:ident = ($mr:expr, $nr:expr, $kr:expr)),+ $(,)?],
        preferred: $ppk:ident,
        tiers: [$($tier:ident),*],
        scalar: [$($(#[$doc:meta])* ($ident:ident, $kname:literal, $steps:expr, $p:ident, $raw:path)),+ $(,)?],
        fallback: $fallback:ident $(,)?
    ) => {
        /// Marker type of the family.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $fam;

        /// A kernel of this family, resolved for a CPU.
        pub type Kernel = crate::matmul::Kernel<$fam>;
        /// A catalogue entry of this family.
        pub type Descriptor = crate::matmul::Descriptor<$fam>;

        $(
            $(#[$pdoc])*
            pub const $pname: crate::Packing = crate::Packing { mr: $mr, nr: $nr, kr: $kr, sr: 1 };
        )+

        /// The RHS packing `select` and the operator use.
        pub const PREFERRED_RHS: crate::RhsPacking = $ppk.rhs(crate::RhsFormat::$rf);

        impl crate::matmul::sealed::Sealed for $fam {}

        impl crate::Family for $fam {
            const NAME: &'static str = $name;
            const BLOCKED: bool = false;
            type Lhs = $lhs;
            type Dst = $dst;
            type Params = $params;
            const PREFERRED_RHS: crate::RhsPacking = PREFERRED_RHS;
            const PREFERRED_LHS: Option<crate::LhsPacking> = $plhs;

            fn kernels() -> &'static [&'static Descriptor] {
                KERNELS
            }

            crate::float::float_family!(@check_rows $rows);
        }

        family_catalogue!(@common $fam, ($lf, $rf), fallback: $fallback, tiers: [$($tier),*],
            scalar: [$($(#[$doc])* ($ident, $kname, $steps, $p, $raw)),+]);
    };
}
pub(crate) use float_family;
