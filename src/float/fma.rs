//! What the `asm!` tiers of the two FMA families (`f32_f32_f32p` on NEON, `f16_f16_f16p` on
//! FEAT_FP16) share: one macro that writes a tier's tile kernels and catalogue entries, and the
//! Rust driver that walks the output in tiles (docs/formats.md, §Arithmetic: FMA kernels).
//!
//! A tile kernel computes `R = 1..=6` rows x `G` RHS tiles of 4 vector registers each (the
//! wide format: 16 f32 or 32 f16 columns) or 2 (the narrow one: 8 f32 or 16 f16), `R * G * W <=
//! 24` accumulator registers. Registers:
//!
//! * `v0..v(R-1)`: `L` depths of LHS row `r` (`L` = 4 f32 or 8 f16 lanes of one `LDR q`);
//! * `v6, v7`: 8 (f32) or 16 (f16) columns of one RHS depth (one `LDP q`), loaded once per
//!   depth and register pair and used by every row;
//! * `v8..v31`: the accumulators, row after row, each row's `G * W` registers in column order.
//!
//! Per output the arithmetic is the documented chain: the accumulator starts at the bias, takes one
//! `FMLA` (by element) per depth in increasing order, then `FMIN` with the upper bound and
//! `FMAX` with the lower one. The main loop takes `L` depths per iteration, the remainder loop
//! one, so every tile, tail and `k` gives the scalar tier's bits.
//!
//! Every row count has its own kernels, so no work is spent on rows that do not exist (m = 1
//! runs one row). An accumulator takes `L` dependent `FMLA`s per iteration, so fewer than 16
//! accumulators leave the FMA pipes waiting on latency: short tiles (`R <= 3`; `R <= 6` for the
//! narrow format) also come in a variant over `G = 2..=8` consecutive RHS tiles, which the
//! driver runs while that many whole RHS tiles remain. A last RHS tile narrower than `nr`
//! columns (`n % nr != 0`) is stored into a stack scratch tile and its valid columns copied out.

/// Most rows of a tile (the catalogue's `m_step`).
#[cfg(target_arch = "aarch64")]
pub(crate) const MR: usize = 6;

/// Most RHS tiles of one tile kernel.
#[cfg(target_arch = "aarch64")]
pub(crate) const MAX_G: usize = 8;

/// The arguments of one tile kernel call (the `asm!` blocks read them by field).
#[cfg(target_arch = "aarch64")]
pub(crate) struct FmaTile {
    /// LHS row `r` of the tile (entries past the tile's rows repeat its last row, unread).
    pub(crate) lhs: [*const u8; MR],
    /// The packed RHS tiles, consecutive (entries past the kernel's `G` unread): each its `nr`
    /// biases, then its values, depth after depth.
    pub(crate) rhs: [*const u8; MAX_G],
    /// Main loop iterations: `k / L`.
    pub(crate) groups: usize,
    /// Remainder depths: `k % L`.
    pub(crate) rest: usize,
    /// Output element (0, 0) of the tile.
    pub(crate) out: *mut u8,
    /// Bytes between output rows.
    pub(crate) out_stride: usize,
    /// Clamp bounds, f32 bits (the f16 kernels round them to f16).
    pub(crate) lo: u32,
    pub(crate) hi: u32,
}

/// A tile kernel: the whole K loop and the epilogue of one `R x G * nr` tile.
///
/// Safety: the CPU has the tier's feature; `lhs[..R]` are readable for `k` elements, `rhs[..G]`
/// for one packed tile of depth `k` each, and `out` writable for `R` rows of `G * nr` elements.
#[cfg(target_arch = "aarch64")]
pub(crate) type FmaTileFn = unsafe fn(&FmaTile);

/// The tile kernels of one RHS format: `single[R - 1]` computes `R` rows of one RHS tile,
/// `multi[R - 1] = (kernel, G)` `R` rows of `G` RHS tiles (`G = 1`: the single kernel again).
#[cfg(target_arch = "aarch64")]
pub(crate) struct FmaKernels {
    pub(crate) single: [FmaTileFn; MR],
    pub(crate) multi: [(FmaTileFn, usize); MR],
}

