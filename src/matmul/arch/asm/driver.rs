//! The tile drivers of the asm tiers (dotprod, i8mm): plain Rust that walks the output in tiles,
//! fills one [`Tile`] per call, and sends partial tiles through a stack scratch tile. The asm
//! of a tile only ever sees a whole tile.

use super::{CONSTS, copy_out};
use crate::element::Element;
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

/// Most LHS tiles (of 4 rows) one tile kernel takes.
pub(crate) const MAX_TILES: usize = 6;

/// The arguments of one tile kernel call, for every asm tier (a kernel ignores the fields it
/// does not use). The `asm!` blocks take their operands from these fields by name.
pub(crate) struct Tile {
    /// GEMM: the packed LHS tiles of the output tile's rows at their first data byte
    /// ([`Layout::lhs_data`]): entry `i` is LHS tile `i` of the step (the last one repeated
    /// past the step's tile count). GEMV: `lhs[0]` is the row's packed tile.
    pub(crate) lhs: [*const u8; MAX_TILES],
    /// `qsi8d32p` (i8mm): bytes from a block's first LHS data byte to its second half (`2 * bl`).
    pub(crate) lhs_hi: usize,
    /// `qsi8d32p` (i8mm): bytes from the end of a block's first LHS data half to the next
    /// block's data.
    pub(crate) lhs_skip: usize,
    /// GEMV: the first packed RHS tile; GEMM: the first column's first data byte in its RHS tile.
    pub(crate) rhs: *const u8,
    /// GEMV: bytes between consecutive packed RHS tiles.
    pub(crate) rhs_stride: usize,
    /// GEMM (dotprod): bytes between consecutive chunks of the RHS tile (`bd * nr`).
    pub(crate) rhs_step: usize,
    /// GEMM, per-block families: the first column's scale of block 0.
    pub(crate) scales: *const u8,
    /// GEMM: the first column's first per-column f32 (`rsum`); the next array follows
    /// `extras_step` bytes on.
    pub(crate) extras: *const u8,
    /// GEMM: `4 * nr`.
    pub(crate) extras_step: usize,
    /// 32-deep K groups: per-channel families `Kp / 32`, per-block families `bl / 32`.
    pub(crate) groups: usize,
    /// Blocks (`k / bl`; 1 for the per-channel families).
    pub(crate) blocks: usize,
    /// Per-block families: RHS bytes per block (`nr * (bl/2 + 2)`).
    pub(crate) block_bytes: usize,
    /// GEMM (dotprod), per-block families: bytes from the end of a block's data to the next
    /// block's data (`2 * nr`: the block scales; `8 * nr` for `qai4c32p`: offsets and scales).
    pub(crate) skip: usize,
    /// The zeros of [`CONSTS`].
    pub(crate) zero: *const u8,
    /// Output element (0, 0) of the tile (f32, f16 or bf16: the tile function knows which).
    pub(crate) out: *mut u8,
    /// Bytes between output rows.
    pub(crate) out_stride: usize,
    /// Clamp bounds (f32 bits).
    pub(crate) lo: u32,
    pub(crate) hi: u32,
    /// The 32 bytes of the family's constants ([`Layout::consts`]).
    pub(crate) consts: *const u8,
}

/// The asm of one output tile: the K loop plus the epilogue, storing the whole tile.
///
/// Safety: the CPU has the tier's feature; the [`Tile`]'s pointers lead to the packed tiles
/// the kernel's shape reads, with the [`Tile`]'s depth; `out` is writable for the whole tile.
pub(crate) type TileFn = unsafe fn(&Tile);

/// A tile kernel of a GEMM table and the output columns it computes.
pub(crate) type TileKernel = (TileFn, usize);

