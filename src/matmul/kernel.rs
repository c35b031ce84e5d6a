//! Families, kernel descriptors, resolved kernels and the validated run path: one model for
//! every family, quantized or float.

use core::fmt;
use core::marker::PhantomData;

use crate::cpu::{CpuFeatures, Feature, FeatureSet};
use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};
use crate::matmul::{MatmulArgs, Params, Tier, UncheckedArgs};
use crate::packing::{LhsPacking, Packing, RhsPacking, Shape};

/// The byte strides of the packed LHS and RHS tiles of one call: the single source every tier
/// uses to step from tile to tile. [`Kernel::run`] computes it once, with the formats' checked
/// formulas ([`LhsPacking::tile_stride`], [`RhsPacking::tile_stride`], the packers' own), checks
/// the buffers against it, and hands it to the tier; no tier has a stride formula of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileStrides {
    /// Bytes of one packed LHS tile (`mr` rows; 0 for an LHS read in place).
    pub(crate) lhs: usize,
    /// Bytes of one packed RHS tile (`nr` columns).
    pub(crate) rhs: usize,
}

/// A kernel's raw entry point, the one calling convention of every tier: the resolved packing,
/// the raw arguments and the call's [`TileStrides`].
pub(crate) type RawFn<F> = unsafe fn(&Packing, &UncheckedArgs<<F as Family>::Dst, <F as Family>::Params>, &TileStrides);

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A kernel family: a pair of operand formats and the arithmetic that combines them.
/// Implemented by the marker types of the family modules (quantized and float alike); not
/// implementable outside the crate.
pub trait Family: sealed::Sealed + Sized + 'static {
    /// Family name, KleidiAI's spelling (`"qai8dxp_qsi4cxp"`, `"f32_f32_f32p"`).
    const NAME: &'static str;
    /// Whether `run` takes a block length (`bl`).
    const BLOCKED: bool;
    /// `k` must be a multiple of this: 32 for `qai8dxp_qsu2cxp`, 1 for the other families
    /// (whose per-channel formats pad `k`, and whose per-block ones need `k % bl == 0`).
    const K_MULTIPLE: usize = 1;
    /// What [`Kernel::run`] reads as LHS: `u8` (the bytes of a packed LHS), or the f32/f16
    /// activations themselves for the families that read the rows in place.
    type Lhs: Copy + Send + Sync + 'static;
    /// The output element type: `f32`, or [`half::f16`] / [`half::bf16`].
    type Dst: Element;
    /// The family's parameters ([`Params`]): `()`, [`Lut`](crate::matmul::Lut) or
    /// [`LhsStride`](crate::matmul::LhsStride).
    type Params: Params;
    /// The weight packing [`select`](crate::matmul::select_from) and the operator use by
    /// default: one that the family's decode and prefill kernels of every tier read.
    const PREFERRED_RHS: RhsPacking;
    /// The LHS packing `select` is restricted to (`None`: any). The bf16 float families fix
    /// `bf16p8x4`, so that a row's result does not depend on `m` (docs/kernels.md).
    const PREFERRED_LHS: Option<LhsPacking> = None;

    /// The family's kernel catalogue, best first within each packing.
    fn kernels() -> &'static [&'static Descriptor<Self>];

    /// Checks the activation rows a validated call reads in place: `m` rows of `k` elements,
    /// row `i` at `rows[i * stride..]` (only called for the families that read the rows in
    /// place; a packed LHS was checked by its packer). The float families reject non-finite
    /// values ([`Error::NonFinite`], the index into `rows`). Default: no check.
    #[doc(hidden)]
    fn check_lhs_rows(rows: &[Self::Lhs], m: usize, k: usize, stride: usize) -> Result<()> {
        let _ = (rows, m, k, stride);
        Ok(())
    }
}

