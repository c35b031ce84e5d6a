//! BF16 tier of `f32_bf16p_bf16p`: hand-written `BFMMLA` (8x12) and `BFDOT` (1x36) kernels
//! (FEAT_BF16), bit-exact with the scalar tier (docs/formats.md, §Arithmetic: bf16 kernels).
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
//! * Short row blocks (`r < 8` rows, e.g. `m = 1` in decode) run the same `BFMMLA` sequence on
//!   only their `P = ceil(r / 2)` row pairs (the first `16 P` bytes of each LHS block), on more
//!   RHS tiles per step so the K loop keeps up to 24 accumulators: 2x48 (`P = 1`, 4 RHS
//!   tiles), 4x24 (`P = 2`), 6x12, 8x12; narrower variants (2x24, 2x12, 4x12) take the last
//!   RHS tiles. Every output is the same `BFMMLA` chain from its bias in every variant, so a
//!   row's result does not depend on `m`.
//!
//! Partial tiles (rows past `m`, columns past `n`) are computed whole from the full packed
//! tiles into a stack scratch tile, and the valid part is copied.
//!
//! llvm-mca (Neoverse V1) of the K loops: 8x12, 31 instructions and 6.1 cycles per block of 384
//! MACs, bound by the 24 `BFMMLA` on the 4 vector pipes; 1x36, 30 instructions and 6.5 cycles
//! per block of 144 MACs, bound by the RHS loads. 2x48: 39 instructions per block of 24
//! `BFMMLA`.
//!
//! Instructions per MAC (QEMU instruction count, n = k = 4096, whole call): m = 1, 0.205 (was
//! 0.650 with the whole 8-row tile; the BFDOT 1x36 kernel of KleidiAI runs 0.341); m = 2,
//! 0.102; m = 3, 0.116; m = 5, 0.109; m = 16 and 128, 0.0813 (f16 output: +0.0002).

use super::Descriptor;

/// This tier's kernels, best first.
#[cfg(target_arch = "aarch64")]
pub const KERNELS: &[&Descriptor] = &[&BF16_8X12, &BF16_1X36];

/// This tier's kernels: none on this architecture.
#[cfg(not(target_arch = "aarch64"))]
pub const KERNELS: &[&Descriptor] = &[];

#[cfg(target_arch = "aarch64")]
pub use aarch64::*;