/// Where a family's data sit in its packed tiles for one call (`k`, `bl`, the packing), in
/// bytes: the family module computes it once (`asm_layout`) for both asm tiers.
pub(crate) struct Layout {
    /// Rows per LHS tile.
    pub(crate) mr: usize,
    /// Columns per RHS tile.
    pub(crate) nr: usize,
    /// Bytes of a column's chunk in an interleaved RHS group (`kr / sr`).
    pub(crate) bd: usize,
    /// Bytes of one packed LHS tile.
    pub(crate) lhs_stride: usize,
    /// Offset of the first data byte in an LHS tile.
    pub(crate) lhs_data: usize,
    /// [`Tile::lhs_hi`].
    pub(crate) lhs_hi: usize,
    /// [`Tile::lhs_skip`].
    pub(crate) lhs_skip: usize,
    /// Bytes of one packed RHS tile.
    pub(crate) rhs_stride: usize,
    /// [`Tile::groups`].
    pub(crate) groups: usize,
    /// [`Tile::blocks`].
    pub(crate) blocks: usize,
    /// [`Tile::block_bytes`].
    pub(crate) block_bytes: usize,
    /// Offset in an RHS tile of column 0's first data byte (columns `bd` bytes apart).
    pub(crate) data_at: usize,
    /// Offset in an RHS tile of column 0's block-0 scale (columns 2 bytes apart).
    pub(crate) scales_at: usize,
    /// Offset in an RHS tile of column 0's first per-column f32 (columns 4 bytes apart).
    pub(crate) extras_at: usize,
    /// [`Tile::skip`].
    pub(crate) skip: usize,
    /// 32 bytes of constants the family derives from its parameters for the call
    /// ([`Layout::with_consts`]; the 2-bit family's `TBL` tables of its look-up table), zeros
    /// for the families without parameters.
    pub(crate) consts: [u8; 32],
}

impl Layout {
    /// The layout of a per-channel family with `bits`-bit weights (4 or 8): `k` padded to whole
    /// 32-deep groups (`Kp`), RHS tiles of `nr * Kp * bits / 8` data bytes, then the per-column
    /// extras (`rsum`, `scale`, `bias`).
    #[inline]
    pub(crate) fn per_channel<O, P>(
        args: &UncheckedArgs<O, P>,
        strides: &TileStrides,
        p: &Packing,
        bits: usize,
    ) -> Layout {
        let groups = args.k.div_ceil(32);
        Layout {
            mr: p.mr,
            nr: p.nr,
            bd: p.block_depth(),
            lhs_stride: strides.lhs,
            lhs_data: 0,
            lhs_hi: 0,
            lhs_skip: 0,
            rhs_stride: strides.rhs,
            groups,
            blocks: 1,
            block_bytes: 0,
            data_at: 0,
            scales_at: 0,
            extras_at: p.nr * 32 * groups * bits / 8,
            skip: 2 * p.nr,
            consts: [0; 32],
        }
    }

    /// The same layout with the family's constants `consts` ([`Layout::consts`]).
    #[inline]
    pub(crate) fn with_consts(mut self, consts: [u8; 32]) -> Layout {
        self.consts = consts;
        self
    }

    /// The layout of a per-block family: RHS tiles of `k / bl` blocks of `nr * (bl/2 + 2)`
    /// bytes (the data and `2 * nr` bytes of scales, the scales first if `scales_first`), then
    /// the per-column extras if the format has them. `None` unless `bl` is a multiple of 32
    /// that divides `k` (the kernels' contract; nothing runs otherwise).
    #[inline]
    pub(crate) fn blocked<O, P>(
        args: &UncheckedArgs<O, P>,
        strides: &TileStrides,
        p: &Packing,
        scales_first: bool,
    ) -> Option<Layout> {
        let (k, bl) = (args.k, args.bl);
        if bl < 32 || !bl.is_multiple_of(32) || !k.is_multiple_of(bl) {
            return None;
        }
        let (blocks, data) = (k / bl, p.nr * bl / 2);
        let block_bytes = data + 2 * p.nr;
        Some(Layout {
            mr: p.mr,
            nr: p.nr,
            bd: p.block_depth(),
            lhs_stride: strides.lhs,
            lhs_data: 0,
            lhs_hi: 0,
            lhs_skip: 0,
            rhs_stride: strides.rhs,
            groups: bl / 32,
            blocks,
            block_bytes,
            data_at: if scales_first { 2 * p.nr } else { 0 },
            scales_at: if scales_first { 0 } else { data },
            extras_at: blocks * block_bytes,
            skip: 2 * p.nr,
            consts: [0; 32],
        })
    }
}

