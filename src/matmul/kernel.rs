//! Families, kernels and the validated run path.

use core::fmt;
use core::marker::PhantomData;

use crate::cpu::{CpuFeatures, Feature};
use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};
use crate::matmul::{MatmulArgs, Tier, UncheckedArgs};
use crate::packing::Packing;

/// The byte strides of the packed LHS and RHS tiles of one call: the single source every tier
/// uses to step from tile to tile. [`Kernel::run`] computes it once, with the family's checked
/// formulas ([`Family::lhs_tile_stride`], [`Family::rhs_tile_stride`], the packers' own), checks
/// the buffers against it, and hands it to the tier; no tier has a stride formula of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileStrides {
    /// Bytes of one packed LHS tile (`mr` rows).
    pub(crate) lhs: usize,
    /// Bytes of one packed RHS tile (`nr` columns).
    pub(crate) rhs: usize,
}

/// A tier's raw entry point: the raw arguments (outputs of type `O`) and the call's
/// [`TileStrides`].
pub(crate) enum RawKernel<O> {
    /// Fixed packing (SIMD kernels, aarch64 only).
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    Fixed(unsafe fn(&UncheckedArgs<O>, &TileStrides)),
    /// Any packing (the scalar reference).
    Generic(unsafe fn(&Packing, &UncheckedArgs<O>, &TileStrides)),
}

impl<O> Clone for RawKernel<O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O> Copy for RawKernel<O> {}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A pair of packed operand formats (a kernel family). Implemented by the marker types of the
/// family modules; not implementable outside the crate.
pub trait Family: sealed::Sealed + Sized + 'static {
    /// Family name, KleidiAI's spelling (`"qai8dxp_qsi4cxp"`).
    const NAME: &'static str;
    /// Whether `run` takes a block length (`bl`).
    const BLOCKED: bool;
    /// `k` must be a multiple of this: 32 for `qai8dxp_qsu2cxp`, 1 for the other families
    /// (whose per-channel formats pad `k`, and whose per-block ones need `k % bl == 0`).
    const K_MULTIPLE: usize = 1;
    /// Whether the kernels take a look-up table ([`MatmulArgs::lut`]), which [`Kernel::run`]
    /// then checks: `qai8dxp_qsu2cxp`.
    const TAKES_LUT: bool = false;
    /// The output element type: `f32`, or [`half::f16`] / [`half::bf16`] for the families
    /// named `f16_...` / `bf16_...`.
    type Dst: Element;

    /// The family's kernel catalogue, best first within each packing.
    fn kernels() -> &'static [&'static Kernel<Self>];

    /// Bytes of one packed LHS tile.
    fn lhs_tile_stride(k: usize, bl: usize, packing: &Packing) -> Result<usize>;

    /// Bytes of one packed RHS tile.
    fn rhs_tile_stride(k: usize, bl: usize, packing: &Packing) -> Result<usize>;
}

/// One micro-kernel: a tile, an ISA tier and the packing it consumes.
///
/// Kernels are stateless `'static` descriptors taken from a family's catalogue
/// (`qgemm::qai8dxp_qsi4cxp::KERNELS`, `select`, `available`).
pub struct Kernel<F: Family> {
    pub(crate) name: &'static str,
    pub(crate) tier: Tier,
    pub(crate) m_step: usize,
    pub(crate) n_step: usize,
    pub(crate) packing: Packing,
    pub(crate) extra: Option<Feature>,
    pub(crate) raw: RawKernel<F::Dst>,
    pub(crate) family: PhantomData<fn() -> F>,
}

impl<F: Family> fmt::Debug for Kernel<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("tier", &self.tier)
            .field("m_step", &self.m_step)
            .field("n_step", &self.n_step)
            .field("packing", &self.packing)
            .field("extra_feature", &self.extra)
            .finish()
    }
}

impl<F: Family> Kernel<F> {
    /// A catalogue entry (used by the family modules).
    pub(crate) const fn new(
        name: &'static str,
        tier: Tier,
        (m_step, n_step): (usize, usize),
        packing: Packing,
        raw: RawKernel<F::Dst>,
    ) -> Kernel<F> {
        Kernel { name, tier, m_step, n_step, packing, extra: None, raw, family: PhantomData }
    }

