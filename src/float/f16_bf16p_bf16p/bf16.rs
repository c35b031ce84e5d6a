//! BF16 tier of `f16_bf16p_bf16p`: the `BFMMLA` 8x12 kernel of
//! [`f32_bf16p_bf16p`'s BF16 tier](crate::float::f32_bf16p_bf16p::bf16) with f16 biases
//! (widened exactly with `FCVTL`), the clamp in f32 with the f32 bounds and the result rounded
//! to f16 with `FCVTN` (docs/formats.md, §Arithmetic: bf16 kernels, §Arithmetic: float clamp
//! and outputs).

use super::Descriptor;

/// This tier's kernels, best first.
#[cfg(target_arch = "aarch64")]
pub const KERNELS: &[&Descriptor] = &[&BF16_8X12];

/// This tier's kernels: none on this architecture.
#[cfg(not(target_arch = "aarch64"))]
pub const KERNELS: &[&Descriptor] = &[];

#[cfg(target_arch = "aarch64")]
pub use aarch64::*;

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use half::f16;

    use super::Descriptor;
    use crate::float::f16_bf16p_bf16p::{PACKING_8X12, kernel};
    use crate::float::f32_bf16p_bf16p::bf16::{mmla_entry, mmla_tiles};
    use crate::matmul::Tier;

    /// `BFMMLA` kernel, 8 rows x 12 columns per step.
    pub static BF16_8X12: Descriptor = kernel(
        "matmul_clamp_f16_bf16p8x4_bf16p12x4b_8x12_neon_mmla",
        Tier::Bf16,
        (8, 12),
        PACKING_8X12,
        mmla_8x12_unchecked,
    );

    mmla_tiles! {
        f16;
        // 12 f16 biases (24 bytes), widened exactly to f32.
        bias = concat!(
            "ldr q28, [{b}], #16\n",
            "ldr d30, [{b}], #8\n",
            "fcvtl2 v29.4s, v28.8h\n",
            "fcvtl v28.4s, v28.4h\n",
            "fcvtl v30.4s, v30.4h",
        );
        // Round the clamped row to f16 (FCVTN, nearest even) and store its 24 bytes.
        store = concat!(
            "fcvtn v26.4h, v26.4s\n",
            "fcvtn2 v26.8h, v27.4s\n",
            "fcvtn v27.4h, v28.4s\n",
            "str q26, [{d}]\n",
            "str d27, [{d}, #16]\n",
            "add {d}, {d}, {stride}\n",
            "fcvtn v29.4h, v29.4s\n",
            "fcvtn2 v29.8h, v30.4s\n",
            "fcvtn v30.4h, v31.4s\n",
            "str q29, [{d}]\n",
            "str d30, [{d}, #16]\n",
            "add {d}, {d}, {stride}",
        );
    }

    mmla_entry! {
        /// Raw entry of [`BF16_8X12`].
        fn mmla_8x12_unchecked(f16)
    }
}
