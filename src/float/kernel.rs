//! Float families, their packed formats, kernels and the validated run path.

use core::fmt;
use core::marker::PhantomData;

use crate::cpu::{CpuFeatures, Feature};
use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};
use crate::matmul::{MatmulArgs, Tier};

/// A packed RHS format of the float families (float.md §3): tiles of `nr` columns, each the
/// `nr` biases followed by the values, depth padded to a multiple of `kr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RhsFormat {
    /// The spec's name (`"f32p16"`, `"bf16p12_b32"`, ...).
    pub name: &'static str,
    /// Columns per tile.
    pub nr: usize,
    /// Depths per column and block: 1 (values copied), 4 (bf16 blocks).
    pub kr: usize,
    /// Bytes per packed value: 4 (f32) or 2 (f16, bf16).
    pub value_size: usize,
    /// Bytes per bias: 4 (f32) or 2 (f16).
    pub bias_size: usize,
}

impl RhsFormat {
    /// `roundup(k, kr)`: the packed depth.
    pub const fn padded_depth(&self, k: usize) -> usize {
        k.div_ceil(self.kr) * self.kr
    }

    /// Bytes of one tile: `nr * (bias_size + roundup(k, kr) * value_size)`.
    pub fn tile_stride(&self, k: usize) -> Result<usize> {
        check_k(k)?;
        self.padded_depth(k)
            .checked_mul(self.value_size)
            .and_then(|v| v.checked_add(self.bias_size))
            .and_then(|v| v.checked_mul(self.nr))
            .ok_or(Error::SizeOverflow)
    }

    /// Bytes of a packed RHS of `n` columns: `ceil(n / nr)` tiles.
    pub fn packed_size(&self, n: usize, k: usize) -> Result<usize> {
        n.div_ceil(self.nr).checked_mul(self.tile_stride(k)?).ok_or(Error::SizeOverflow)
    }

    /// Byte offset of the tile holding column `n_idx` (a multiple of `nr`).
    pub fn packed_offset(&self, n_idx: usize, k: usize) -> Result<usize> {
        if !n_idx.is_multiple_of(self.nr) {
            return Err(Error::MisalignedStart { dim: Dim::NIdx, value: n_idx, step: self.nr });
        }
        (n_idx / self.nr).checked_mul(self.tile_stride(k)?).ok_or(Error::SizeOverflow)
    }
}

/// A packed LHS format of the bf16 families (float.md §4): tiles of `mr` rows, the depth padded
/// to a multiple of 4 and stored in blocks of 4 depths per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LhsFormat {
    /// The spec's name (`"bf16p1x4"`, `"bf16p8x4"`).
    pub name: &'static str,
    /// Rows per tile.
    pub mr: usize,
    /// Whether the last `k % 4` values of a row are truncated to bf16 instead of rounded
    /// (`bf16p1x4`, float.md §4.1).
    pub tail_truncated: bool,
}

impl LhsFormat {
    /// Depths per block.
    pub const KR: usize = 4;

    /// Bytes of one tile: `mr * roundup(k, 4) * 2`.
    pub fn tile_stride(&self, k: usize) -> Result<usize> {
        check_k(k)?;
        k.div_ceil(Self::KR).checked_mul(Self::KR * 2 * self.mr).ok_or(Error::SizeOverflow)
    }

    /// Bytes of a packed LHS of `m` rows: `ceil(m / mr)` tiles.
    pub fn packed_size(&self, m: usize, k: usize) -> Result<usize> {
        m.div_ceil(self.mr).checked_mul(self.tile_stride(k)?).ok_or(Error::SizeOverflow)
    }

    /// Byte offset of the tile holding row `m_idx` (a multiple of `mr`).
    pub fn packed_offset(&self, m_idx: usize, k: usize) -> Result<usize> {
        if !m_idx.is_multiple_of(self.mr) {
            return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: self.mr });
        }
        (m_idx / self.mr).checked_mul(self.tile_stride(k)?).ok_or(Error::SizeOverflow)
    }
}

fn check_k(k: usize) -> Result<()> {
    if k == 0 { Err(Error::ZeroDim { dim: Dim::K }) } else { Ok(()) }
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A float kernel family (float.md §2). Implemented by the marker types of the family modules.
pub trait FloatFamily: sealed::Sealed + Sized + 'static {
    /// Family name (`"f32_f32_f32p"`).
    const NAME: &'static str;
    /// What the kernels read as LHS: the f32 or f16 rows themselves (unpacked families), or
    /// the bytes of a packed bf16 LHS (`u8`).
    type Lhs: Copy + 'static;
    /// Output element type.
    type Dst: Element;
    /// Whether the kernels read a packed bf16 LHS (bytes) rather than the f32/f16 rows
    /// themselves.
    const LHS_PACKED: bool;

    /// The family's kernels, best first.
    fn kernels() -> &'static [&'static FloatKernel<Self>];
}

