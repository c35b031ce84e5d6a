//! What the `asm!` tiers of the two FMA families (`f32_f32_f32p` on NEON, `f16_f16_f16p` on
//! FEAT_FP16) share: one macro that writes a tier's tile kernels and catalogue entries, and the
//! Rust driver that walks the output in tiles (float.md §5).
//!
//! A tile is `R = 1..=6` rows x 4 vector registers (the wide tiles: 16 f32 or 32 f16 columns)
//! or 2 (the narrow tiles: 8 f32 or 16 f16). Registers:
//!
//! * `v0..v(R-1)`: `L` depths of LHS row `r` (`L` = 4 f32 or 8 f16 lanes of one `LDR q`);
//! * `v6, v7`: 8 (f32) or 16 (f16) columns of one RHS depth (one `LDP q`, at most 2 per depth);
//! * `v8..v31`: the accumulators, row `r`'s register pair `h` (columns `8h..8h+8` in f32) at
//!   `v(8 + 4r + 2h)`, `v(9 + 4r + 2h)` (wide) or `v(8 + 2r)`, `v(9 + 2r)` (narrow).
//!
//! Per output the arithmetic is the spec's chain: the accumulator starts at the bias, takes one
//! `FMLA` (by element) per depth in increasing order, then `FMIN` with the upper bound and
//! `FMAX` with the lower one. The main loop takes `L` depths per iteration, the remainder loop
//! one, so every tile, tail and `k` gives the scalar tier's bits. Each row count has its own
//! kernel (no work on rows that do not exist: the m = 1 case runs one row); a tile narrower than
//! `nr` columns (the last, when `n % nr != 0`) is stored into a stack scratch tile and its valid
//! columns copied out.

/// Most rows of a tile (the catalogue's `m_step`).
#[cfg(target_arch = "aarch64")]
pub(crate) const MR: usize = 6;

