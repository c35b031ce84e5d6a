//! NEON tier of `f32_f32_f32p`: `FMLA` (by element) kernels in `asm!`, tiles of up to 6 rows x
//! 16 columns ([`F32P16`](crate::rhs::f32p::F32P16)) or 8 ([`F32P8`](crate::rhs::f32p::F32P8)),
//! 4 depths per main-loop iteration (one `LDR q` per LHS row). See `float::fma` (crate-private)
//! for the registers and the tile driver; the bits are the scalar tier's (docs/formats.md,
//! §Arithmetic: FMA kernels, §Arithmetic: float clamp and outputs).

use super::Descriptor;

crate::float::fma::fma_tier! {
    elem: f32, lanes_n: 4,
    cfg: {
        feature: "neon", arr: ".4s", lane: "s", tail: "s", esz: "4", lanes: ["0", "1", "2", "3"],
        // The f32 bounds as they are.
        bounds: ["dup v6.4s, {lo:w}", "dup v7.4s, {hi:w}"],
    },
    wide: (NEON_6X16, "matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla", Neon, crate::float::f32_f32_f32p::PACKING_1X16),
    narrow: (NEON_6X8, "matmul_clamp_f32_f32_f32p8x1biasf32_6x8x4_neon_mla", Neon, crate::float::f32_f32_f32p::PACKING_1X8),
}