/// Raw arguments of a float kernel's `unsafe` entry (KleidiAI's `run_matmul`).
#[derive(Debug)]
pub struct FloatArgs<L, O> {
    /// Rows of the rectangle (`>= 1`).
    pub m: usize,
    /// Columns of the rectangle (`>= 1`).
    pub n: usize,
    /// Depth (`>= 1`).
    pub k: usize,
    /// Unpacked LHS: the rectangle's first row. Packed LHS: the tile holding it.
    pub lhs: *const L,
    /// Bytes from one LHS row to the next (unpacked), ignored for a packed LHS.
    pub lhs_stride_row: usize,
    /// The packed RHS tile holding the rectangle's first column.
    pub rhs_packed: *const u8,
    /// Output element `(m_idx, n_idx)`.
    pub dst: *mut O,
    /// Output row stride in bytes (a multiple of the element size, `>= n` elements).
    pub dst_stride_row: usize,
    /// Clamp lower bound.
    pub clamp_min: f32,
    /// Clamp upper bound.
    pub clamp_max: f32,
}

impl<L, O> Clone for FloatArgs<L, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<L, O> Copy for FloatArgs<L, O> {}

/// The shapes a kernel's entry gets besides the arguments: its formats and the call's tile
/// strides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tiles {
    /// LHS rows per tile (1 for an unpacked LHS).
    pub(crate) mr: usize,
    /// Bytes per packed LHS tile (0 for an unpacked LHS).
    pub(crate) lhs_tile: usize,
    /// RHS columns per tile.
    pub(crate) nr: usize,
    /// Bytes per packed RHS tile.
    pub(crate) rhs_tile: usize,
}

/// A tier's raw entry point.
pub(crate) type RawFloatKernel<F> = unsafe fn(&Tiles, &FloatArgs<<F as FloatFamily>::Lhs, <F as FloatFamily>::Dst>);

/// One float micro-kernel: a tile, an ISA tier and the formats it consumes.
pub struct FloatKernel<F: FloatFamily> {
    pub(crate) name: &'static str,
    pub(crate) tier: Tier,
    pub(crate) m_step: usize,
    pub(crate) n_step: usize,
    pub(crate) lhs: Option<LhsFormat>,
    pub(crate) rhs: RhsFormat,
    pub(crate) raw: RawFloatKernel<F>,
    pub(crate) family: PhantomData<fn() -> F>,
}

impl<F: FloatFamily> fmt::Debug for FloatKernel<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FloatKernel")
            .field("name", &self.name)
            .field("tier", &self.tier)
            .field("m_step", &self.m_step)
            .field("n_step", &self.n_step)
            .field("lhs", &self.lhs)
            .field("rhs", &self.rhs)
            .finish()
    }
}

impl<F: FloatFamily> FloatKernel<F> {
    /// A catalogue entry.
    pub(crate) const fn new(
        name: &'static str,
        tier: Tier,
        (m_step, n_step): (usize, usize),
        lhs: Option<LhsFormat>,
        rhs: RhsFormat,
        raw: RawFloatKernel<F>,
    ) -> FloatKernel<F> {
        FloatKernel { name, tier, m_step, n_step, lhs, rhs, raw, family: PhantomData }
    }

    /// Full name, KleidiAI style (`matmul_clamp_f32_f32_f32p16x1b_6x16_neon_mla`).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// ISA tier.
    pub const fn tier(&self) -> Tier {
        self.tier
    }

    /// Output rows per kernel iteration; sub-rectangles start at multiples of it.
    pub const fn m_step(&self) -> usize {
        self.m_step
    }

    /// Output columns per kernel iteration; sub-rectangles start at multiples of it.
    pub const fn n_step(&self) -> usize {
        self.n_step
    }

    /// The packed LHS format, `None` for the kernels that read the LHS rows unpacked.
    pub const fn lhs_format(&self) -> Option<LhsFormat> {
        self.lhs
    }

    /// The packed RHS format.
    pub const fn rhs_format(&self) -> RhsFormat {
        self.rhs
    }

