//! FP16 tier of `f16_f16_f16p`: half-precision `FMLA` (by element, FEAT_FP16) kernels in
//! `asm!`, tiles of up to 6 rows x 32 columns ([`F16P32`](crate::rhs::f16p::F16P32)) or 16
//! ([`F16P16`](crate::rhs::f16p::F16P16)), 8 depths per main-loop iteration (one `LDR q` per
//! LHS row). Every step rounds to f16; the clamp bounds are rounded to f16 (`FCVT`, ±FLT_MAX
//! become ±infinity) and the clamp runs in f16. See `float::fma` (crate-private) for the
//! registers and the tile driver; the bits are the scalar tier's (docs/formats.md,
//! §Arithmetic: FMA kernels, §Arithmetic: float clamp and outputs).

use super::Descriptor;

crate::float::fma::fma_tier! {
    elem: half::f16, lanes_n: 8,
    cfg: {
        feature: "fp16", arr: ".8h", lane: "h", tail: "h", esz: "2",
        lanes: ["0", "1", "2", "3", "4", "5", "6", "7"],
        // The f32 bounds rounded to f16 (FPCR: nearest even), in every lane.
        bounds: [
            "fmov s6, {lo:w}", "fmov s7, {hi:w}",
            "fcvt h6, s6", "fcvt h7, s7",
            "dup v6.8h, v6.h[0]", "dup v7.8h, v7.h[0]",
        ],
    },
    wide: (FP16_6X32, "matmul_clamp_f16_f16_f16p32x1b_6x32_neon_mla", Fp16, crate::float::f16_f16_f16p::PACKING_1X32),
    narrow: (FP16_6X16, "matmul_clamp_f16_f16_f16p16x1biasf16_6x16x8_neon_mla", Fp16, crate::float::f16_f16_f16p::PACKING_1X16),
}
