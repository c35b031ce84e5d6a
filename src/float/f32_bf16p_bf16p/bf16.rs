//! BF16 tier of `f32_bf16p_bf16p`: hand-written `BFMMLA` (8x12) and `BFDOT` (1x36) kernels
//! (FEAT_BF16), bit-exact with the scalar tier (float.md §6).
//!
//! * `BFMMLA Vd.4S, Vn.8H, Vm.8H` adds a 2x4 by 4x2 bf16 product to a 2x2 f32 block
//!   `[r0c0, r0c1, r1c0, r1c1]`, depths (0, 1) then (2, 3). A depth block of the packed LHS
//!   (`bf16p8x4`, 64 bytes) holds each row's 4 depths in turn, so one q register is a row pair;
//!   a block of the packed RHS (`bf16p12x4`, 96 bytes) holds each column's 4 depths in turn, so
//!   one q register is a column pair. The 8x12 tile keeps 4 row pairs x 6 column pairs = 24
//!   accumulators (v0-v23, `v[6p + c]` for rows `2p, 2p+1` and columns `2c, 2c+1`); per block it
//!   loads 4 LHS and 6 RHS registers once and issues 24 `BFMMLA` (384 MACs). The epilogue
//!   clamps the blocks and unscrambles them with `ZIP1`/`ZIP2 .2D` (row `2p` is the low half of
//!   each block, row `2p + 1` the high half).
//! * `BFDOT Vd.4S, Vn.8H, Vm.8H`: lane `l` adds the dot product of elements `2l, 2l + 1` of both
//!   sources. With the LHS block replicated to both halves (`LD1R .2D`: `[a01, a23, a01, a23]`)
//!   against a column pair of the RHS (`[c:01, c:23, c+1:01, c+1:23]`), the lanes are the even
//!   and odd accumulators of two columns, `[even c, odd c, even c+1, odd c+1]`: the biases start
//!   the even lanes, +0 the odd ones, and one `FADDP` of two such registers gives 4 finished
//!   columns (IEEE f32 addition). The 1x36 tile keeps 18 accumulators (3 RHS tiles of 12
//!   columns); the 1x12 and 1x24 tiles serve the column tail.
//!
//! Partial tiles (rows past `m`, columns past `n`) are computed whole from the full packed
//! tiles into a stack scratch tile, and the valid part is copied.
//!
//! llvm-mca (Neoverse V1) of the K loops: 8x12, 31 instructions and 6.1 cycles per block of 384
//! MACs, bound by the 24 `BFMMLA` on the 4 vector pipes; 1x36, 30 instructions and 6.5 cycles
//! per block of 144 MACs, bound by the RHS loads.

use super::Kernel;

/// This tier's kernels, best first.
#[cfg(target_arch = "aarch64")]
pub const KERNELS: &[&Kernel] = &[&BF16_8X12, &BF16_1X36];

/// This tier's kernels: none on this architecture.
#[cfg(not(target_arch = "aarch64"))]
pub const KERNELS: &[&Kernel] = &[];

#[cfg(target_arch = "aarch64")]
pub use aarch64::*;