    /// The first feature the kernel needs that `cpu` lacks, or `None` when it may run.
    pub const fn missing_feature(&self, cpu: &CpuFeatures) -> Option<Feature> {
        let Some(tier) = self.tier.required_feature() else {
            return None;
        };
        if !cpu.has(Feature::Neon) {
            return Some(Feature::Neon);
        }
        if !cpu.has(tier) { Some(tier) } else { None }
    }

    /// Whether the kernel may run on `cpu`.
    pub const fn is_available(&self, cpu: &CpuFeatures) -> bool {
        self.missing_feature(cpu).is_none()
    }

    /// Element offset of output `(m_idx, n_idx)` with `dst_stride_row` elements per row; the
    /// start must be a multiple of `(m_step, n_step)`.
    pub fn dst_offset(&self, m_idx: usize, n_idx: usize, dst_stride_row: usize) -> Result<usize> {
        self.check_starts(m_idx, n_idx)?;
        m_idx.checked_mul(dst_stride_row).and_then(|v| v.checked_add(n_idx)).ok_or(Error::SizeOverflow)
    }

    fn check_starts(&self, m_idx: usize, n_idx: usize) -> Result<()> {
        if !m_idx.is_multiple_of(self.m_step) {
            return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: self.m_step });
        }
        if !n_idx.is_multiple_of(self.n_step) {
            return Err(Error::MisalignedStart { dim: Dim::NIdx, value: n_idx, step: self.n_step });
        }
        Ok(())
    }

    fn tiles(&self, k: usize) -> Result<Tiles> {
        let (mr, lhs_tile) = match self.lhs {
            Some(f) => (f.mr, f.tile_stride(k)?),
            None => (1, 0),
        };
        Ok(Tiles { mr, lhs_tile, nr: self.rhs.nr, rhs_tile: self.rhs.tile_stride(k)? })
    }

    /// Computes the rectangle `args` describes.
    ///
    /// * `lhs`: unpacked families: the whole f32/f16 LHS from row 0, row `i` at element
    ///   `i * args.lhs_stride_row` (`>= k`). Packed families: the whole packed LHS (row 0
    ///   onward) in [`FloatKernel::lhs_format`].
    /// * `rhs_packed`: the whole packed RHS (column 0 onward) in [`FloatKernel::rhs_format`].
    /// * `dst`: starts at output element `(m_idx, n_idx)` and holds `(m - 1) * dst_stride_row +
    ///   n` elements. Exactly the `m x n` rectangle is written.
    ///
    /// Any `m` is accepted (the 1-row BFDOT kernel loops over the rows); `m == 0` or `n == 0`
    /// is a no-op; `args.bl` must be 0. Any grid of legal sub-rectangles gives the same bits as
    /// one call.
    pub fn run(
        &self,
        cpu: &CpuFeatures,
        lhs: &[F::Lhs],
        rhs_packed: &[u8],
        dst: &mut [F::Dst],
        args: &MatmulArgs,
    ) -> Result<()> {
        if let Some(needs) = self.missing_feature(cpu) {
            return Err(Error::UnsupportedCpu { needs });
        }
        check_k(args.k)?;
        if args.bl != 0 {
            return Err(Error::Unsupported { param: Param::BlockLen, value: args.bl });
        }
        self.check_starts(args.m_idx, args.n_idx)?;
        let (m, n, k) = (args.m, args.n, args.k);
        if m == 0 || n == 0 {
            return Ok(());
        }
        if args.dst_stride_row < n {
            return Err(Error::StrideTooSmall { stride: Stride::Dst, given: args.dst_stride_row, needed: n });
        }
        let tiles = self.tiles(k)?;
        let overflow = Error::SizeOverflow;
        let end = |start: usize, count: usize, step: usize, stride: usize| {
            (start / step).checked_add(count.div_ceil(step)).and_then(|t| t.checked_mul(stride)).ok_or(overflow)
        };
        let (lhs_start, lhs_stride_bytes) = if F::LHS_PACKED {
            let needed = end(args.m_idx, m, tiles.mr, tiles.lhs_tile)?;
            if lhs.len() < needed {
                return Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: lhs.len(), needed });
            }
            (end(args.m_idx, 0, tiles.mr, tiles.lhs_tile)?, 0)
        } else {
            let stride = args.lhs_stride_row;
            if stride < k {
                return Err(Error::StrideTooSmall { stride: Stride::Lhs, given: stride, needed: k });
            }
            let start = args.m_idx.checked_mul(stride).ok_or(overflow)?;
            let needed = (m - 1).checked_mul(stride).and_then(|v| v.checked_add(start)).and_then(|v| v.checked_add(k));
            let needed = needed.ok_or(overflow)?;
            if lhs.len() < needed {
                return Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: lhs.len(), needed });
            }
            (start, stride.checked_mul(core::mem::size_of::<F::Lhs>()).ok_or(overflow)?)
        };
        let rhs_needed = end(args.n_idx, n, tiles.nr, tiles.rhs_tile)?;
        if rhs_packed.len() < rhs_needed {
            return Err(Error::BufferTooShort {
                buffer: Buffer::RhsPacked,
                given: rhs_packed.len(),
                needed: rhs_needed,
            });
        }
        let rhs_start = end(args.n_idx, 0, tiles.nr, tiles.rhs_tile)?;
        let dst_needed = (m - 1).checked_mul(args.dst_stride_row).and_then(|v| v.checked_add(n)).ok_or(overflow)?;
        if dst.len() < dst_needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Dst, given: dst.len(), needed: dst_needed });
        }
        let raw = FloatArgs {
            m,
            n,
            k,
            lhs: lhs[lhs_start..].as_ptr(),
            lhs_stride_row: lhs_stride_bytes,
            rhs_packed: rhs_packed[rhs_start..].as_ptr(),
            dst: dst.as_mut_ptr(),
            dst_stride_row: args.dst_stride_row.checked_mul(F::Dst::SIZE).ok_or(overflow)?,
            clamp_min: args.clamp.min(),
            clamp_max: args.clamp.max(),
        };
        // SAFETY: the tier's feature is present (checked above); the LHS slice from
        // `lhs_start` holds the `m` rows (unpacked, `lhs_stride_bytes` apart, each `k` elements)
        // or the `ceil(m / mr)` tiles (packed) of this `k`; the RHS slice from `rhs_start` holds
        // `ceil(n / nr)` tiles of `tiles.rhs_tile` bytes; `dst` holds `(m - 1) * stride + n`
        // elements and, being a `&mut`, overlaps neither input. The clamp is a valid `Clamp`.
        unsafe { (self.raw)(&tiles, &raw) };
        Ok(())
    }

    /// Runs the kernel on raw pointers without checking the buffers (KleidiAI's `run_matmul`,
    /// with any `m`).
    ///
    /// # Safety
    ///
    /// * The CPU has the kernel's feature ([`FloatKernel::is_available`]).
    /// * `m, n, k >= 1`.
    /// * Unpacked LHS: `lhs` is valid for reads of `k` elements at each of the `m` rows
    ///   `lhs + i * lhs_stride_row` bytes. Packed LHS: of `ceil(m / mr)` tiles of the kernel's
    ///   LHS format for this `k`.
    /// * `rhs_packed` is valid for reads of `ceil(n / nr)` tiles of the kernel's RHS format.
    /// * `dst` is valid for writes of `n` elements at each of the `m` rows `dst + i *
    ///   dst_stride_row` bytes (a multiple of the element size, `>= n` elements), not
    ///   overlapping the inputs.
    /// * `clamp_min <= clamp_max`, neither NaN.
    pub unsafe fn run_unchecked(&self, args: &FloatArgs<F::Lhs, F::Dst>) {
        let Ok(tiles) = self.tiles(args.k) else {
            return;
        };
        // SAFETY: forwarded from the caller's contract, with the kernel's formats for `k`.
        unsafe { (self.raw)(&tiles, args) }
    }
}

/// The best kernel of `F` that runs on `cpu` and consumes `rhs` and `lhs`; every format pair has
/// a scalar kernel, so there always is one (the family's last kernel otherwise, never reached).
pub(crate) fn select_for<F: FloatFamily>(
    cpu: &CpuFeatures,
    rhs: &RhsFormat,
    lhs: Option<LhsFormat>,
) -> &'static FloatKernel<F> {
    let ks = F::kernels();
    ks.iter().copied().find(|k| k.is_available(cpu) && k.rhs == *rhs && k.lhs == lhs).unwrap_or(ks[ks.len() - 1])
}

/// The family's kernels that run on `cpu`, best first.
pub(crate) fn available<F: FloatFamily>(cpu: &CpuFeatures) -> impl Iterator<Item = &'static FloatKernel<F>> + '_ {
    F::kernels().iter().copied().filter(move |k| k.is_available(cpu))
}