impl Tile {
    /// The arguments every tile of the call `args` in `layout` shares; the drivers set the
    /// pointers and the output per tile.
    fn new<O: Element, P>(args: &UncheckedArgs<O, P>, layout: &Layout) -> Tile {
        Tile {
            lhs: [args.lhs; MAX_TILES],
            lhs_hi: layout.lhs_hi,
            lhs_skip: layout.lhs_skip,
            rhs: args.rhs_packed,
            rhs_stride: layout.rhs_stride,
            rhs_step: layout.bd * layout.nr,
            scales: args.rhs_packed,
            extras: args.rhs_packed,
            extras_step: 4 * layout.nr,
            groups: layout.groups,
            blocks: layout.blocks,
            block_bytes: layout.block_bytes,
            skip: layout.skip,
            zero: CONSTS.0.as_ptr(),
            out: args.dst_bytes(),
            out_stride: args.dst_stride_row,
            lo: args.clamp_min.to_bits(),
            hi: args.clamp_max.to_bits(),
            consts: layout.consts.as_ptr(),
        }
    }
}

/// GEMV driver (`mr = 1`): for each step of `nr * tiles` columns and each row runs `wide`
/// (`tiles` RHS tiles); the columns left over after the last whole step run `narrow` (one RHS
/// tile) per tile. Partial tiles are computed into a scratch tile and copied.
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a packing with
/// `mr = 1`; `layout` describes that packing and `args`; `wide` and `narrow` are tile
/// functions of the packing whose tier the CPU has (a step of more than 16 columns, or a
/// packing with `mr != 1`, computes nothing).
pub(crate) unsafe fn gemv<O: Element, P>(
    args: &UncheckedArgs<O, P>,
    layout: &Layout,
    tiles: usize,
    wide: TileFn,
    narrow: TileFn,
) {
    let nr = layout.nr;
    let step = nr * tiles;
    // What decides the memory read and written: one-row LHS tiles, and a step that fits the
    // scratch row (the tests run every catalogue kernel against the scalar one, so a table
    // breaking this fails them).
    if layout.mr != 1 || tiles == 0 || step > GEMV_MAX_COLS {
        debug_assert!(false, "a GEMV step the driver cannot run");
        return;
    }
    let wide_end = args.n - args.n % step;
    let mut tmp = [O::default(); GEMV_MAX_COLS];
    let mut t = Tile::new(args, layout);
    let mut n0 = 0;
    while n0 < args.n {
        let (f, width) = if n0 < wide_end { (wide, step) } else { (narrow, nr) };
        let cols = width.min(args.n - n0);
        t.rhs = args.rhs_packed.wrapping_add(n0 / nr * layout.rhs_stride);
        t.out_stride = O::SIZE * width;
        for r in 0..args.m {
            let out = args.dst.wrapping_byte_add(r * args.dst_stride_row).wrapping_add(n0);
            t.lhs[0] = args.lhs.wrapping_add(r * layout.lhs_stride);
            t.out = if cols < width { tmp.as_mut_ptr() } else { out }.cast();
            // SAFETY: the caller guarantees the tier and `ceil(n/nr)` RHS tiles; `f` reads row
            // `r < m` and the `width / nr` RHS tiles from `n0 / nr`: a wide step only runs
            // below `wide_end`, where all its tiles exist, and a narrow one reads one tile that
            // holds column `n0 < n`. It writes one row of `width` columns: to `dst` when all
            // of them are in the rectangle, else to `tmp` (`GEMV_MAX_COLS >= width` elements,
            // checked above).
            unsafe { f(&t) };
            if cols < width {
                // SAFETY: `cols` columns of row `r` from `n0` lie inside the rectangle.
                unsafe { copy_out(&tmp, width, 1, cols, out, args.dst_stride_row) };
            }
        }
        n0 += width;
    }
}