/// Walks the `m x n` output in blocks of up to `MR` rows and, in a block, its RHS tiles: `G`
/// whole tiles per call while there are, one at a time after. `lanes` is `L`, the depths per
/// main-loop iteration.
///
/// # Safety
///
/// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked)'s contract, for a kernel whose
/// formats have `p.nr` columns per tile of `s.rhs` bytes, with `nr` elements of `T` at most 64
/// bytes, and `kernels` the tile kernels of that width.
#[cfg(target_arch = "aarch64")]
pub(crate) unsafe fn drive<T: crate::element::Element>(
    p: &crate::Packing,
    a: &crate::matmul::UncheckedArgs<T, crate::matmul::LhsStride>,
    s: &crate::matmul::TileStrides,
    lanes: usize,
    kernels: &FmaKernels,
) {
    let t = crate::float::Tiles::new(p, s);
    /// Bytes of one scratch row.
    const ROW: usize = 64;
    let (m, n, nr) = (a.m, a.n, t.nr);
    let width = nr * T::SIZE;
    debug_assert!(width <= ROW);
    let mut scratch = [0u8; MR * ROW];
    let (lhs, lhs_stride) = (a.lhs, a.params.0 * T::SIZE);
    let dst = a.dst.cast::<u8>();
    let mut tile = FmaTile {
        lhs: [lhs; MR],
        rhs: [a.rhs_packed; MAX_G],
        groups: a.k / lanes,
        rest: a.k % lanes,
        out: dst,
        out_stride: a.dst_stride_row,
        lo: a.clamp_min.to_bits(),
        hi: a.clamp_max.to_bits(),
    };
    let whole = n / nr;
    for r0 in (0..m).step_by(MR) {
        let rows = MR.min(m - r0);
        for (i, p) in tile.lhs.iter_mut().enumerate() {
            // SAFETY: row `r0 + min(i, rows - 1) < m`: an LHS row the caller made readable (a
            // kernel of `rows` rows reads only the first `rows` entries).
            *p = unsafe { lhs.add((r0 + i.min(rows - 1)) * lhs_stride) };
        }
        let (multi, g) = kernels.multi[rows - 1];
        let mut c = 0; // RHS tile index
        while c < n.div_ceil(nr) {
            let (kernel, count) = if c + g <= whole { (multi, g) } else { (kernels.single[rows - 1], 1) };
            for (i, p) in tile.rhs.iter_mut().take(count).enumerate() {
                // SAFETY: tile `c + i < ceil(n / nr)` of the RHS the caller made readable.
                *p = unsafe { a.rhs_packed.add((c + i) * t.rhs_tile) };
            }
            let cols = (count * nr).min(n - c * nr);
            // SAFETY: output element `(r0, c * nr)`, inside the rectangle (`r0 < m`, `c * nr < n`).
            let out = unsafe { dst.add(r0 * a.dst_stride_row + c * width) };
            if cols == count * nr {
                (tile.out, tile.out_stride) = (out, a.dst_stride_row);
            } else {
                (tile.out, tile.out_stride) = (scratch.as_mut_ptr(), ROW);
            }
            // SAFETY: the tier's feature (caller); `rows` LHS rows of `k` elements, `count` whole
            // RHS tiles, and `rows x count * nr` writable outputs: the rectangle's (all columns
            // in it), or for a single partial tile the scratch tile (`ROW >= width` bytes a row).
            unsafe { kernel(&tile) };
            if cols < count * nr {
                for (i, row) in scratch.chunks_exact(ROW).take(rows).enumerate() {
                    // SAFETY: row `r0 + i < m`, columns `c * nr .. c * nr + cols = n` of the
                    // rectangle, disjoint from the stack scratch; copied as bytes.
                    unsafe {
                        core::ptr::copy_nonoverlapping(row.as_ptr(), out.add(i * a.dst_stride_row), cols * T::SIZE)
                    };
                }
            }
            c += count;
        }
    }
}