/// One micro-kernel as the catalogue describes it: a name, an ISA tier, the features it
/// requires, its tile [`Shape`] (fixed, or scaled by the vector length) and its entry point.
///
/// Descriptors are stateless `'static` values from a family's catalogue
/// (`qgemm::qai8dxp_qsi4cxp::KERNELS`, each tier module's statics). To run one, resolve it for
/// a CPU ([`Descriptor::resolve`]), or let the family's `select` do it.
pub struct Descriptor<F: Family> {
    pub(crate) name: &'static str,
    pub(crate) tier: Tier,
    pub(crate) requires: FeatureSet,
    pub(crate) shape: Shape,
    pub(crate) raw: RawFn<F>,
    pub(crate) family: PhantomData<fn() -> F>,
}

impl<F: Family> fmt::Debug for Descriptor<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Descriptor")
            .field("name", &self.name)
            .field("tier", &self.tier)
            .field("requires", &self.requires)
            .field("shape", &self.shape)
            .finish()
    }
}

impl<F: Family> Descriptor<F> {
    /// A catalogue entry of the family's default formats: requires its tier's features.
    pub(crate) const fn new(name: &'static str, tier: Tier, shape: Shape, raw: RawFn<F>) -> Descriptor<F> {
        Descriptor { name, tier, requires: tier.features(), shape, raw, family: PhantomData }
    }

    /// The same kernel also requiring `feature` (a catalogue constructor).
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    pub(crate) const fn needing(mut self, feature: Feature) -> Descriptor<F> {
        self.requires = self.requires.and(feature);
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

    /// Every feature the kernel needs: its tier's, and for some kernels one more (FEAT_BF16
    /// for the i8mm kernels of the `bf16_` families, which round their outputs with `BFCVTN`).
    pub const fn requires(&self) -> FeatureSet {
        self.requires
    }

    /// The tile shape and formats, before resolution.
    pub const fn shape(&self) -> Shape {
        self.shape
    }

    /// The first feature the kernel needs that `cpu` lacks (in [`Feature::ALL`] order), or
    /// `None` when it may run.
    pub const fn missing_feature(&self, cpu: &CpuFeatures) -> Option<Feature> {
        self.requires.first_missing_in(cpu.features())
    }

    /// Whether the kernel runs on `cpu`: it has every required feature and, for a shape scaled
    /// by the vector length, a known streaming vector length.
    pub const fn is_available(&self, cpu: &CpuFeatures) -> bool {
        self.missing_feature(cpu).is_none() && self.shape.resolve(cpu).is_some()
    }

    /// The kernel's steps and packing on `cpu` (what [`Descriptor::resolve`] gives, without
    /// the feature check: for sizing buffers of a kernel another CPU runs). `None` for a shape
    /// scaled by the vector length when `cpu` has none.
    pub const fn packing_on(&self, cpu: &CpuFeatures) -> Option<Packing> {
        match self.shape.resolve(cpu) {
            Some((_, _, p)) => Some(p),
            None => None,
        }
    }

    /// The kernel resolved for `cpu`: its steps and packing on this CPU, ready to run.
    /// [`Error::UnsupportedCpu`] when `cpu` lacks a required feature,
    /// [`Error::VectorLengthUnknown`] for a shape scaled by a vector length `cpu` does not know.
    pub fn resolve(&'static self, cpu: &CpuFeatures) -> Result<Kernel<F>> {
        if let Some(needs) = self.missing_feature(cpu) {
            return Err(Error::UnsupportedCpu { needs });
        }
        let Some((m_step, n_step, packing)) = self.shape.resolve(cpu) else {
            return Err(Error::VectorLengthUnknown);
        };
        Ok(Kernel { desc: self, m_step, n_step, packing })
    }

    /// A descriptor of fixed shape that requires no feature (the scalar tier) as a kernel: it
    /// runs on every CPU. The catalogue test checks every scalar descriptor is one.
    pub(crate) const fn portable(&'static self) -> Kernel<F> {
        let (m_step, n_step, packing) = match self.shape.resolve(&CpuFeatures::NONE) {
            Some(r) => r,
            None => (1, 1, Packing { mr: 1, nr: 1, kr: 1, sr: 1 }),
        };
        Kernel { desc: self, m_step, n_step, packing }
    }
}

/// A kernel resolved for a CPU: a [`Descriptor`] with its steps and packing on that CPU. Only
/// [`Descriptor::resolve`] and the families' `select`/`available` make one, after checking the
/// CPU has the kernel's features, so holding one means it may run. Copy it freely.
pub struct Kernel<F: Family> {
    desc: &'static Descriptor<F>,
    m_step: usize,
    n_step: usize,
    packing: Packing,
}

impl<F: Family> Clone for Kernel<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Family> Copy for Kernel<F> {}

impl<F: Family> PartialEq for Kernel<F> {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self.desc, other.desc)
            && (self.m_step, self.n_step, self.packing) == (other.m_step, other.n_step, other.packing)
    }
}