/// Most columns of one GEMV step (`nr * tiles`, the scratch row's width).
const GEMV_MAX_COLS: usize = 16;

/// Rows of one packed LHS tile of the asm tiers' GEMM tile functions.
pub(crate) const GEMM_MR: usize = 4;

/// Most columns one GEMM tile function computes (the scratch tile's width).
pub(crate) const MAX_COLS: usize = 8;

/// Most column steps of one RHS tile the GEMM driver walks (`nr / cols`: the asm tiers' RHS
/// tiles are 4 or 8 columns wide, tile functions 4 or 8). A fixed bound keeps the driver's frame
/// small (firmware stacks); a table beyond it breaks [`gemm_fits`] and computes nothing.
const MAX_STEPS: usize = 4;

/// Whether the GEMM driver can run tile functions of `cols` columns on `nr`-column RHS tiles
/// with `mr`-row LHS tiles: what decides the memory it reads. `cols` must divide `nr` (a step
/// never straddles two RHS tiles) in at most [`MAX_STEPS`] steps, fit the scratch tile, and
/// the LHS tiles must have the tile functions' [`GEMM_MR`] rows.
pub(crate) const fn gemm_fits(mr: usize, nr: usize, cols: usize) -> bool {
    mr == GEMM_MR && cols > 0 && cols <= MAX_COLS && nr.is_multiple_of(cols) && nr / cols <= MAX_STEPS
}

