//! ISA tiers.

use core::fmt;

use crate::cpu::{CpuFeatures, Feature};

/// ISA tier of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Tier {
    /// Portable Rust; runs on every target, including x86.
    Scalar,
    /// NEON intrinsics; any ARMv8-A (Cortex-A53/A72 class).
    Neon,
    /// Hand-written `asm!` with `SDOT` (FEAT_DotProd).
    Dotprod,
    /// Hand-written `asm!` with `SMMLA` (FEAT_I8MM).
    I8mm,
    /// Half-precision arithmetic (FEAT_FP16): the `FMLA` kernels of
    /// [`f16_f16_f16p`](crate::f16_f16_f16p).
    Fp16,
    /// BFloat16 arithmetic (FEAT_BF16): the `BFMMLA`/`BFDOT` kernels of the bf16 float
    /// families.
    Bf16,
}

impl Tier {
    /// The CPU feature the tier needs, `None` for the scalar tier.
    pub const fn required_feature(self) -> Option<Feature> {
        match self {
            Tier::Scalar => None,
            Tier::Neon => Some(Feature::Neon),
            Tier::Dotprod => Some(Feature::Dotprod),
            Tier::I8mm => Some(Feature::I8mm),
            Tier::Fp16 => Some(Feature::Fp16),
            Tier::Bf16 => Some(Feature::Bf16),
        }
    }

    /// Whether kernels of this tier may run on `cpu` (the SIMD tiers also need NEON).
    pub const fn is_available(self, cpu: &CpuFeatures) -> bool {
        match self.required_feature() {
            None => true,
            Some(Feature::Neon) => cpu.has(Feature::Neon),
            Some(f) => cpu.has(Feature::Neon) && cpu.has(f),
        }
    }

    /// Lower-case name (`"scalar"`, `"neon"`, `"dotprod"`, `"i8mm"`, `"fp16"`, `"bf16"`).
    pub const fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
            Tier::Neon => "neon",
            Tier::Dotprod => "dotprod",
            Tier::I8mm => "i8mm",
            Tier::Fp16 => "fp16",
            Tier::Bf16 => "bf16",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