    /// The same kernel needing `feature` beyond its tier's (a catalogue constructor).
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    pub(crate) const fn needing(mut self, feature: Feature) -> Kernel<F> {
        self.extra = Some(feature);
        self
    }

    /// Full name, KleidiAI style (`matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm`).
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

    /// The packing both operands must be packed with.
    pub const fn packing(&self) -> Packing {
        self.packing
    }

    /// A feature the kernel needs beyond its tier's: FEAT_BF16 for the i8mm kernels of the
    /// `bf16_` families, which round their outputs with `BFCVTN` (every other tier rounds to
    /// bf16 with integer operations and needs nothing more). `None` for every other kernel.
    pub const fn extra_feature(&self) -> Option<Feature> {
        self.extra
    }

    /// The first feature the kernel needs that `cpu` lacks (NEON, then the tier's, then
    /// [`Kernel::extra_feature`]), or `None` when it may run.
    pub const fn missing_feature(&self, cpu: &CpuFeatures) -> Option<Feature> {
        let Some(tier) = self.tier.required_feature() else {
            return None;
        };
        if !cpu.has(Feature::Neon) {
            return Some(Feature::Neon);
        }
        if !cpu.has(tier) {
            return Some(tier);
        }
        match self.extra {
            Some(f) if !cpu.has(f) => Some(f),
            _ => None,
        }
    }

    /// Whether the kernel may run on `cpu` (its tier and [`Kernel::extra_feature`]).
    pub const fn is_available(&self, cpu: &CpuFeatures) -> bool {
        self.missing_feature(cpu).is_none()
    }

    /// The tile strides of a call with depth `k` and block length `bl` (the family's checked
    /// formulas, the single source of every tier's tile stepping).
    pub(crate) fn strides(&self, k: usize, bl: usize) -> Result<TileStrides> {
        Ok(TileStrides {
            lhs: F::lhs_tile_stride(k, bl, &self.packing)?,
            rhs: F::rhs_tile_stride(k, bl, &self.packing)?,
        })
    }