/// The arguments of one tile kernel call (the `asm!` blocks read them by field).
#[cfg(target_arch = "aarch64")]
pub(crate) struct FmaTile {
    /// LHS row `r` of the tile (entries past the tile's rows repeat its last row, unread).
    pub(crate) lhs: [*const u8; MR],
    /// The packed RHS tile: its `nr` biases, then its values, depth after depth.
    pub(crate) rhs: *const u8,
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

/// A tile kernel: the whole K loop and the epilogue of one `R x nr` tile.
///
/// Safety: the CPU has the tier's feature; `lhs[..R]` are readable for `k` elements, `rhs` for
/// one packed tile of depth `k`, and `out` writable for `R` rows of `nr` elements.
#[cfg(target_arch = "aarch64")]
pub(crate) type FmaTileFn = unsafe fn(&FmaTile);

/// Walks the `m x n` output in tiles of `MR x nr`: `tiles[R - 1]` computes `R` rows; `lanes`
/// is `L`, the depths per main-loop iteration.
///
/// # Safety
///
/// [`FloatKernel::run_unchecked`](crate::float::FloatKernel::run_unchecked)'s contract, for a
/// kernel whose formats have `t.nr` columns per tile of `t.rhs_tile` bytes, with `nr` elements
/// of `T` at most 64 bytes, and `tiles` the tile kernels of that width.
#[cfg(target_arch = "aarch64")]
pub(crate) unsafe fn drive<T: crate::element::Element>(
    t: &crate::float::Tiles,
    a: &crate::float::FloatArgs<T, T>,
    lanes: usize,
    tiles: &[FmaTileFn; MR],
) {
    /// Bytes of one scratch row.
    const ROW: usize = 64;
    let (m, n, nr) = (a.m, a.n, t.nr);
    let width = nr * T::SIZE;
    debug_assert!(width <= ROW);
    let mut scratch = [0u8; MR * ROW];
    let lhs = a.lhs.cast::<u8>();
    let dst = a.dst.cast::<u8>();
    let mut tile = FmaTile {
        lhs: [lhs; MR],
        rhs: a.rhs_packed,
        groups: a.k / lanes,
        rest: a.k % lanes,
        out: dst,
        out_stride: a.dst_stride_row,
        lo: a.clamp_min.to_bits(),
        hi: a.clamp_max.to_bits(),
    };
    for c0 in (0..n).step_by(nr) {
        let cols = nr.min(n - c0);
        // SAFETY: tile `c0 / nr < ceil(n / nr)` of the RHS the caller made readable.
        tile.rhs = unsafe { a.rhs_packed.add(c0 / nr * t.rhs_tile) };
        for r0 in (0..m).step_by(MR) {
            let rows = MR.min(m - r0);
            for (i, p) in tile.lhs.iter_mut().enumerate() {
                // SAFETY: row `r0 + min(i, rows - 1) < m`: an LHS row the caller made
                // readable (the kernel of `rows` rows reads only the first `rows` entries).
                *p = unsafe { lhs.add((r0 + i.min(rows - 1)) * a.lhs_stride_row) };
            }
            // SAFETY: output element `(r0, c0)`, inside the rectangle (`r0 < m`, `c0 < n`).
            let out = unsafe { dst.add(r0 * a.dst_stride_row + c0 * T::SIZE) };
            if cols == nr {
                (tile.out, tile.out_stride) = (out, a.dst_stride_row);
            } else {
                (tile.out, tile.out_stride) = (scratch.as_mut_ptr(), ROW);
            }
            // SAFETY: the tier's feature (caller); `rows` LHS rows of `k` elements, one whole RHS
            // tile, and `rows x nr` writable outputs (the rectangle's, all `nr` columns in it, or
            // the scratch tile, `ROW >= width` bytes per row).
            unsafe { tiles[rows - 1](&tile) };
            if cols < nr {
                for (i, row) in scratch.chunks_exact(ROW).take(rows).enumerate() {
                    // SAFETY: row `r0 + i < m`, columns `c0 .. c0 + cols <= n` of the rectangle,
                    // disjoint from the stack scratch; copied as bytes.
                    unsafe {
                        core::ptr::copy_nonoverlapping(row.as_ptr(), out.add(i * a.dst_stride_row), cols * T::SIZE)
                    };
                }
            }
        }
    }
}

/// `concat!` of one depth's `FMLA`s for lane `$l` of the LHS registers: per register pair,
/// `LDP` the RHS columns into v6, v7, then one `FMLA` per row and register.
#[cfg(target_arch = "aarch64")]
macro_rules! fma_depth {
    ($arr:literal, $lane:literal, $l:literal, [$([$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?]),+ $(,)?]) => {
        concat!($(
            "ldp q6, q7, [{b}], #32\n",
            $(
                "fmla v", $c0, $arr, ", v6", $arr, ", v", $ar, ".", $lane, "[", $l, "]\n",
                "fmla v", $c1, $arr, ", v7", $arr, ", v", $ar, ".", $lane, "[", $l, "]\n",
            )+
        )+)
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use fma_depth;

/// `concat!` of the accumulator loads from the biases at `{b}`, pair after pair (`{b}` ends on
/// the first depth's values).
#[cfg(target_arch = "aarch64")]
macro_rules! fma_bias {
    ([$([$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?]),+ $(,)?]) => {
        concat!($(
            $("ld1 {{v", $c0, ".16b, v", $c1, ".16b}}, [{b}]\n",)+
            "add {b}, {b}, #32\n",
        )+)
    };
}
#[cfg(target_arch = "aarch64")]
pub(crate) use fma_bias;

/// `concat!` of the clamp of every accumulator: `FMIN` with v7 (max), then `FMAX` with v6 (min).
#[cfg(target_arch = "aarch64")]
macro_rules! fma_clamp {
    ($arr:literal, [$([$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?]),+ $(,)?]) => {
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
    ([$([$(($ar:literal, $c0:literal, $c1:literal)),+ $(,)?]),+ $(,)?]) => {
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
/// `rows` the LHS operands `(name, index in FmaTile::lhs, register)`, `halves` per register
/// pair the `(LHS register, accumulator, accumulator)` of each row.
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
        halves = $halves:tt $(,)?
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
            // advancing each pointer), that `t.rhs` is one packed tile of depth `k` (`nr`
            // biases then `k * nr` values, read once in order) and that `t.out` is writable for
            // the `R` rows of `nr` elements, `t.out_stride` bytes apart, the block stores. Every
            // vector register is declared clobbered, the pointer operands are scratch.
            unsafe {
                core::arch::asm!(
                    // Accumulators = the tile's biases ({b} ends on depth 0's values).
                    $crate::float::fma::fma_bias!($halves),
                    // Main loop: L depths per iteration.
                    "cbz {groups}, 3f",
                    "2:",
                    // Load: L depths of each LHS row.
                    concat!($("ldr q", $r, ", [{", stringify!($a), "}], #16\n",)+),
                    // Multiply-add, depth after depth.
                    $($crate::float::fma::fma_depth!($arr, $lane, $l, $halves),)+
                    "subs {groups}, {groups}, #1",
                    "b.ne 2b",
                    // Remainder loop: one depth per iteration.
                    "3:",
                    "cbz {rest}, 5f",
                    "4:",
                    concat!($("ldr ", $tail, $r, ", [{", stringify!($a), "}], #", $esz, "\n",)+),
                    $crate::float::fma::fma_depth!($arr, $lane, "0", $halves),
                    "subs {rest}, {rest}, #1",
                    "b.ne 4b",
                    // Epilogue: clamp bounds into v6 (min) and v7 (max), FMIN then FMAX.
                    "5:",
                    $($bounds,)+
                    $crate::float::fma::fma_clamp!($arr, $halves),
                    // Store, pair after pair, row after row.
                    $crate::float::fma::fma_store!($halves),
                    $($a = inout(reg) t.lhs[$i] => _,)+
                    b = inout(reg) t.rhs => _,
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

/// A tier of an FMA family: its two catalogue kernels, a wide one (4 registers of columns:
/// `$wide`) and a narrow one (2: `$narrow`), each `(STATIC, "name", Tier variant, format path)`, on the tile
/// kernels of `$cfg` (see [`fma_tile!`]); `$elem` the element type, `$lanes_n` = `L`.
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
        pub const KERNELS: &[&Kernel] = &[&$wide, &$narrow];

        /// This tier's kernels: none on this architecture.
        #[cfg(not(target_arch = "aarch64"))]
        pub const KERNELS: &[&Kernel] = &[];

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::Kernel;
            use $crate::float::fma::{FmaTileFn, MR, drive};
            use $crate::float::{FloatArgs, Tiles};
            use $crate::matmul::Tier;

            /// Tile kernels of 4 accumulator registers per row.
            mod wide {
                $crate::float::fma::fma_tile! {
                    /// 1 row x 4 registers.
                    fn r1, $cfg,
                    rows = [(a0, 0, "0")],
                    halves = [[("0", "8", "9")], [("0", "10", "11")]],
                }
                $crate::float::fma::fma_tile! {
                    /// 2 rows x 4 registers.
                    fn r2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1")],
                    halves = [
                        [("0", "8", "9"), ("1", "12", "13")],
                        [("0", "10", "11"), ("1", "14", "15")],
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 3 rows x 4 registers.
                    fn r3, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2")],
                    halves = [
                        [("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17")],
                        [("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19")],
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 4 rows x 4 registers.
                    fn r4, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3")],
                    halves = [
                        [("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"), ("3", "20", "21")],
                        [("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"), ("3", "22", "23")],
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 5 rows x 4 registers.
                    fn r5, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4")],
                    halves = [
                        [("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"), ("3", "20", "21"), ("4", "24", "25")],
                        [("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"), ("3", "22", "23"), ("4", "26", "27")],
                    ],
                }
                $crate::float::fma::fma_tile! {
                    /// 6 rows x 4 registers.
                    fn r6, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4"), (a5, 5, "5")],
                    halves = [
                        [
                            ("0", "8", "9"), ("1", "12", "13"), ("2", "16", "17"),
                            ("3", "20", "21"), ("4", "24", "25"), ("5", "28", "29"),
                        ],
                        [
                            ("0", "10", "11"), ("1", "14", "15"), ("2", "18", "19"),
                            ("3", "22", "23"), ("4", "26", "27"), ("5", "30", "31"),
                        ],
                    ],
                }
            }

            /// Tile kernels of 2 accumulator registers per row.
            mod narrow {
                $crate::float::fma::fma_tile! {
                    /// 1 row x 2 registers.
                    fn r1, $cfg,
                    rows = [(a0, 0, "0")],
                    halves = [[("0", "8", "9")]],
                }
                $crate::float::fma::fma_tile! {
                    /// 2 rows x 2 registers.
                    fn r2, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1")],
                    halves = [[("0", "8", "9"), ("1", "10", "11")]],
                }
                $crate::float::fma::fma_tile! {
                    /// 3 rows x 2 registers.
                    fn r3, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2")],
                    halves = [[("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13")]],
                }
                $crate::float::fma::fma_tile! {
                    /// 4 rows x 2 registers.
                    fn r4, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3")],
                    halves = [[("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13"), ("3", "14", "15")]],
                }
                $crate::float::fma::fma_tile! {
                    /// 5 rows x 2 registers.
                    fn r5, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4")],
                    halves = [[
                        ("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13"), ("3", "14", "15"), ("4", "16", "17"),
                    ]],
                }
                $crate::float::fma::fma_tile! {
                    /// 6 rows x 2 registers.
                    fn r6, $cfg,
                    rows = [(a0, 0, "0"), (a1, 1, "1"), (a2, 2, "2"), (a3, 3, "3"), (a4, 4, "4"), (a5, 5, "5")],
                    halves = [[
                        ("0", "8", "9"), ("1", "10", "11"), ("2", "12", "13"),
                        ("3", "14", "15"), ("4", "16", "17"), ("5", "18", "19"),
                    ]],
                }
            }

            const WIDE: [FmaTileFn; MR] = [wide::r1, wide::r2, wide::r3, wide::r4, wide::r5, wide::r6];
            const NARROW: [FmaTileFn; MR] = [narrow::r1, narrow::r2, narrow::r3, narrow::r4, narrow::r5, narrow::r6];

            /// # Safety
            ///
            /// [`FloatKernel::run_unchecked`](crate::float::FloatKernel::run_unchecked).
            unsafe fn run_wide(t: &Tiles, a: &FloatArgs<$elem, $elem>) {
                // SAFETY: forwarded; the catalogue entry's format has 4 registers of columns
                // (64 bytes), the width of the `wide` kernels.
                unsafe { drive(t, a, $lanes_n, &WIDE) }
            }

            /// # Safety
            ///
            /// [`FloatKernel::run_unchecked`](crate::float::FloatKernel::run_unchecked).
            unsafe fn run_narrow(t: &Tiles, a: &FloatArgs<$elem, $elem>) {
                // SAFETY: forwarded; the catalogue entry's format has 2 registers of columns
                // (32 bytes), the width of the `narrow` kernels.
                unsafe { drive(t, a, $lanes_n, &NARROW) }
            }

            #[doc = concat!("`", $wname, "`.")]
            pub static $wide: Kernel =
                Kernel::new($wname, Tier::$wtier, (MR, 64 / size_of::<$elem>()), None, $wfmt, run_wide);

            #[doc = concat!("`", $nname, "`.")]
            pub static $narrow: Kernel =
                Kernel::new($nname, Tier::$ntier, (MR, 32 / size_of::<$elem>()), None, $nfmt, run_narrow);
        }
    };
}
pub(crate) use fma_tier;