/// Defines the `BFMMLA` 8x12 tile function of a bf16 family: `bias` loads the 12 biases of the
/// RHS tile at `{b}` as f32 into v28-v30 and advances `{b}` to the first depth block; `store`
/// writes one output row from the clamped f32 v26-v28 (row `2p`) then one from v29-v31 (row
/// `2p + 1`) at `{d}`, advancing `{d}` by `{stride}` bytes after each.
#[cfg(target_arch = "aarch64")]
macro_rules! mmla_8x12_tile {
    (
        $(#[$meta:meta])*
        fn $name:ident($out:ty);
        bias = [$($bias:literal),+ $(,)?];
        store = [$($store:literal),+ $(,)?] $(;)?
    ) => {
        $(#[$meta])*
        ///
        /// Computes the 8x12 tile of the packed LHS tile `lhs` (`blocks` depth blocks of 64 bytes)
        /// and the packed RHS tile `rhs` (12 biases, then `blocks` blocks of 96 bytes), clamps it
        /// to `[lo, hi]` (f32 bit patterns: `FMIN` against `hi`, then `FMAX` against `lo`) and
        /// writes its 8 rows of 12 outputs at `dst`, `stride` bytes apart.
        ///
        /// # Safety
        ///
        /// The CPU has FEAT_BF16; `blocks >= 1`; `lhs` and `rhs` are readable for a whole tile
        /// of `blocks` blocks each; `dst` is writable for 12 outputs at each of the 8 rows
        /// `dst + i * stride` bytes.
        #[target_feature(enable = "bf16")]
        #[inline(never)]
        pub(crate) unsafe fn $name(
            lhs: *const u8,
            rhs: *const u8,
            blocks: usize,
            dst: *mut $out,
            stride: usize,
            lo: u32,
            hi: u32,
        ) {
            // SAFETY: FEAT_BF16 is present (caller); the block reads `blocks` LHS blocks from
            // `lhs`, the biases and `blocks` RHS blocks from `rhs`, which the caller made
            // readable, and writes 8 rows of 12 outputs at `dst`, `stride` bytes apart, which it
            // made writable. Every vector register is declared clobbered.
            unsafe {
                core::arch::asm!(
                    // Biases (f32) into v28-v30, then every 2x2 block starts as
                    // [b(2c), b(2c+1), b(2c), b(2c+1)].
                    $($bias,)+
                    "dup v0.2d, v28.d[0]",
                    "dup v1.2d, v28.d[1]",
                    "dup v2.2d, v29.d[0]",
                    "dup v3.2d, v29.d[1]",
                    "dup v4.2d, v30.d[0]",
                    "dup v5.2d, v30.d[1]",
                    "mov v6.16b, v0.16b", "mov v7.16b, v1.16b", "mov v8.16b, v2.16b",
                    "mov v9.16b, v3.16b", "mov v10.16b, v4.16b", "mov v11.16b, v5.16b",
                    "mov v12.16b, v0.16b", "mov v13.16b, v1.16b", "mov v14.16b, v2.16b",
                    "mov v15.16b, v3.16b", "mov v16.16b, v4.16b", "mov v17.16b, v5.16b",
                    "mov v18.16b, v0.16b", "mov v19.16b, v1.16b", "mov v20.16b, v2.16b",
                    "mov v21.16b, v3.16b", "mov v22.16b, v4.16b", "mov v23.16b, v5.16b",
                    // K loop: one block of 4 depths per iteration.
                    "2:",
                    // Load: LHS row pairs 0-1, 2-3, 4-5, 6-7; RHS column pairs 0-1, 2-3.
                    "ldp q24, q25, [{a}], #32",
                    "ldp q26, q27, [{a}], #32",
                    "ldp q28, q29, [{b}], #32",
                    // Multiply: column pairs 0 and 1, every row pair.
                    "bfmmla v0.4s, v24.8h, v28.8h",
                    "bfmmla v6.4s, v25.8h, v28.8h",
                    "bfmmla v12.4s, v26.8h, v28.8h",
                    "bfmmla v18.4s, v27.8h, v28.8h",
                    "bfmmla v1.4s, v24.8h, v29.8h",
                    "bfmmla v7.4s, v25.8h, v29.8h",
                    "bfmmla v13.4s, v26.8h, v29.8h",
                    "bfmmla v19.4s, v27.8h, v29.8h",
                    // Load: RHS column pairs 4-5, 6-7; multiply: column pairs 2 and 3.
                    "ldp q30, q31, [{b}], #32",
                    "bfmmla v2.4s, v24.8h, v30.8h",
                    "bfmmla v8.4s, v25.8h, v30.8h",
                    "bfmmla v14.4s, v26.8h, v30.8h",
                    "bfmmla v20.4s, v27.8h, v30.8h",
                    "bfmmla v3.4s, v24.8h, v31.8h",
                    "bfmmla v9.4s, v25.8h, v31.8h",
                    "bfmmla v15.4s, v26.8h, v31.8h",
                    "bfmmla v21.4s, v27.8h, v31.8h",
                    // Load: RHS column pairs 8-9, 10-11; multiply: column pairs 4 and 5.
                    "ldp q28, q29, [{b}], #32",
                    "bfmmla v4.4s, v24.8h, v28.8h",
                    "bfmmla v10.4s, v25.8h, v28.8h",
                    "bfmmla v16.4s, v26.8h, v28.8h",
                    "bfmmla v22.4s, v27.8h, v28.8h",
                    "bfmmla v5.4s, v24.8h, v29.8h",
                    "bfmmla v11.4s, v25.8h, v29.8h",
                    "bfmmla v17.4s, v26.8h, v29.8h",
                    "bfmmla v23.4s, v27.8h, v29.8h",
                    "subs {q}, {q}, #1",
                    "b.ne 2b",
                    // Clamp: FMIN against the upper bound, then FMAX against the lower one.
                    "dup v24.4s, {hi:w}",
                    "dup v25.4s, {lo:w}",
                    "fmin v0.4s, v0.4s, v24.4s", "fmin v1.4s, v1.4s, v24.4s",
                    "fmin v2.4s, v2.4s, v24.4s", "fmin v3.4s, v3.4s, v24.4s",
                    "fmin v4.4s, v4.4s, v24.4s", "fmin v5.4s, v5.4s, v24.4s",
                    "fmin v6.4s, v6.4s, v24.4s", "fmin v7.4s, v7.4s, v24.4s",
                    "fmin v8.4s, v8.4s, v24.4s", "fmin v9.4s, v9.4s, v24.4s",
                    "fmin v10.4s, v10.4s, v24.4s", "fmin v11.4s, v11.4s, v24.4s",
                    "fmin v12.4s, v12.4s, v24.4s", "fmin v13.4s, v13.4s, v24.4s",
                    "fmin v14.4s, v14.4s, v24.4s", "fmin v15.4s, v15.4s, v24.4s",
                    "fmin v16.4s, v16.4s, v24.4s", "fmin v17.4s, v17.4s, v24.4s",
                    "fmin v18.4s, v18.4s, v24.4s", "fmin v19.4s, v19.4s, v24.4s",
                    "fmin v20.4s, v20.4s, v24.4s", "fmin v21.4s, v21.4s, v24.4s",
                    "fmin v22.4s, v22.4s, v24.4s", "fmin v23.4s, v23.4s, v24.4s",
                    "fmax v0.4s, v0.4s, v25.4s", "fmax v1.4s, v1.4s, v25.4s",
                    "fmax v2.4s, v2.4s, v25.4s", "fmax v3.4s, v3.4s, v25.4s",
                    "fmax v4.4s, v4.4s, v25.4s", "fmax v5.4s, v5.4s, v25.4s",
                    "fmax v6.4s, v6.4s, v25.4s", "fmax v7.4s, v7.4s, v25.4s",
                    "fmax v8.4s, v8.4s, v25.4s", "fmax v9.4s, v9.4s, v25.4s",
                    "fmax v10.4s, v10.4s, v25.4s", "fmax v11.4s, v11.4s, v25.4s",
                    "fmax v12.4s, v12.4s, v25.4s", "fmax v13.4s, v13.4s, v25.4s",
                    "fmax v14.4s, v14.4s, v25.4s", "fmax v15.4s, v15.4s, v25.4s",
                    "fmax v16.4s, v16.4s, v25.4s", "fmax v17.4s, v17.4s, v25.4s",
                    "fmax v18.4s, v18.4s, v25.4s", "fmax v19.4s, v19.4s, v25.4s",
                    "fmax v20.4s, v20.4s, v25.4s", "fmax v21.4s, v21.4s, v25.4s",
                    "fmax v22.4s, v22.4s, v25.4s", "fmax v23.4s, v23.4s, v25.4s",
                    // Unscramble and store, row pair by row pair: row 2p takes the low halves
                    // of its 6 blocks (ZIP1 .2D), row 2p + 1 the high halves (ZIP2 .2D).
                    "zip1 v26.2d, v0.2d, v1.2d", "zip1 v27.2d, v2.2d, v3.2d", "zip1 v28.2d, v4.2d, v5.2d",
                    "zip2 v29.2d, v0.2d, v1.2d", "zip2 v30.2d, v2.2d, v3.2d", "zip2 v31.2d, v4.2d, v5.2d",
                    $($store,)+
                    "zip1 v26.2d, v6.2d, v7.2d", "zip1 v27.2d, v8.2d, v9.2d", "zip1 v28.2d, v10.2d, v11.2d",
                    "zip2 v29.2d, v6.2d, v7.2d", "zip2 v30.2d, v8.2d, v9.2d", "zip2 v31.2d, v10.2d, v11.2d",
                    $($store,)+
                    "zip1 v26.2d, v12.2d, v13.2d", "zip1 v27.2d, v14.2d, v15.2d", "zip1 v28.2d, v16.2d, v17.2d",
                    "zip2 v29.2d, v12.2d, v13.2d", "zip2 v30.2d, v14.2d, v15.2d", "zip2 v31.2d, v16.2d, v17.2d",
                    $($store,)+
                    "zip1 v26.2d, v18.2d, v19.2d", "zip1 v27.2d, v20.2d, v21.2d", "zip1 v28.2d, v22.2d, v23.2d",
                    "zip2 v29.2d, v18.2d, v19.2d", "zip2 v30.2d, v20.2d, v21.2d", "zip2 v31.2d, v22.2d, v23.2d",
                    $($store,)+
                    a = inout(reg) lhs => _,
                    b = inout(reg) rhs => _,
                    q = inout(reg) blocks => _,
                    d = inout(reg) dst => _,
                    stride = in(reg) stride,
                    lo = in(reg) lo,
                    hi = in(reg) hi,
                    out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                    out("v4") _, out("v5") _, out("v6") _, out("v7") _,
                    out("v8") _, out("v9") _, out("v10") _, out("v11") _,
                    out("v12") _, out("v13") _, out("v14") _, out("v15") _,
                    out("v16") _, out("v17") _, out("v18") _, out("v19") _,
                    out("v20") _, out("v21") _, out("v22") _, out("v23") _,
                    out("v24") _, out("v25") _, out("v26") _, out("v27") _,
                    out("v28") _, out("v29") _, out("v30") _, out("v31") _,
                    options(nostack),
                )
            }
        }
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use mmla_8x12_tile;

/// Defines the raw entry of an 8x12 `BFMMLA` kernel over its tile function `$tile` with outputs
/// of type `$out`: every (8-row, 12-column) tile of the rectangle, partial ones through a stack
/// scratch tile.
#[cfg(target_arch = "aarch64")]
macro_rules! mmla_8x12_entry {
    ($(#[$meta:meta])* fn $name:ident($out:ty) => $tile:path) => {
        $(#[$meta])*
        ///
        /// # Safety
        ///
        /// [`FloatKernel::run_unchecked`](crate::float::FloatKernel::run_unchecked)'s contract
        /// with `t` the tiles of a `bf16p8x4` LHS and a `bf16p12x4` RHS, and FEAT_BF16.
        pub(crate) unsafe fn $name(t: &crate::float::Tiles, a: &crate::float::FloatArgs<u8, $out>) {
            let blocks = a.k.div_ceil(4);
            let (lo, hi) = (a.clamp_min.to_bits(), a.clamp_max.to_bits());
            for rt in 0..a.m.div_ceil(8) {
                let rows = (a.m - rt * 8).min(8);
                let lhs = a.lhs.wrapping_add(rt * t.lhs_tile);
                let dst_row = a.dst.wrapping_byte_add(rt * 8 * a.dst_stride_row);
                for ct in 0..a.n.div_ceil(12) {
                    let cols = (a.n - ct * 12).min(12);
                    let rhs = a.rhs_packed.wrapping_add(ct * t.rhs_tile);
                    let dst = dst_row.wrapping_add(ct * 12);
                    if rows == 8 && cols == 12 {
                        // SAFETY: FEAT_BF16 (caller); LHS tile `rt < ceil(m / 8)` and RHS tile
                        // `ct < ceil(n / 12)` are whole tiles of `blocks` blocks in the
                        // caller's buffers; the 8 x 12 outputs at `dst` are inside the
                        // rectangle.
                        unsafe { $tile(lhs, rhs, blocks, dst, a.dst_stride_row, lo, hi) };
                    } else {
                        let mut tmp = [<$out as crate::element::Element>::from_f32(0.0); 8 * 12];
                        // SAFETY: as above for the inputs; `tmp` holds 8 rows of 12 outputs,
                        // `12 * size` bytes apart.
                        unsafe {
                            $tile(lhs, rhs, blocks, tmp.as_mut_ptr(), 12 * core::mem::size_of::<$out>(), lo, hi)
                        };
                        for (r, src) in tmp.chunks_exact(12).take(rows).enumerate() {
                            // SAFETY: row `8 rt + r < m`, columns `12 ct .. 12 ct + cols <= n`:
                            // inside the rectangle the caller made writable, which does not
                            // overlap `tmp`.
                            unsafe {
                                core::ptr::copy_nonoverlapping(
                                    src.as_ptr(),
                                    dst.byte_add(r * a.dst_stride_row),
                                    cols,
                                )
                            };
                        }
                    }
                }
            }
        }
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use mmla_8x12_entry;

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::Kernel;
    use crate::float::{FloatArgs, Tiles};
    use crate::lhs::bf16p::{BF16P1X4, BF16P8X4};
    use crate::matmul::Tier;
    use crate::rhs::bf16p12::BF16P12_B32;

    /// `BFMMLA` kernel, 8 rows x 12 columns per step.
    pub static BF16_8X12: Kernel = Kernel::new(
        "matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla",
        Tier::Bf16,
        (8, 12),
        Some(BF16P8X4),
        BF16P12_B32,
        mmla_8x12_unchecked,
    );

    /// `BFDOT` kernel, 1 row x 36 columns per step (any `m`: one row at a time).
    pub static BF16_1X36: Kernel = Kernel::new(
        "matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot",
        Tier::Bf16,
        (1, 36),
        Some(BF16P1X4),
        BF16P12_B32,
        dot_1x36_unchecked,
    );

    super::mmla_8x12_tile! {
        /// The f32 `BFMMLA` tile: f32 biases, f32 outputs.
        fn mmla_8x12_tile_f32(f32);
        bias = [
            "ldp q28, q29, [{b}], #32",
            "ldr q30, [{b}], #16",
        ];
        store = [
            "st1 {{v26.4s, v27.4s, v28.4s}}, [{d}], {stride}",
            "st1 {{v29.4s, v30.4s, v31.4s}}, [{d}], {stride}",
        ];
    }

    super::mmla_8x12_entry! {
        /// Raw entry of [`BF16_8X12`].
        fn mmla_8x12_unchecked(f32) => mmla_8x12_tile_f32
    }

    /// Defines a `BFDOT` tile function of 1 row x `12 T` columns: `tiles` lists, per RHS tile,
    /// its pointer operand, its index in `rhs` and its 6 accumulators.
    macro_rules! dot_tile {
        (
            $(#[$meta:meta])*
            fn $name:ident;
            $(($b:ident, $i:tt, [$a0:tt, $a1:tt, $a2:tt, $a3:tt, $a4:tt, $a5:tt])),+ $(,)?
        ) => {
            $(#[$meta])*
            ///
            /// Computes one row (the packed `bf16p1x4` row `lhs`, `blocks` blocks of 8 bytes)
            /// against the packed RHS tiles `rhs[..T]` (12 biases, then `blocks` blocks of 96
            /// bytes each), clamps it to `[lo, hi]` (f32 bit patterns) and writes `12 T`
            /// outputs at `dst`.
            ///
            /// # Safety
            ///
            /// The CPU has FEAT_BF16; `blocks >= 1`; `lhs` and `rhs[..T]` are readable for a
            /// whole row or tile of `blocks` blocks; `dst` is writable for `12 T` f32.
            #[target_feature(enable = "bf16")]
            #[inline(never)]
            unsafe fn $name(lhs: *const u8, rhs: [*const u8; 3], blocks: usize, dst: *mut f32, lo: u32, hi: u32) {
                // SAFETY: FEAT_BF16 (caller); the block reads `blocks` 8-byte blocks from `lhs`
                // and one RHS tile of `blocks` blocks from each of `rhs[..T]`, and writes
                // `12 T` f32 at `dst`, all made valid by the caller. Every register written is
                // declared.
                unsafe {
                    core::arch::asm!(
                        // Biases: the even lanes start at the bias, the odd ones at +0:
                        // [b(2c), 0, b(2c+1), 0].
                        "movi v31.4s, #0",
                        $(
                            concat!("ldp q24, q25, [{", stringify!($b), "}], #32"),
                            concat!("ldr q26, [{", stringify!($b), "}], #16"),
                            concat!("zip1 ", $a0, ".4s, v24.4s, v31.4s"),
                            concat!("zip2 ", $a1, ".4s, v24.4s, v31.4s"),
                            concat!("zip1 ", $a2, ".4s, v25.4s, v31.4s"),
                            concat!("zip2 ", $a3, ".4s, v25.4s, v31.4s"),
                            concat!("zip1 ", $a4, ".4s, v26.4s, v31.4s"),
                            concat!("zip2 ", $a5, ".4s, v26.4s, v31.4s"),
                        )+
                        // K loop: one block of 4 depths per iteration.
                        "2:",
                        // Load: the LHS block in both halves, [a01, a23, a01, a23].
                        "ld1r {{v31.2d}}, [{a}], #8",
                        $(
                            // Load: the tile's 6 column pairs; multiply: even and odd lanes.
                            concat!("ldp q24, q25, [{", stringify!($b), "}], #32"),
                            concat!("ldp q26, q27, [{", stringify!($b), "}], #32"),
                            concat!("ldp q28, q29, [{", stringify!($b), "}], #32"),
                            concat!("bfdot ", $a0, ".4s, v24.8h, v31.8h"),
                            concat!("bfdot ", $a1, ".4s, v25.8h, v31.8h"),
                            concat!("bfdot ", $a2, ".4s, v26.8h, v31.8h"),
                            concat!("bfdot ", $a3, ".4s, v27.8h, v31.8h"),
                            concat!("bfdot ", $a4, ".4s, v28.8h, v31.8h"),
                            concat!("bfdot ", $a5, ".4s, v29.8h, v31.8h"),
                        )+
                        "subs {q}, {q}, #1",
                        "b.ne 2b",
                        // Epilogue: even + odd (FADDP, IEEE f32), clamp (FMIN against the upper
                        // bound, FMAX against the lower one), store 12 columns per tile.
                        "dup v30.4s, {hi:w}",
                        "dup v31.4s, {lo:w}",
                        $(
                            concat!("faddp v24.4s, ", $a0, ".4s, ", $a1, ".4s"),
                            concat!("faddp v25.4s, ", $a2, ".4s, ", $a3, ".4s"),
                            concat!("faddp v26.4s, ", $a4, ".4s, ", $a5, ".4s"),
                            "fmin v24.4s, v24.4s, v30.4s",
                            "fmin v25.4s, v25.4s, v30.4s",
                            "fmin v26.4s, v26.4s, v30.4s",
                            "fmax v24.4s, v24.4s, v31.4s",
                            "fmax v25.4s, v25.4s, v31.4s",
                            "fmax v26.4s, v26.4s, v31.4s",
                            "st1 {{v24.4s, v25.4s, v26.4s}}, [{d}], #48",
                        )+
                        a = inout(reg) lhs => _,
                        $($b = inout(reg) rhs[$i] => _,)+
                        q = inout(reg) blocks => _,
                        d = inout(reg) dst => _,
                        lo = in(reg) lo,
                        hi = in(reg) hi,
                        $(out($a0) _, out($a1) _, out($a2) _, out($a3) _, out($a4) _, out($a5) _,)+
                        out("v24") _, out("v25") _, out("v26") _, out("v27") _,
                        out("v28") _, out("v29") _, out("v30") _, out("v31") _,
                        options(nostack),
                    )
                }
            }
        };
    }

    dot_tile! {
        /// The `BFDOT` tile of 1 x 36 (three RHS tiles).
        fn dot_1x36_tile;
        (b0, 0, ["v0", "v1", "v2", "v3", "v4", "v5"]),
        (b1, 1, ["v6", "v7", "v8", "v9", "v10", "v11"]),
        (b2, 2, ["v12", "v13", "v14", "v15", "v16", "v17"]),
    }

    dot_tile! {
        /// The `BFDOT` tile of 1 x 24 (two RHS tiles).
        fn dot_1x24_tile;
        (b0, 0, ["v0", "v1", "v2", "v3", "v4", "v5"]),
        (b1, 1, ["v6", "v7", "v8", "v9", "v10", "v11"]),
    }

    dot_tile! {
        /// The `BFDOT` tile of 1 x 12 (one RHS tile).
        fn dot_1x12_tile;
        (b0, 0, ["v0", "v1", "v2", "v3", "v4", "v5"]),
    }

    /// Raw entry of [`BF16_1X36`]: every row (packed row `i` at `lhs + i * t.lhs_tile`), 36
    /// columns (3 RHS tiles) per step, the last step on the 1, 2 or 3 tiles that remain;
    /// partial tiles through a stack scratch row.
    ///
    /// # Safety
    ///
    /// [`FloatKernel::run_unchecked`](crate::float::FloatKernel::run_unchecked)'s contract
    /// with `t` the tiles of a `bf16p1x4` LHS and a `bf16p12x4` RHS with f32 biases, and
    /// FEAT_BF16.
    unsafe fn dot_1x36_unchecked(t: &Tiles, a: &FloatArgs<u8, f32>) {
        let blocks = a.k.div_ceil(4);
        let (lo, hi) = (a.clamp_min.to_bits(), a.clamp_max.to_bits());
        for r in 0..a.m {
            let lhs = a.lhs.wrapping_add(r * t.lhs_tile);
            let dst_row = a.dst.wrapping_byte_add(r * a.dst_stride_row);
            for c0 in (0..a.n).step_by(36) {
                let cols = (a.n - c0).min(36);
                let tiles = cols.div_ceil(12);
                let b0 = a.rhs_packed.wrapping_add(c0 / 12 * t.rhs_tile);
                let rhs = [b0, b0.wrapping_add(t.rhs_tile), b0.wrapping_add(2 * t.rhs_tile)];
                let tile = match tiles {
                    3 => dot_1x36_tile,
                    2 => dot_1x24_tile,
                    _ => dot_1x12_tile,
                };
                let dst = dst_row.wrapping_add(c0);
                if cols == 12 * tiles {
                    // SAFETY: FEAT_BF16 (caller); row `r < m` is a whole packed row of
                    // `blocks` blocks; the `tiles` RHS tiles from `c0 / 12` are below
                    // `ceil(n / 12)` (only those are read); the `cols` outputs at `dst` are
                    // inside the rectangle.
                    unsafe { tile(lhs, rhs, blocks, dst, lo, hi) };
                } else {
                    let mut tmp = [0f32; 36];
                    // SAFETY: as above for the inputs; `tmp` holds `12 * tiles <= 36` f32.
                    unsafe { tile(lhs, rhs, blocks, tmp.as_mut_ptr(), lo, hi) };
                    // SAFETY: columns `c0 .. c0 + cols <= n` of row `r < m`: inside the
                    // rectangle, which does not overlap `tmp`.
                    unsafe { core::ptr::copy_nonoverlapping(tmp.as_ptr(), dst, cols) };
                }
            }
        }
    }
}