    /// Byte offset, in the packed LHS, of the tile holding row `m_idx` (a multiple of `mr`).
    /// Rejects a `k` or `bl` that [`Kernel::run`] rejects, with the same error.
    pub fn lhs_packed_offset(&self, m_idx: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        if !m_idx.is_multiple_of(self.packing.mr) {
            return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: self.packing.mr });
        }
        let ts = F::lhs_tile_stride(k, bl, &self.packing)?;
        (m_idx / self.packing.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Byte offset, in the packed RHS, of the tile holding column `n_idx` (a multiple of `nr`).
    /// Rejects a `k` or `bl` that [`Kernel::run`] rejects, with the same error.
    pub fn rhs_packed_offset(&self, n_idx: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        self.packing.check_n_start(n_idx)?;
        let ts = F::rhs_tile_stride(k, bl, &self.packing)?;
        (n_idx / self.packing.nr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Bytes of the packed LHS for `m` rows. Rejects a `k` or `bl` that [`Kernel::run`]
    /// rejects (for a per-channel family any `bl` but 0), with the same error.
    pub fn lhs_packed_size(&self, m: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        let ts = F::lhs_tile_stride(k, bl, &self.packing)?;
        m.div_ceil(self.packing.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Bytes of the packed RHS for `n` columns. Rejects a `k` or `bl` that [`Kernel::run`]
    /// rejects (for a per-channel family any `bl` but 0), with the same error.
    pub fn rhs_packed_size(&self, n: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        let ts = F::rhs_tile_stride(k, bl, &self.packing)?;
        n.div_ceil(self.packing.nr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Element offset of output `(m_idx, n_idx)` with `dst_stride_row` elements per row; the
    /// start must be a multiple of `(m_step, n_step)`.
    pub fn dst_offset(&self, m_idx: usize, n_idx: usize, dst_stride_row: usize) -> Result<usize> {
        self.check_starts(m_idx, n_idx)?;
        m_idx.checked_mul(dst_stride_row).and_then(|v| v.checked_add(n_idx)).ok_or(Error::SizeOverflow)
    }

    /// Elements of a dense `m x n` output.
    pub fn dst_size(&self, m: usize, n: usize) -> Result<usize> {
        m.checked_mul(n).ok_or(Error::SizeOverflow)
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

    /// `k >= 1`, and `bl` legal for the family ([`check_depth`]).
    pub(crate) fn check_depth(&self, k: usize, bl: usize) -> Result<()> {
        check_depth::<F>(k, bl)
    }

    /// Computes the rectangle `args` describes.
    ///
    /// * `lhs_packed`: the whole packed LHS (row 0 onward), packed with [`Kernel::packing`].
    /// * `rhs_packed`: the whole packed RHS (column 0 onward), packed with [`Kernel::packing`].
    /// * `dst`: starts at output element `(m_idx, n_idx)` (see [`Kernel::dst_offset`]) and holds
    ///   `(m - 1) * dst_stride_row + n` elements of the family's output type
    ///   ([`Family::Dst`]). Exactly the `m x n` rectangle is written.
    ///
    /// `m == 0` or `n == 0` is a no-op. Any grid of legal sub-rectangles gives the same bits
    /// as one call over the whole output. For a family that takes a look-up table
    /// ([`Family::TAKES_LUT`]) every entry of [`MatmulArgs::lut`] must lie in `[-64, 63]`
    /// ([`Error::LutOutOfRange`]); the other families ignore it.
    pub fn run(
        &self,
        cpu: &CpuFeatures,
        lhs_packed: &[u8],
        rhs_packed: &[u8],
        dst: &mut [F::Dst],
        args: &MatmulArgs,
    ) -> Result<()> {
        if let Some(needs) = self.missing_feature(cpu) {
            return Err(Error::UnsupportedCpu { needs });
        }
        self.check_depth(args.k, args.bl)?;
        if F::TAKES_LUT {
            crate::rhs::qsu2cxp::check_lut(&args.lut)?;
        }
        self.check_starts(args.m_idx, args.n_idx)?;
        let (m, n) = (args.m, args.n);
        if m == 0 || n == 0 {
            return Ok(());
        }
        if args.dst_stride_row < n {
            return Err(Error::StrideTooSmall { stride: Stride::Dst, given: args.dst_stride_row, needed: n });
        }
        // The call's tile strides, computed once: every offset and size below and every tier
        // step from tile to tile with these.
        let strides = self.strides(args.k, args.bl)?;
        let (mr, nr) = (self.packing.mr, self.packing.nr);
        if !args.m_idx.is_multiple_of(mr) {
            return Err(Error::MisalignedStart { dim: Dim::MIdx, value: args.m_idx, step: mr });
        }
        self.packing.check_n_start(args.n_idx)?;
        let tiles = |start: usize, count: usize, step: usize, stride: usize| {
            (start / step)
                .checked_add(count.div_ceil(step))
                .and_then(|t| t.checked_mul(stride))
                .ok_or(Error::SizeOverflow)
        };
        let lhs_start = tiles(args.m_idx, 0, mr, strides.lhs)?;
        let lhs_needed = tiles(args.m_idx, m, mr, strides.lhs)?;
        if lhs_packed.len() < lhs_needed {
            return Err(Error::BufferTooShort {
                buffer: Buffer::LhsPacked,
                given: lhs_packed.len(),
                needed: lhs_needed,
            });
        }
        let rhs_start = tiles(args.n_idx, 0, nr, strides.rhs)?;
        let rhs_needed = tiles(args.n_idx, n, nr, strides.rhs)?;
        if rhs_packed.len() < rhs_needed {
            return Err(Error::BufferTooShort {
                buffer: Buffer::RhsPacked,
                given: rhs_packed.len(),
                needed: rhs_needed,
            });
        }
        let dst_needed = (m - 1).checked_mul(args.dst_stride_row).and_then(|v| v.checked_add(n));
        let dst_needed = dst_needed.ok_or(Error::SizeOverflow)?;
        if dst.len() < dst_needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Dst, given: dst.len(), needed: dst_needed });
        }
        let dst_stride_bytes = args.dst_stride_row.checked_mul(F::Dst::SIZE).ok_or(Error::SizeOverflow)?;
        let raw = UncheckedArgs {
            m,
            n,
            k: args.k,
            bl: args.bl,
            lhs_packed: lhs_packed[lhs_start..].as_ptr(),
            rhs_packed: rhs_packed[rhs_start..].as_ptr(),
            dst: dst.as_mut_ptr(),
            dst_stride_row: dst_stride_bytes,
            clamp_min: args.clamp.min(),
            clamp_max: args.clamp.max(),
            lut: args.lut,
        };
        // SAFETY: the tier's feature is present (checked above). The LHS slice from `lhs_start`
        // holds `ceil(m/mr)` whole tiles, the RHS slice from `rhs_start` `ceil(n/nr)` whole
        // tiles, and `dst` holds `(m-1)*stride + n` elements: exactly what `run_unchecked`
        // reads and writes, with the `strides` the checks used. `k`, `bl`, `m`, `n` (and the
        // table, where the family takes one) were validated and the clamp is a valid `Clamp`.
        unsafe { self.call(&raw, &strides) }
        Ok(())
    }

    /// Runs the kernel on raw pointers without checking the buffers (KleidiAI's `run_matmul`).
    /// It computes the tile strides from `k` and `bl` with the family's checked formulas, as
    /// [`Kernel::run`] does; a `k`/`bl` those reject (outside the contract below) makes the
    /// call a no-op instead of a guess.
    ///
    /// # Safety
    ///
    /// * The CPU implements the kernel's tier ([`Kernel::is_available`]).
    /// * `m, n, k >= 1`, `k` a multiple of [`Family::K_MULTIPLE`]; for per-block families `bl`
    ///   is a multiple of 32 that divides `k`, for the others `bl == 0`.
    /// * `lhs_packed` is valid for reads of `ceil(m / mr)` packed LHS tiles and `rhs_packed` of
    ///   `ceil(n / nr)` packed RHS tiles ([`Kernel::lhs_packed_size`],
    ///   [`Kernel::rhs_packed_size`]), both packed with [`Kernel::packing`] and this `k` (`bl`).
    /// * `dst` is valid for writes of `n` output elements ([`Family::Dst`]) at each of the `m`
    ///   rows `dst + i * dst_stride_row` bytes (`dst_stride_row` a multiple of the element size
    ///   and `>= n` elements), and those elements do not overlap the packed buffers.
    /// * `clamp_min <= clamp_max`, neither NaN.
    ///
    /// The look-up table ([`UncheckedArgs::lut`]) is not checked: its entries are narrowed to
    /// int8, as KleidiAI's kernels do.
    pub unsafe fn run_unchecked(&self, args: &UncheckedArgs<F::Dst>) {
        // Buffers of these tiles exist (caller's contract), so the strides cannot overflow.
        let Ok(strides) = self.strides(args.k, args.bl) else {
            return;
        };
        // SAFETY: forwarded from the caller's contract, with the family's strides for `k`, `bl`.
        unsafe { self.call(args, &strides) }
    }

    /// Runs the tier's entry with the call's tile strides.
    ///
    /// # Safety
    ///
    /// [`Kernel::run_unchecked`]'s contract, and `strides` is [`Kernel::strides`] of `args.k`,
    /// `args.bl`.
    unsafe fn call(&self, args: &UncheckedArgs<F::Dst>, strides: &TileStrides) {
        match self.raw {
            // SAFETY: forwarded from the caller's contract.
            RawKernel::Fixed(f) => unsafe { f(args, strides) },
            // SAFETY: forwarded from the caller's contract; the packing is the kernel's own.
            RawKernel::Generic(f) => unsafe { f(&self.packing, args, strides) },
        }
    }
}

/// `k >= 1` (a multiple of [`Family::K_MULTIPLE`]), and `bl` legal for the family: 0 for the
/// per-channel ones, a multiple of 32 dividing `k` for the per-block ones.
pub(crate) fn check_depth<F: Family>(k: usize, bl: usize) -> Result<()> {
    if k == 0 {
        return Err(Error::ZeroDim { dim: Dim::K });
    }
    if !F::BLOCKED {
        if bl != 0 {
            return Err(Error::Unsupported { param: Param::BlockLen, value: bl });
        }
        if !k.is_multiple_of(F::K_MULTIPLE) {
            return Err(Error::NotMultiple { dim: Dim::K, value: k, multiple_of: F::K_MULTIPLE });
        }
        return Ok(());
    }
    if bl == 0 {
        return Err(Error::ZeroDim { dim: Dim::BlockLen });
    }
    if !bl.is_multiple_of(32) {
        return Err(Error::NotMultiple { dim: Dim::BlockLen, value: bl, multiple_of: 32 });
    }
    if !k.is_multiple_of(bl) {
        return Err(Error::NotMultiple { dim: Dim::K, value: k, multiple_of: bl });
    }
    Ok(())
}