/// GEMM driver (`mr = 4`): the rows in steps of `kernels.len()` LHS tiles (then one step of
/// the tiles that remain), each step over all columns with `kernels[t - 1]` for `t` LHS tiles,
/// which computes `4t` rows x its column count. Partial tiles go through a scratch tile. A
/// table that breaks [`gemm_fits`] for the layout (or holds more than [`MAX_TILES`] entries)
/// computes nothing (every catalogue table is run against the scalar kernel by the tests, so
/// such a table fails them).
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a packing with
/// `mr = 4`; `layout` describes that packing and `args`; `kernels[i]` is a tile kernel of the
/// packing whose tier the CPU has, for `i + 1` LHS tiles.
pub(crate) unsafe fn gemm<O: Element, P>(args: &UncheckedArgs<O, P>, layout: &Layout, kernels: &[TileKernel]) {
    let (m, n, nr) = (args.m, args.n, layout.nr);
    if kernels.is_empty()
        || kernels.len() > MAX_TILES
        || !kernels.iter().all(|&(_, cols)| gemm_fits(layout.mr, nr, cols))
    {
        debug_assert!(false, "a GEMM tile table the driver cannot run");
        return;
    }
    let mut scratch = [O::default(); GEMM_MR * MAX_TILES * MAX_COLS];
    let mut t = Tile::new(args, layout);
    let m_tiles = m.div_ceil(GEMM_MR);
    let mut tile0 = 0;
    while tile0 < m_tiles {
        let tiles = kernels.len().min(m_tiles - tile0);
        let (kernel, cols) = kernels[tiles - 1];
        for (i, p) in t.lhs.iter_mut().enumerate() {
            let tile = tile0 + i.min(tiles - 1);
            *p = args.lhs.wrapping_add(tile * layout.lhs_stride + layout.lhs_data);
        }
        let row0 = GEMM_MR * tile0;
        let rows = (GEMM_MR * tiles).min(m - row0);
        // Column `col` is column `col % nr` of RHS tile `col / nr`: its data start `bd` bytes
        // per column into each chunk, its scales 2 bytes and its per-column constants 4 bytes
        // per column into each array. `steps[s]` holds those offsets from the RHS tile's start
        // for the `s`-th step of `cols` columns in the tile (a step never straddles two RHS
        // tiles: `cols` divides `nr`, checked above with `nr / cols <= MAX_STEPS`).
        let mut offsets = [[0usize; 3]; MAX_STEPS];
        let steps = &mut offsets[..nr / cols];
        for (s, o) in steps.iter_mut().enumerate() {
            let c = s * cols;
            *o = [layout.data_at + c * layout.bd, layout.scales_at + 2 * c, layout.extras_at + 4 * c];
        }
        let steps = &*steps;
        // Steps below `whole_end` write a whole tile straight to `dst`; the rest (the last
        // partial column step, or every step when the rows are partial) go through `scratch`.
        let whole_end = if rows == GEMM_MR * tiles { n - n % cols } else { 0 };
        let mut rhs_tile = args.rhs_packed;
        let mut out = args.dst.wrapping_byte_add(row0 * args.dst_stride_row);
        let mut col = 0;
        t.out_stride = args.dst_stride_row;
        'whole: loop {
            for o in steps {
                if col >= whole_end {
                    break 'whole;
                }
                t.rhs = rhs_tile.wrapping_add(o[0]);
                t.scales = rhs_tile.wrapping_add(o[1]);
                t.extras = rhs_tile.wrapping_add(o[2]);
                t.out = out.cast();
                // SAFETY: the caller guarantees the tier. The LHS tiles `tile0..tile0 + tiles`
                // are below `ceil(m/4)` and `rhs_tile` is RHS tile `col / nr < ceil(n/nr)`, all
                // inside the packed buffers the caller provides (the step's columns stay in
                // that RHS tile). The kernel writes `4 * tiles` rows of `cols` f32, all inside
                // the `m x n` rectangle below `whole_end`.
                unsafe { kernel(&t) };
                out = out.wrapping_add(cols);
                col += cols;
            }
            rhs_tile = rhs_tile.wrapping_add(layout.rhs_stride);
        }
        t.out = scratch.as_mut_ptr().cast();
        t.out_stride = O::SIZE * cols;
        while col < n {
            let rhs_tile = args.rhs_packed.wrapping_add(col / nr * layout.rhs_stride);
            let o = steps[col % nr / cols];
            t.rhs = rhs_tile.wrapping_add(o[0]);
            t.scales = rhs_tile.wrapping_add(o[1]);
            t.extras = rhs_tile.wrapping_add(o[2]);
            // SAFETY: as above, but the kernel writes inside `scratch`
            // (`4 * tiles * cols <= GEMM_MR * MAX_TILES * MAX_COLS`, checked above).
            unsafe { kernel(&t) };
            let ncols = cols.min(n - col);
            // SAFETY: rows `row0..row0 + rows <= m`, columns `col..col + ncols <= n`: inside
            // the rectangle the caller made writable, disjoint from `scratch`.
            unsafe { copy_out(&scratch, cols, rows, ncols, out, args.dst_stride_row) };
            out = out.wrapping_add(cols);
            col += cols;
        }
        tile0 += tiles;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_fits_only_the_layouts_the_driver_walks() {
        // The asm tiers' tables: 4-row LHS tiles, 4 or 8 columns per tile function.
        for (nr, cols) in [(4, 4), (8, 4), (8, 8), (16, 4), (16, 8)] {
            assert!(gemm_fits(GEMM_MR, nr, cols), "nr {nr}, cols {cols}");
        }
        // Another LHS tile height, a step straddling two RHS tiles, more steps than the
        // offsets table holds, a tile wider than the scratch tile, no columns.
        assert!(!gemm_fits(8, 8, 4));
        assert!(!gemm_fits(GEMM_MR, 12, 8));
        assert!(!gemm_fits(GEMM_MR, 4 * (MAX_STEPS + 1), 4));
        assert!(!gemm_fits(GEMM_MR, 16, 16));
        assert!(!gemm_fits(GEMM_MR, 8, 0));
    }
}