/// `concat!` of one depth's `FMLA`s for lane `$l` of the LHS registers: per register pair,
/// `LDP` the RHS columns into v6, v7, then one `FMLA` per row and register.
#[cfg(target_arch = "aarch64")]
macro_rules! fma_depth {
    (
        $arr:literal, $lane:literal, $l:literal,
        [$(($bp:ident, [$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?])),+ $(,)?] $(,)?
    ) => {
        concat!($(
            "ldp q6, q7, [{", stringify!($bp), "}], #32\n",
            $(
                "fmla v", $c0, $arr, ", v6", $arr, ", v", $ar, ".", $lane, "[", $l, "]\n",
                "fmla v", $c1, $arr, ", v7", $arr, ", v", $ar, ".", $lane, "[", $l, "]\n",
            )+
        )+)
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use fma_depth;

/// `concat!` of the accumulator loads from the biases of each RHS tile, pair after pair (each
/// RHS operand ends on its first depth's values).
#[cfg(target_arch = "aarch64")]
macro_rules! fma_bias {
    ([$(($bp:ident, [$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?])),+ $(,)?]) => {
        concat!($(
            $("ld1 {{v", $c0, ".16b, v", $c1, ".16b}}, [{", stringify!($bp), "}]\n",)+
            "add {", stringify!($bp), "}, {", stringify!($bp), "}, #32\n",
        )+)
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use fma_bias;

/// `concat!` of the clamp of every accumulator: `FMIN` with v7 (max), then `FMAX` with v6 (min).
#[cfg(target_arch = "aarch64")]
macro_rules! fma_clamp {
    ($arr:literal, [$(($bp:ident, [$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?])),+ $(,)?]) => {
        concat!($($(
            "fmin v", $c0, $arr, ", v", $c0, $arr, ", v7", $arr, "\n",
            "fmin v", $c1, $arr, ", v", $c1, $arr, ", v7", $arr, "\n",
            "fmax v", $c0, $arr, ", v", $c0, $arr, ", v6", $arr, "\n",
            "fmax v", $c1, $arr, ", v", $c1, $arr, ", v6", $arr, "\n",
        )+)+)
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use fma_clamp;

/// `concat!` of the stores at `{o}`, `{stride}` bytes per row: pair after pair, row after row.
#[cfg(target_arch = "aarch64")]
macro_rules! fma_store {
    ([$(($bp:ident, [$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?])),+ $(,)?]) => {
        concat!($(
            "mov {o2}, {o}\n",
            $("st1 {{v", $c0, ".16b, v", $c1, ".16b}}, [{o2}], {stride}\n",)+
            "add {o}, {o}, #32\n",
        )+)
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use fma_store;

/// One tile kernel `$name` (see the module doc): `$cfg` the tier's instruction spellings,
/// `rows` the LHS operands `(name, index in FmaTile::lhs, register)`, `rhs` the RHS tile
/// operands `(name, index in FmaTile::rhs)`, `pairs` per register pair of columns its RHS
/// operand and the `(LHS register, accumulator, accumulator)` of each row.
#[cfg(target_arch = "aarch64")]
macro_rules! fma_tile {
    (
        $(#[$meta:meta])*
        fn $name:ident,
        {
            feature: $feature:literal, arr: $arr:literal, lane: $lane:literal, tail: $tail:literal,
            esz: $esz:literal, lanes: [$($l:literal),+], bounds: [$($bounds:literal),+ $(,)?] $(,)?
        },
        rows = [$(($a:ident, $i:tt, $r:literal)),+],
        rhs = [$(($b:ident, $j:tt)),+ $(,)?],
        pairs = $pairs:tt $(,)?
    ) => {
        $(#[$meta])*
        ///
        /// # Safety
        ///
        /// See [`FmaTileFn`](crate::float::fma::FmaTileFn).
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn $name(t: &$crate::float::fma::FmaTile) {
            // SAFETY: the caller guarantees the feature, that `t.lhs[..R]` hold `k =
            // t.groups * L + t.rest` readable elements each (the block reads exactly those,
            // advancing each pointer), that `t.rhs[..G]` are packed tiles of depth `k` (`nr`
            // biases then `k * nr` values, each read once in order) and that `t.out` is
            // writable for the `R` rows of `G * nr` elements, `t.out_stride` bytes apart, the
            // block stores. Every vector register is declared clobbered, the pointer operands
            // are scratch.
            unsafe {
                core::arch::asm!(
                    // Accumulators = the biases (each RHS operand ends on depth 0's values).
                    $crate::float::fma::fma_bias!($pairs),
                    // Main loop: L depths per iteration.
                    "cbz {groups}, 3f",
                    "2:",
                    // Load: L depths of each LHS row.
                    concat!($("ldr q", $r, ", [{", stringify!($a), "}], #16\n",)+),
                    // Multiply-add, depth after depth.
                    $($crate::float::fma::fma_depth!($arr, $lane, $l, $pairs),)+
                    "subs {groups}, {groups}, #1",
                    "b.ne 2b",
                    // Remainder loop: one depth per iteration.
                    "3:",
                    "cbz {rest}, 5f",
                    "4:",
                    concat!($("ldr ", $tail, $r, ", [{", stringify!($a), "}], #", $esz, "\n",)+),
                    $crate::float::fma::fma_depth!($arr, $lane, "0", $pairs),
                    "subs {rest}, {rest}, #1",
                    "b.ne 4b",
                    // Epilogue: clamp bounds into v6 (min) and v7 (max), FMIN then FMAX.
                    "5:",
                    $($bounds,)+
                    $crate::float::fma::fma_clamp!($arr, $pairs),
                    // Store, pair after pair, row after row.
                    $crate::float::fma::fma_store!($pairs),
                    $($a = inout(reg) t.lhs[$i] => _,)+
                    $($b = inout(reg) t.rhs[$j] => _,)+
                    groups = inout(reg) t.groups => _,
                    rest = inout(reg) t.rest => _,
                    o = inout(reg) t.out => _,
                    o2 = out(reg) _,
                    stride = in(reg) t.out_stride,
                    lo = in(reg) t.lo,
                    hi = in(reg) t.hi,
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
pub(crate) use fma_tile;

/// A tier of an FMA family: its two catalogue kernels, a wide one (4 registers of columns per
/// RHS tile: `$wide`) and a narrow one (2: `$narrow`), each `(STATIC, "name", Tier variant,
/// format path)`, on the tile kernels of `$cfg` (see `fma_tile!`); `$elem` the element type,
/// `$lanes_n` = `L`.
macro_rules! fma_tier {
    (
        elem: $elem:ty, lanes_n: $lanes_n:literal, cfg: $cfg:tt,
        wide: ($wide:ident, $wname:literal, $wtier:ident, $wfmt:expr),
        narrow: ($narrow:ident, $nname:literal, $ntier:ident, $nfmt:expr) $(,)?
    ) => {
        /// The kernels (public so that a firmware which knows its core can name the ones it
        /// runs and link nothing else).
        #[cfg(target_arch = "aarch64")]
        pub use aarch64::{$narrow, $wide};

        /// This tier's kernels, best first.
        #[cfg(target_arch = "aarch64")]
        pub const KERNELS: &[&Descriptor] = &[&$wide, &$narrow];

        /// This tier's kernels: none on this architecture.
        #[cfg(not(target_arch = "aarch64"))]
        pub const KERNELS: &[&Descriptor] = &[];

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::Descriptor;
            use $crate::float::fma::{FmaKernels, MR, drive};
            use $crate::matmul::{LhsStride, Packing, Tier, TileStrides, UncheckedArgs};

            /// Tile kernels of 4 accumulator registers per row and RHS tile (16 f32, 32 f16).
            mod wide {
                $crate::float::fma::fma_tile! {
                    /// 1 row x 4 registers.
                    fn r1, $cfg,
                    rows = [(a0, 0, "0")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9")]),
                        (b0, [("0", "10", "11")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 2 rows x 4 registers.
                    fn r2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "12", "13")]),
                        (b0, [("0", "10", "11"), ("1", "14", "15")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 3 rows x 4 registers.
                    fn r3, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17")]),
                        (b0, [("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 4 rows x 4 registers.
                    fn r4, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"), ("3", "20", "21")]),
                        (b0, [("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"), ("3", "22", "23")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 5 rows x 4 registers.
                    fn r5, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [
                            ("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"),
                            ("3", "20", "21"), ("4", "24", "25"),
                        ]),
                        (b0, [
                            ("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"),
                            ("3", "22", "23"), ("4", "26", "27"),
                        ]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 6 rows x 4 registers.
                    fn r6, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4"), (a5, 5, "5")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [
                            ("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"),
                            ("3", "20", "21"), ("4", "24", "25"), ("5", "28", "29"),
                        ]),
                        (b0, [
                            ("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"),
                            ("3", "22", "23"), ("4", "26", "27"), ("5", "30", "31"),
                        ]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 1 row x 4 RHS tiles of 4 registers.
                    fn r1x4, $cfg,
                    rows = [(a0, 0, "0")],
                    rhs = [(b0, 0), (b1, 1), (b2, 2), (b3, 3)],
                    pairs = [
                        (b0, [("0", "8", "9")]),
                        (b0, [("0", "10", "11")]),
                        (b1, [("0", "12", "13")]),
                        (b1, [("0", "14", "15")]),
                        (b2, [("0", "16", "17")]),
                        (b2, [("0", "18", "19")]),
                        (b3, [("0", "20", "21")]),
                        (b3, [("0", "22", "23")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 2 rows x 2 RHS tiles of 4 registers.
                    fn r2x2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1")],
                    rhs = [(b0, 0), (b1, 1)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "16", "17")]),
                        (b0, [("0", "10", "11"), ("1", "18", "19")]),
                        (b1, [("0", "12", "13"), ("1", "20", "21")]),
                        (b1, [("0", "14", "15"), ("1", "22", "23")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 3 rows x 2 RHS tiles of 4 registers.
                    fn r3x2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2")],
                    rhs = [(b0, 0), (b1, 1)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "16", "17"), ("2", "24", "25")]),
                        (b0, [("0", "10", "11"), ("1", "18", "19"), ("2", "26", "27")]),
                        (b1, [("0", "12", "13"), ("1", "20", "21"), ("2", "28", "29")]),
                        (b1, [("0", "14", "15"), ("1", "22", "23"), ("2", "30", "31")]),
                    ],
                }
            }

            /// Tile kernels of 2 accumulator registers per row and RHS tile (8 f32, 16 f16).
            mod narrow {
                $crate::float::fma::fma_tile! {
                    /// 1 row x 2 registers.
                    fn r1, $cfg,
                    rows = [(a0, 0, "0")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 2 rows x 2 registers.
                    fn r2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "10", "11")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 3 rows x 2 registers.
                    fn r3, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 4 rows x 2 registers.
                    fn r4, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13"), ("3", "14", "15")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 5 rows x 2 registers.
                    fn r5, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [
                            ("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13"),
                            ("3", "14", "15"), ("4", "16", "17"),
                        ]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 6 rows x 2 registers.
                    fn r6, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4"), (a5, 5, "5")],
                    rhs = [(b0, 0)],
                    pairs = [
                        (b0, [
                            ("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13"),
                            ("3", "14", "15"), ("4", "16", "17"), ("5", "18", "19"),
                        ]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 1 row x 8 RHS tiles of 2 registers.
                    fn r1x8, $cfg,
                    rows = [(a0, 0, "0")],
                    rhs = [(b0, 0), (b1, 1), (b2, 2), (b3, 3), (b4, 4), (b5, 5), (b6, 6), (b7, 7)],
                    pairs = [
                        (b0, [("0", "8", "9")]),
                        (b1, [("0", "10", "11")]),
                        (b2, [("0", "12", "13")]),
                        (b3, [("0", "14", "15")]),
                        (b4, [("0", "16", "17")]),
                        (b5, [("0", "18", "19")]),
                        (b6, [("0", "20", "21")]),
                        (b7, [("0", "22", "23")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 2 rows x 4 RHS tiles of 2 registers.
                    fn r2x4, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1")],
                    rhs = [(b0, 0), (b1, 1), (b2, 2), (b3, 3)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "16", "17")]),
                        (b1, [("0", "10", "11"), ("1", "18", "19")]),
                        (b2, [("0", "12", "13"), ("1", "20", "21")]),
                        (b3, [("0", "14", "15"), ("1", "22", "23")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 3 rows x 4 RHS tiles of 2 registers.
                    fn r3x4, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2")],
                    rhs = [(b0, 0), (b1, 1), (b2, 2), (b3, 3)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "16", "17"), ("2", "24", "25")]),
                        (b1, [("0", "10", "11"), ("1", "18", "19"), ("2", "26", "27")]),
                        (b2, [("0", "12", "13"), ("1", "20", "21"), ("2", "28", "29")]),
                        (b3, [("0", "14", "15"), ("1", "22", "23"), ("2", "30", "31")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 4 rows x 2 RHS tiles of 2 registers.
                    fn r4x2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3")],
                    rhs = [(b0, 0), (b1, 1)],
                    pairs = [
                        (b0, [("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"), ("3", "20", "21")]),
                        (b1, [("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"), ("3", "22", "23")]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 5 rows x 2 RHS tiles of 2 registers.
                    fn r5x2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4")],
                    rhs = [(b0, 0), (b1, 1)],
                    pairs = [
                        (b0, [
                            ("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"),
                            ("3", "20", "21"), ("4", "24", "25"),
                        ]),
                        (b1, [
                            ("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"),
                            ("3", "22", "23"), ("4", "26", "27"),
                        ]),
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 6 rows x 2 RHS tiles of 2 registers.
                    fn r6x2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4"), (a5, 5, "5")],
                    rhs = [(b0, 0), (b1, 1)],
                    pairs = [
                        (b0, [
                            ("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"),
                            ("3", "20", "21"), ("4", "24", "25"), ("5", "28", "29"),
                        ]),
                        (b1, [
                            ("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"),
                            ("3", "22", "23"), ("4", "26", "27"), ("5", "30", "31"),
                        ]),
                    ],
                }
            }

            const WIDE: FmaKernels = FmaKernels {
                single: [wide::r1, wide::r2, wide::r3, wide::r4, wide::r5, wide::r6],
                multi: [(wide::r1x4, 4), (wide::r2x2, 2), (wide::r3x2, 2), (wide::r4, 1), (wide::r5, 1), (wide::r6, 1)],
            };
            const NARROW: FmaKernels = FmaKernels {
                single: [narrow::r1, narrow::r2, narrow::r3, narrow::r4, narrow::r5, narrow::r6],
                multi: [
                    (narrow::r1x8, 8),
                    (narrow::r2x4, 4),
                    (narrow::r3x4, 4),
                    (narrow::r4x2, 2),
                    (narrow::r5x2, 2),
                    (narrow::r6x2, 2),
                ],
            };

            /// # Safety
            ///
            /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked).
            unsafe fn wide_unchecked(p: &Packing, a: &UncheckedArgs<$elem, LhsStride>, s: &TileStrides) {
                // SAFETY: forwarded; the catalogue entry's format has 4 registers of columns
                // (64 bytes), the width of the `wide` kernels.
                unsafe { drive(p, a, s, $lanes_n, &WIDE) }
            }

            /// # Safety
            ///
            /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked).
            unsafe fn narrow_unchecked(p: &Packing, a: &UncheckedArgs<$elem, LhsStride>, s: &TileStrides) {
                // SAFETY: forwarded; the catalogue entry's format has 2 registers of columns
                // (32 bytes), the width of the `narrow` kernels.
                unsafe { drive(p, a, s, $lanes_n, &NARROW) }
            }

            #[doc = concat!("`", $wname, "`.")]
            pub static $wide: Descriptor =
                super::super::kernel($wname, Tier::$wtier, (MR, 64 / size_of::<$elem>()), $wfmt, wide_unchecked);

            #[doc = concat!("`", $nname, "`.")]
            pub static $narrow: Descriptor =
                super::super::kernel($nname, Tier::$ntier, (MR, 32 / size_of::<$elem>()), $nfmt, narrow_unchecked);
        }
    };
}
pub(crate) use fma_tier;