/// Defines one `BFMMLA` tile function of a bf16 family: `2 P` rows (the first `P` row pairs of
/// each 64-byte LHS block) x `12 T` columns (`T` RHS tiles). `bias` (one template string) loads
/// the 12 biases of the RHS tile at `{b}` as f32 into v28-v30 and advances `{b}` to the first
/// depth block; `store` (one template string) writes one output row from the clamped f32
/// v26-v28 (row `2p`) then one from v29-v31 (row `2p + 1`) at `{d}`, advancing `{d}` by
/// `{stride}` bytes after each. `tiles` lists, per RHS tile, its pointer operand, its index in
/// `rhs` and, per row pair, the LHS register (v24-v27) and the 6 accumulators.
#[cfg(target_arch = "aarch64")]
macro_rules! mmla_tile {
    (
        $(#[$meta:meta])*
        fn $name:ident($out:ty);
        bias = $bias:expr;
        store = $store:expr;
        lhs = $lhs:expr;
        tiles = [$(
            ($b:ident, $i:tt, [$([$l:literal: $c0:literal, $c1:literal, $c2:literal,
                $c3:literal, $c4:literal, $c5:literal]),+ $(,)?])
        ),+ $(,)?] $(;)?
    ) => {
        $(#[$meta])*
        ///
        /// Computes the tile of the first row pairs of the packed LHS tile `lhs` (`blocks`
        /// depth blocks of 64 bytes, of which it reads the first 16 bytes per row pair) and the
        /// packed RHS tiles `T` at `rhs`, `rhs_tile` bytes apart (12 biases, then `blocks` blocks of
        /// 96 bytes each),
        /// clamps it to `[lo, hi]` (f32 bit patterns: `FMIN` against `hi`, then `FMAX` against
        /// `lo`) and writes its rows of `12 T` outputs at `dst`, `stride` bytes apart.
        ///
        /// # Safety
        ///
        /// The CPU has FEAT_BF16; `blocks >= 1`; `lhs` and the `T` RHS tiles are readable for
        /// a whole tile of `blocks` blocks each; `dst` is writable for `12 T` outputs at each of the
        /// `2 P` rows `dst + i * stride` bytes.
        #[target_feature(enable = "bf16")]
        #[inline(never)]
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $name(
            lhs: *const u8,
            rhs: *const u8,
            rhs_tile: usize,
            blocks: usize,
            dst: *mut $out,
            stride: usize,
            lo: u32,
            hi: u32,
        ) {
            // SAFETY: FEAT_BF16 is present (caller); the block reads the first row pairs of
            // `blocks` LHS blocks from `lhs`, the biases and `blocks` RHS blocks from each of
            // the `T` RHS tiles, which the caller made readable, and writes `2 P` rows of `12 T`
            // outputs at `dst`, `stride` bytes apart, which it made writable. Every vector
            // register is declared clobbered.
            unsafe {
                // The RHS tiles (only the first `T` are used, the others are not computed).
                let rhs = [
                    rhs,
                    rhs.wrapping_add(rhs_tile),
                    rhs.wrapping_add(2 * rhs_tile),
                    rhs.wrapping_add(3 * rhs_tile),
                ];
                core::arch::asm!(
                    $(
                        // Biases (f32) of RHS tile `i` into v28-v30, then every 2x2 block
                        // starts as [b(2c), b(2c+1), b(2c), b(2c+1)].
                        concat!("mov {b}, {", stringify!($b), "}"),
                        $bias,
                        concat!("mov {", stringify!($b), "}, {b}"),
                        $(
                            concat!("dup ", $c0, ".2d, v28.d[0]"),
                            concat!("dup ", $c1, ".2d, v28.d[1]"),
                            concat!("dup ", $c2, ".2d, v29.d[0]"),
                            concat!("dup ", $c3, ".2d, v29.d[1]"),
                            concat!("dup ", $c4, ".2d, v30.d[0]"),
                            concat!("dup ", $c5, ".2d, v30.d[1]"),
                        )+
                    )+
                    // K loop: one block of 4 depths per iteration.
                    "2:",
                    // Load: the LHS row pairs that matter; {a} advances by the whole block.
                    $lhs,
                    $(
                        // Load: the tile's RHS column pairs, two at a time; multiply: each
                        // column pair with every row pair.
                        concat!("ldp q28, q29, [{", stringify!($b), "}], #32"),
                        $(concat!("bfmmla ", $c0, ".4s, ", $l, ".8h, v28.8h"),)+
                        $(concat!("bfmmla ", $c1, ".4s, ", $l, ".8h, v29.8h"),)+
                        concat!("ldp q30, q31, [{", stringify!($b), "}], #32"),
                        $(concat!("bfmmla ", $c2, ".4s, ", $l, ".8h, v30.8h"),)+
                        $(concat!("bfmmla ", $c3, ".4s, ", $l, ".8h, v31.8h"),)+
                        concat!("ldp q28, q29, [{", stringify!($b), "}], #32"),
                        $(concat!("bfmmla ", $c4, ".4s, ", $l, ".8h, v28.8h"),)+
                        $(concat!("bfmmla ", $c5, ".4s, ", $l, ".8h, v29.8h"),)+
                    )+
                    "subs {q}, {q}, #1",
                    "b.ne 2b",
                    // Clamp: FMIN against the upper bound, then FMAX against the lower one.
                    "dup v24.4s, {hi:w}",
                    "dup v25.4s, {lo:w}",
                    $($(
                        concat!("fmin ", $c0, ".4s, ", $c0, ".4s, v24.4s"),
                        concat!("fmin ", $c1, ".4s, ", $c1, ".4s, v24.4s"),
                        concat!("fmin ", $c2, ".4s, ", $c2, ".4s, v24.4s"),
                        concat!("fmin ", $c3, ".4s, ", $c3, ".4s, v24.4s"),
                        concat!("fmin ", $c4, ".4s, ", $c4, ".4s, v24.4s"),
                        concat!("fmin ", $c5, ".4s, ", $c5, ".4s, v24.4s"),
                        concat!("fmax ", $c0, ".4s, ", $c0, ".4s, v25.4s"),
                        concat!("fmax ", $c1, ".4s, ", $c1, ".4s, v25.4s"),
                        concat!("fmax ", $c2, ".4s, ", $c2, ".4s, v25.4s"),
                        concat!("fmax ", $c3, ".4s, ", $c3, ".4s, v25.4s"),
                        concat!("fmax ", $c4, ".4s, ", $c4, ".4s, v25.4s"),
                        concat!("fmax ", $c5, ".4s, ", $c5, ".4s, v25.4s"),
                    )+)+
                    $(
                        // Unscramble and store tile `i`'s 12 columns of every row, row pair
                        // by row pair: row 2p takes the low halves of its 6 blocks (ZIP1
                        // .2D), row 2p + 1 the high halves (ZIP2 .2D); the next tile's
                        // columns start `{tb}` bytes on.
                        "mov {d}, {base}",
                        $(
                            concat!("zip1 v26.2d, ", $c0, ".2d, ", $c1, ".2d"),
                            concat!("zip1 v27.2d, ", $c2, ".2d, ", $c3, ".2d"),
                            concat!("zip1 v28.2d, ", $c4, ".2d, ", $c5, ".2d"),
                            concat!("zip2 v29.2d, ", $c0, ".2d, ", $c1, ".2d"),
                            concat!("zip2 v30.2d, ", $c2, ".2d, ", $c3, ".2d"),
                            concat!("zip2 v31.2d, ", $c4, ".2d, ", $c5, ".2d"),
                            $store,
                        )+
                        "add {base}, {base}, {tb}",
                    )+
                    a = inout(reg) lhs => _,
                    $($b = inout(reg) rhs[$i] => _,)+
                    b = out(reg) _,
                    q = inout(reg) blocks => _,
                    base = inout(reg) dst => _,
                    d = out(reg) _,
                    tb = in(reg) 12 * core::mem::size_of::<$out>(),
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

/// Defines every `BFMMLA` tile function of a bf16 family (`bias` and `store` as in
/// `mmla_tile!`): `mmla_8x12` (4 row pairs x 1 RHS tile), `mmla_6x12` (3 x 1), `mmla_4x24`
/// (2 x 2), `mmla_4x12` (2 x 1), `mmla_2x48` (1 x 4), `mmla_2x24` (1 x 2) and `mmla_2x12`
/// (1 x 1). Each keeps at most 24 accumulators, so the short row blocks still issue up to 24
/// `BFMMLA` per depth block.
#[cfg(target_arch = "aarch64")]
macro_rules! mmla_tiles {
    ($out:ty; bias = $bias:expr; store = $store:expr $(;)?) => {
        $crate::float::f32_bf16p_bf16p::bf16::mmla_tile! {
            /// The 8x12 tile: 4 row pairs, 1 RHS tile.
            fn mmla_8x12($out);
            bias = $bias;
            store = $store;
            lhs = concat!("ldp q24, q25, [{a}], #32\n", "ldp q26, q27, [{a}], #32");
            tiles = [(b0, 0, [
                ["v24": "v0", "v1", "v2", "v3", "v4", "v5"],
                ["v25": "v6", "v7", "v8", "v9", "v10", "v11"],
                ["v26": "v12", "v13", "v14", "v15", "v16", "v17"],
                ["v27": "v18", "v19", "v20", "v21", "v22", "v23"],
            ])];
        }
        $crate::float::f32_bf16p_bf16p::bf16::mmla_tile! {
            /// The 6x12 tile: 3 row pairs, 1 RHS tile.
            fn mmla_6x12($out);
            bias = $bias;
            store = $store;
            lhs = concat!("ldp q24, q25, [{a}]\n", "ldr q26, [{a}, #32]\n", "add {a}, {a}, #64");
            tiles = [(b0, 0, [
                ["v24": "v0", "v1", "v2", "v3", "v4", "v5"],
                ["v25": "v6", "v7", "v8", "v9", "v10", "v11"],
                ["v26": "v12", "v13", "v14", "v15", "v16", "v17"],
            ])];
        }
        $crate::float::f32_bf16p_bf16p::bf16::mmla_tile! {
            /// The 4x24 tile: 2 row pairs, 2 RHS tiles.
            fn mmla_4x24($out);
            bias = $bias;
            store = $store;
            lhs = "ldp q24, q25, [{a}], #64";
            tiles = [
                (b0, 0, [
                    ["v24": "v0", "v1", "v2", "v3", "v4", "v5"],
                    ["v25": "v6", "v7", "v8", "v9", "v10", "v11"],
                ]),
                (b1, 1, [
                    ["v24": "v12", "v13", "v14", "v15", "v16", "v17"],
                    ["v25": "v18", "v19", "v20", "v21", "v22", "v23"],
                ]),
            ];
        }
        $crate::float::f32_bf16p_bf16p::bf16::mmla_tile! {
            /// The 4x12 tile: 2 row pairs, 1 RHS tile.
            fn mmla_4x12($out);
            bias = $bias;
            store = $store;
            lhs = "ldp q24, q25, [{a}], #64";
            tiles = [(b0, 0, [
                ["v24": "v0", "v1", "v2", "v3", "v4", "v5"],
                ["v25": "v6", "v7", "v8", "v9", "v10", "v11"],
            ])];
        }
        $crate::float::f32_bf16p_bf16p::bf16::mmla_tile! {
            /// The 2x48 tile: 1 row pair, 4 RHS tiles.
            fn mmla_2x48($out);
            bias = $bias;
            store = $store;
            lhs = "ldr q24, [{a}], #64";
            tiles = [
                (b0, 0, [["v24": "v0", "v1", "v2", "v3", "v4", "v5"]]),
                (b1, 1, [["v24": "v6", "v7", "v8", "v9", "v10", "v11"]]),
                (b2, 2, [["v24": "v12", "v13", "v14", "v15", "v16", "v17"]]),
                (b3, 3, [["v24": "v18", "v19", "v20", "v21", "v22", "v23"]]),
            ];
        }
        $crate::float::f32_bf16p_bf16p::bf16::mmla_tile! {
            /// The 2x24 tile: 1 row pair, 2 RHS tiles.
            fn mmla_2x24($out);
            bias = $bias;
            store = $store;
            lhs = "ldr q24, [{a}], #64";
            tiles = [
                (b0, 0, [["v24": "v0", "v1", "v2", "v3", "v4", "v5"]]),
                (b1, 1, [["v24": "v6", "v7", "v8", "v9", "v10", "v11"]]),
            ];
        }
        $crate::float::f32_bf16p_bf16p::bf16::mmla_tile! {
            /// The 2x12 tile: 1 row pair, 1 RHS tile.
            fn mmla_2x12($out);
            bias = $bias;
            store = $store;
            lhs = "ldr q24, [{a}], #64";
            tiles = [(b0, 0, [["v24": "v0", "v1", "v2", "v3", "v4", "v5"]])];
        }
    };
}

/// Defines the raw entry of a `BFMMLA` kernel (8-row LHS tiles, 12-column RHS tiles) over the
/// tile functions of `mmla_tiles!` in scope, with outputs of type `$out`. A row block of 8 rows
/// runs the 8x12 tile; a shorter one of `r` rows runs only its `P = ceil(r / 2)` row pairs, on
/// up to 4 (`P = 1`), 2 (`P = 2`) or 1 (`P >= 3`) RHS tiles per step, fewer at the column end.
/// Every output is the same `BFMMLA` sequence over all depth blocks from its bias, whatever the
/// tile. Partial tiles go through a stack scratch tile.
#[cfg(target_arch = "aarch64")]
macro_rules! mmla_entry {
    ($(#[$meta:meta])* fn $name:ident($out:ty)) => {
        $(#[$meta])*
        ///
        /// # Safety
        ///
        /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)'s contract with `p` a
        /// `bf16p8x4` LHS and a `bf16p12x4` RHS packing, `s` its tile strides, and FEAT_BF16.
        pub(crate) unsafe fn $name(
            p: &crate::Packing,
            a: &crate::matmul::UncheckedArgs<$out>,
            s: &crate::matmul::TileStrides,
        ) {
            let t = crate::float::Tiles::new(p, s);
            type TileFn = unsafe fn(*const u8, *const u8, usize, usize, *mut $out, usize, u32, u32);
            let blocks = a.k.div_ceil(4);
            let (lo, hi) = (a.clamp_min.to_bits(), a.clamp_max.to_bits());
            let n_tiles = a.n.div_ceil(12);
            for rt in 0..a.m.div_ceil(8) {
                let rows = (a.m - rt * 8).min(8);
                let pairs = rows.div_ceil(2);
                let (widest, wide): (usize, TileFn) = match pairs {
                    1 => (4, mmla_2x48),
                    2 => (2, mmla_4x24),
                    3 => (1, mmla_6x12),
                    _ => (1, mmla_8x12),
                };
                let lhs = a.lhs.wrapping_add(rt * t.lhs_tile);
                let dst_row = a.dst.wrapping_byte_add(rt * 8 * a.dst_stride_row);
                let mut ct = 0;
                if rows == 2 * pairs {
                    // Whole steps of the widest variant, straight into the rectangle.
                    while 12 * (ct + widest) <= a.n {
                        // SAFETY: FEAT_BF16 (caller); LHS tile `rt < ceil(m / 8)` is a whole
                        // tile of `blocks` blocks, of which the variant reads the first `pairs`
                        // row pairs; it reads the RHS tiles `ct .. ct + widest <= n / 12`,
                        // whole tiles in the caller's buffer; the `rows` x `12 widest` outputs
                        // at `dst_row + 12 ct` are inside the rectangle.
                        unsafe {
                            wide(
                                lhs,
                                a.rhs_packed.wrapping_add(ct * t.rhs_tile),
                                t.rhs_tile,
                                blocks,
                                dst_row.wrapping_add(ct * 12),
                                a.dst_stride_row,
                                lo,
                                hi,
                            )
                        };
                        ct += widest;
                    }
                }
                // The rest (row or column tails): any variant, partial tiles through `tmp`.
                while ct < n_tiles {
                    // The widest variant (a power of two of RHS tiles) that fits the tiles left.
                    let tiles = 1usize << widest.min(n_tiles - ct).ilog2();
                    let tile: TileFn = match (pairs, tiles) {
                        (1, 4) => mmla_2x48,
                        (1, 2) => mmla_2x24,
                        (1, _) => mmla_2x12,
                        (2, 2) => mmla_4x24,
                        (2, _) => mmla_4x12,
                        (3, _) => mmla_6x12,
                        _ => mmla_8x12,
                    };
                    let cols = (a.n - ct * 12).min(12 * tiles);
                    let rhs = a.rhs_packed.wrapping_add(ct * t.rhs_tile);
                    let dst = dst_row.wrapping_add(ct * 12);
                    if rows == 2 * pairs && cols == 12 * tiles {
                        // SAFETY: FEAT_BF16 (caller); LHS tile `rt < ceil(m / 8)` is a whole
                        // tile of `blocks` blocks, of which the variant reads the first `pairs`
                        // row pairs; it reads the RHS tiles `ct .. ct + tiles <= ceil(n / 12)`,
                        // whole tiles in the caller's buffer; the `rows` x `cols` outputs at
                        // `dst` are inside the rectangle.
                        unsafe { tile(lhs, rhs, t.rhs_tile, blocks, dst, a.dst_stride_row, lo, hi) };
                    } else {
                        let mut tmp = [<$out as crate::element::Element>::from_f32(0.0); 8 * 12];
                        let width = 12 * tiles;
                        // SAFETY: as above for the inputs; `tmp` holds the `2 * pairs` rows of
                        // `width` outputs, `width * size` bytes apart (`2 pairs x width <= 96`
                        // for every variant).
                        unsafe {
                            tile(lhs, rhs, t.rhs_tile, blocks, tmp.as_mut_ptr(), width * core::mem::size_of::<$out>(), lo, hi)
                        };
                        for (r, src) in tmp.chunks_exact(width).take(rows).enumerate() {
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
                    ct += tiles;
                }
            }
        }
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use {mmla_entry, mmla_tile, mmla_tiles};

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::Descriptor;
    use crate::float::Tiles;
    use crate::float::f32_bf16p_bf16p::{PACKING_1X12, PACKING_8X12, kernel};
    use crate::matmul::{Packing, Tier, TileStrides, UncheckedArgs};

    /// `BFMMLA` kernel, 8 rows x 12 columns per step.
    pub static BF16_8X12: Descriptor = kernel(
        "matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_neon_mmla",
        Tier::Bf16,
        (8, 12),
        PACKING_8X12,
        mmla_8x12_unchecked,
    );

    /// `BFDOT` kernel, 1 row x 36 columns per step (any `m`: one row at a time).
    pub static BF16_1X36: Descriptor = kernel(
        "matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_neon_dot",
        Tier::Bf16,
        (1, 36),
        PACKING_1X12,
        dot_1x36_unchecked,
    );

    super::mmla_tiles! {
        f32;
        bias = concat!("ldp q28, q29, [{b}], #32\n", "ldr q30, [{b}], #16");
        store = concat!(
            "st1 {{v26.4s, v27.4s, v28.4s}}, [{d}], {stride}\n",
            "st1 {{v29.4s, v30.4s, v31.4s}}, [{d}], {stride}",
        );
    }

    super::mmla_entry! {
        /// Raw entry of [`BF16_8X12`].
        fn mmla_8x12_unchecked(f32)
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
    /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)'s contract with `p` a
    /// `bf16p1x4` LHS and a `bf16p12x4` RHS packing with f32 biases, `s` its tile strides, and
    /// FEAT_BF16.
    unsafe fn dot_1x36_unchecked(p: &Packing, a: &UncheckedArgs<f32>, s: &TileStrides) {
        let t = Tiles::new(p, s);
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