impl<F: Family> Eq for Kernel<F> {}

impl<F: Family> fmt::Debug for Kernel<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.desc.name)
            .field("tier", &self.desc.tier)
            .field("m_step", &self.m_step)
            .field("n_step", &self.n_step)
            .field("packing", &self.packing)
            .finish()
    }
}

impl<F: Family> Kernel<F> {
    /// The catalogue entry.
    pub const fn descriptor(&self) -> &'static Descriptor<F> {
        self.desc
    }

    /// Full name, KleidiAI style (`matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_8x8_neon_i8mm`).
    pub const fn name(&self) -> &'static str {
        self.desc.name
    }

    /// ISA tier.
    pub const fn tier(&self) -> Tier {
        self.desc.tier
    }

    /// Every feature the kernel needs ([`Descriptor::requires`]).
    pub const fn requires(&self) -> FeatureSet {
        self.desc.requires
    }

    /// Output rows per kernel iteration; sub-rectangles start at multiples of it.
    pub const fn m_step(&self) -> usize {
        self.m_step
    }

    /// Output columns per kernel iteration; sub-rectangles start at multiples of it.
    pub const fn n_step(&self) -> usize {
        self.n_step
    }

    /// The packing parameters both operands must be packed with.
    pub const fn packing(&self) -> Packing {
        self.packing
    }

    /// The weight layout the kernel reads: its format and parameters. Weights packed in it
    /// serve exactly the kernels with an equal `rhs_packing`.
    pub const fn rhs_packing(&self) -> RhsPacking {
        self.packing.rhs(self.desc.shape.rhs)
    }

    /// The activation layout the kernel reads (`mr = 1` rows for an LHS read in place).
    pub const fn lhs_packing(&self) -> LhsPacking {
        self.packing.lhs(self.desc.shape.lhs)
    }

    /// The tile strides of a call with depth `k` and block length `bl` (the formats' checked
    /// formulas, the single source of every tier's tile stepping).
    pub(crate) fn strides(&self, k: usize, bl: usize) -> Result<TileStrides> {
        Ok(TileStrides { lhs: self.lhs_packing().tile_stride(k, bl)?, rhs: self.rhs_packing().tile_stride(k, bl)? })
    }

    /// Byte offset, in the packed LHS, of the tile holding row `m_idx` (a multiple of `mr`).
    /// Rejects a `k` or `bl` that [`Kernel::run`] rejects, with the same error. For an LHS read
    /// in place: 0 (the rows are addressed by their stride).
    pub fn lhs_packed_offset(&self, m_idx: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        if !m_idx.is_multiple_of(self.packing.mr) {
            return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: self.packing.mr });
        }
        let ts = self.lhs_packing().tile_stride(k, bl)?;
        (m_idx / self.packing.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Byte offset, in the packed RHS, of the tile holding column `n_idx` (a multiple of `nr`).
    /// Rejects a `k` or `bl` that [`Kernel::run`] rejects, with the same error.
    pub fn rhs_packed_offset(&self, n_idx: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        self.packing.check_n_start(n_idx)?;
        let ts = self.rhs_packing().tile_stride(k, bl)?;
        (n_idx / self.packing.nr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Bytes of the packed LHS for `m` rows (0 for an LHS read in place). Rejects a `k` or
    /// `bl` that [`Kernel::run`] rejects (for a per-channel family any `bl` but 0), with the
    /// same error.
    pub fn lhs_packed_size(&self, m: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        let ts = self.lhs_packing().tile_stride(k, bl)?;
        m.div_ceil(self.packing.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Bytes of the packed RHS for `n` columns. Rejects a `k` or `bl` that [`Kernel::run`]
    /// rejects (for a per-channel family any `bl` but 0), with the same error.
    pub fn rhs_packed_size(&self, n: usize, k: usize, bl: usize) -> Result<usize> {
        self.check_depth(k, bl)?;
        let ts = self.rhs_packing().tile_stride(k, bl)?;
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
    /// * `lhs`: a packed LHS ([`Family::Lhs`] `u8`): the whole packed LHS (row 0 onward), packed
    ///   with [`Kernel::packing`]. Rows read in place (f32, f16): the whole LHS from row 0, row
    ///   `i` at element `i * stride` ([`LhsStride`](crate::matmul::LhsStride), default `k`).
    /// * `rhs_packed`: the whole packed RHS (column 0 onward), packed with [`Kernel::packing`].
    /// * `dst`: starts at output element `(m_idx, n_idx)` (see [`Kernel::dst_offset`]) and holds
    ///   `(m - 1) * dst_stride_row + n` elements of the family's output type
    ///   ([`Family::Dst`]). Exactly the `m x n` rectangle is written.
    ///
    /// `m == 0` or `n == 0` is a no-op. Any grid of legal sub-rectangles gives the same bits
    /// as one call over the whole output. The family's parameters are checked
    /// ([`Params::check`]: a [`Lut`](crate::matmul::Lut) entry outside `[-64, 63]` is
    /// [`Error::LutOutOfRange`], an LHS stride below `k` [`Error::StrideTooSmall`]). Rows read
    /// in place (f32, f16) must be finite: a NaN or infinity in the `m` rows of `k` values the
    /// call reads is [`Error::NonFinite`] on [`Buffer::Lhs`] at its index in `lhs`, before
    /// anything is written.
    pub fn run(
        &self,
        lhs: &[F::Lhs],
        rhs_packed: &[u8],
        dst: &mut [F::Dst],
        args: &MatmulArgs<F::Params>,
    ) -> Result<()> {
        self.check_depth(args.k, args.bl)?;
        let params = args.params.check(args.k)?;
        self.check_starts(args.m_idx, args.n_idx)?;
        let (m, n, k) = (args.m, args.n, args.k);
        if m == 0 || n == 0 {
            return Ok(());
        }
        if args.dst_stride_row < n {
            return Err(Error::StrideTooSmall { stride: Stride::Dst, given: args.dst_stride_row, needed: n });
        }
        // The call's tile strides, computed once: every offset and size below and every tier
        // step from tile to tile with these.
        let strides = self.strides(k, args.bl)?;
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
        // The LHS, in elements of `F::Lhs`: packed tiles (bytes), or rows `stride` apart.
        let (lhs_start, lhs_needed, lhs_buffer) = match params.lhs_stride() {
            None => (tiles(args.m_idx, 0, mr, strides.lhs)?, tiles(args.m_idx, m, mr, strides.lhs)?, Buffer::LhsPacked),
            Some(stride) => {
                let start = args.m_idx.checked_mul(stride).ok_or(Error::SizeOverflow)?;
                let end = (m - 1).checked_mul(stride).and_then(|v| v.checked_add(start)).and_then(|v| v.checked_add(k));
                (start, end.ok_or(Error::SizeOverflow)?, Buffer::Lhs)
            }
        };
        if lhs.len() < lhs_needed {
            return Err(Error::BufferTooShort { buffer: lhs_buffer, given: lhs.len(), needed: lhs_needed });
        }
        if let Some(stride) = params.lhs_stride() {
            F::check_lhs_rows(&lhs[lhs_start..lhs_needed], m, k, stride).map_err(|e| match e {
                // The index into the caller's slice.
                Error::NonFinite { buffer, index } => Error::NonFinite { buffer, index: index + lhs_start },
                e => e,
            })?;
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
            k,
            bl: args.bl,
            lhs: lhs[lhs_start..].as_ptr().cast(),
            rhs_packed: rhs_packed[rhs_start..].as_ptr(),
            dst: dst.as_mut_ptr(),
            dst_stride_row: dst_stride_bytes,
            clamp_min: args.clamp.min(),
            clamp_max: args.clamp.max(),
            params,
        };
        // SAFETY: the kernel was resolved for a CPU with its features (a `Kernel` exists only
        // then). The LHS slice from `lhs_start` holds `ceil(m/mr)` whole tiles, or the `m`
        // rows of `k` elements `stride` apart; the RHS slice from `rhs_start` `ceil(n/nr)` whole
        // tiles; `dst` holds `(m-1)*stride + n` elements and, being a `&mut`, overlaps neither
        // input: exactly what `run_unchecked` reads and writes, with the `strides` the checks
        // used. `k`, `bl`, `m`, `n` and the parameters were validated and the clamp is a valid
        // `Clamp`.
        unsafe { self.call(&raw, &strides) }
        Ok(())
    }

    /// Runs the kernel on raw pointers without checking the buffers (KleidiAI's `run_matmul`,
    /// with any `m`). It computes the tile strides from `k` and `bl` with the family's checked
    /// formulas, as [`Kernel::run`] does; a `k`/`bl` those reject (outside the contract below)
    /// makes the call a no-op instead of a guess.
    ///
    /// # Safety
    ///
    /// * `m, n, k >= 1`, `k` a multiple of [`Family::K_MULTIPLE`]; for per-block families `bl`
    ///   is a multiple of 32 that divides `k`, for the others `bl == 0`.
    /// * A packed LHS: `lhs` is valid for reads of `ceil(m / mr)` packed LHS tiles
    ///   ([`Kernel::lhs_packed_size`]) packed with [`Kernel::packing`] and this `k` (`bl`).
    ///   Rows read in place: of `k` elements at each of the `m` rows `lhs + i * stride`
    ///   elements (`params.0 >= k`).
    /// * `rhs_packed` is valid for reads of `ceil(n / nr)` packed RHS tiles
    ///   ([`Kernel::rhs_packed_size`]) packed with [`Kernel::packing`] and this `k` (`bl`).
    /// * `dst` is valid for writes of `n` output elements ([`Family::Dst`]) at each of the `m`
    ///   rows `dst + i * dst_stride_row` bytes (`dst_stride_row` a multiple of the element size
    ///   and `>= n` elements), and those elements do not overlap the inputs.
    /// * `clamp_min <= clamp_max`, neither NaN.
    /// * Where the kernel's shape scales with the vector length, the calling thread's streaming
    ///   vector length is the one the kernel was resolved with.
    ///
    /// A [`Lut`](crate::matmul::Lut) is not checked: its entries are narrowed to int8, as
    /// KleidiAI's kernels do. Nor are the values: non-finite ones (rows read in place, or packed
    /// bytes that did not come from qgemm's packers) give IEEE results whose NaN bits are only
    /// "some NaN", which may differ between tiers (docs/formats.md, §Non-finite input and
    /// overflow).
    pub unsafe fn run_unchecked(&self, args: &UncheckedArgs<F::Dst, F::Params>) {
        // Buffers of these tiles exist (caller's contract), so the strides cannot overflow.
        let Ok(strides) = self.check_depth(args.k, args.bl).and_then(|()| self.strides(args.k, args.bl)) else {
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
    unsafe fn call(&self, args: &UncheckedArgs<F::Dst, F::Params>, strides: &TileStrides) {
        // SAFETY: forwarded from the caller's contract; the packing is the kernel's own, and the
        // kernel was resolved for a CPU with its features.
        unsafe { (self.desc.raw)(&self.packing, args, strides) }
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
