//! Matmul micro-kernels: the types every family shares and the validated run path.
//!
//! A family (e.g. [`qai8dxp_qsi4cxp`]) is a pair of packed operand formats. It has a catalogue of
//! [`Kernel`]s, one per (tile, ISA tier); each kernel fixes the [`Packing`] both operands must be
//! packed with and the output tile `m_step x n_step` it works in. [`Kernel::run`] validates
//! everything and then calls the tier's `unsafe` entry, which takes raw pointers
//! ([`UncheckedArgs`]) exactly like KleidiAI's `run_matmul`.

/// The items every SIMD tier module has: `KERNELS` (the listed kernels on aarch64, none
/// elsewhere) and the re-export of its `aarch64` module. A tier's availability is
/// [`Tier::is_available`]; its kernels are reached through the family's catalogue.
macro_rules! tier_module {
    ($tier:ident, $($kernel:ident),+ $(,)?) => {
        #[cfg(target_arch = "aarch64")]
        pub(crate) use aarch64::*;

        /// This tier's kernels, best first.
        #[cfg(target_arch = "aarch64")]
        pub(super) const KERNELS: &[&Kernel] = &[$(&$kernel),+];

        /// This tier's kernels: none on this architecture.
        #[cfg(not(target_arch = "aarch64"))]
        pub(super) const KERNELS: &[&Kernel] = &[];
    };
}

/// The catalogue part every family module shares: the `kernel` constructor the tier modules
/// use, one scalar kernel per packing (`(IDENT, "name", PACKING)`), `KERNELS` assembled from
/// the tiers (i8mm, dotprod, neon, scalar), and the dispatch functions, with `$preferred` the
/// RHS packing `select` uses and `$fallback` its scalar kernel.
macro_rules! family_catalogue {
    ($fam:ty, scalar: [$(($ident:ident, $name:literal, $p:expr)),+ $(,)?], preferred: $preferred:expr,
     fallback: $fallback:ident $(,)?) => {
        /// A catalogue entry of this family (used by the tier modules).
        #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
        const fn kernel(
            name: &'static str,
            tier: crate::matmul::Tier,
            steps: (usize, usize),
            packing: crate::Packing,
            raw: crate::matmul::RawKernel,
        ) -> Kernel {
            Kernel::new(name, tier, steps, packing, raw)
        }

        $(
            #[doc = concat!("Scalar kernel `", $name, "` (portable reference).")]
            pub static $ident: Kernel = Kernel::new(
                $name,
                crate::matmul::Tier::Scalar,
                ($p.mr, $p.nr),
                $p,
                crate::matmul::RawKernel::Generic(scalar::matmul_unchecked),
            );
        )+

        /// Each tier's list (empty where the target lacks the tier), best tier first.
        const TIERS: [&[&Kernel]; 4] = [i8mm::KERNELS, dotprod::KERNELS, neon::KERNELS, &[$(&$ident),+]];

        /// Every kernel of the family on this target: the higher tiers first.
        pub static KERNELS: &[&Kernel] =
            &crate::matmul::concat_kernels::<_, { crate::matmul::total_len(&TIERS) }>(&TIERS);

        family_dispatch!($fam, $preferred, $fallback);
    };
}

/// The dispatch functions every family module exports (`available`, `select_for`, `select`),
/// for family marker `$fam` whose preferred RHS packing is `$preferred` and whose scalar kernel
/// `$fallback` consumes it.
macro_rules! family_dispatch {
    ($fam:ty, $preferred:expr, $fallback:expr) => {
        /// The kernels usable on `cpu`, best first.
        pub fn available(cpu: &crate::CpuFeatures) -> heapless::Vec<&'static Kernel, { crate::matmul::MAX_KERNELS }> {
            crate::matmul::available::<$fam>(cpu)
        }

        /// The best kernel on `cpu` for `m` rows among those that consume RHS weights packed
        /// with `rhs`'s `(nr, kr, sr)`, or `None` if no kernel uses that packing
        /// ([`select_for`](crate::matmul::select_for)).
        pub fn select_for(cpu: &crate::CpuFeatures, m: usize, rhs: &crate::Packing) -> Option<&'static Kernel> {
            crate::matmul::select_for::<$fam>(cpu, m, rhs)
        }

        /// The best kernel on `cpu` for `m` rows with the family's preferred RHS packing.
        pub fn select(cpu: &crate::CpuFeatures, m: usize) -> &'static Kernel {
            // The scalar tier covers the preferred packing on every target.
            select_for(cpu, m, &$preferred).unwrap_or(&$fallback)
        }
    };
}

mod i8mm_asm;
#[macro_use]
mod dotprod_asm;
mod neon_common;
pub mod qai8dxp_qsi4c32p;
pub mod qai8dxp_qsi4cxp;
pub mod qsi8d32p_qsi4c32p;

use core::fmt;
use core::marker::PhantomData;

use crate::cpu::{CpuFeatures, Feature};
use crate::error::{Buffer, Dim, Error, Param, Result, Stride};

/// Packing parameters shared by the LHS packer, the RHS packer and a kernel
/// (docs/kernels.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Packing {
    /// LHS rows per packed tile.
    pub mr: usize,
    /// Output channels per packed RHS tile.
    pub nr: usize,
    /// Depth one row or column contributes per inner step (int4: nibbles).
    pub kr: usize,
    /// Split ratio: `kr` is stored as `sr` chunks of `kr / sr` bytes (int4 weights: 2).
    pub sr: usize,
}

/// Largest `mr` and `nr` the packers accept (KleidiAI uses at most 16).
const MAX_TILE: usize = 64;

impl Packing {
    /// An int4 packing (`sr = 2`).
    pub const fn int4(mr: usize, nr: usize, kr: usize) -> Packing {
        Packing { mr, nr, kr, sr: 2 }
    }

    /// `bd = kr / sr`: bytes (int4 RHS) or values (int8) one row or column contributes to an
    /// interleaved chunk.
    pub const fn block_depth(&self) -> usize {
        self.kr / self.sr
    }

    fn check_common(&self) -> Result<()> {
        if self.mr == 0 || self.mr > MAX_TILE {
            return Err(Error::Unsupported { param: Param::Mr, value: self.mr });
        }
        if self.nr == 0 || self.nr > MAX_TILE {
            return Err(Error::Unsupported { param: Param::Nr, value: self.nr });
        }
        if self.sr == 0 || self.sr > 2 {
            return Err(Error::Unsupported { param: Param::Sr, value: self.sr });
        }
        if self.kr == 0 || !self.kr.is_multiple_of(self.sr) {
            return Err(Error::Unsupported { param: Param::Kr, value: self.kr });
        }
        Ok(())
    }

    /// Legal for the LHS formats: `bd` must divide 32 (the padding granule of `qai8dxp`, the
    /// smallest block of `qsi8d32p`).
    pub(crate) fn check_lhs(&self) -> Result<()> {
        self.check_common()?;
        if 32 % self.block_depth() != 0 {
            return Err(Error::Unsupported { param: Param::Kr, value: self.kr });
        }
        Ok(())
    }

    /// Legal for the int4 RHS formats: `sr = 2` and `bd` dividing the 16 bytes of a 32-depth
    /// group.
    pub(crate) fn check_rhs_int4(&self) -> Result<()> {
        self.check_common()?;
        if self.sr != 2 {
            return Err(Error::Unsupported { param: Param::Sr, value: self.sr });
        }
        if 16 % self.block_depth() != 0 {
            return Err(Error::Unsupported { param: Param::Kr, value: self.kr });
        }
        Ok(())
    }

    /// `n_idx % nr == 0`.
    pub(crate) fn check_n_start(&self, n_idx: usize) -> Result<()> {
        if !n_idx.is_multiple_of(self.nr) {
            return Err(Error::MisalignedStart { dim: Dim::NIdx, value: n_idx, step: self.nr });
        }
        Ok(())
    }
}

/// ISA tier of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Tier {
    /// Portable Rust; runs on every target, including x86.
    Scalar,
    /// NEON intrinsics; any ARMv8-A (Cortex-A53/A72 class).
    Neon,
    /// Hand-written `asm!` with `SDOT` (FEAT_DotProd).
    Dotprod,
    /// Hand-written `asm!` with `SMMLA` (FEAT_I8MM).
    I8mm,
}

impl Tier {
    /// The CPU feature the tier needs, `None` for the scalar tier.
    pub const fn required_feature(self) -> Option<Feature> {
        match self {
            Tier::Scalar => None,
            Tier::Neon => Some(Feature::Neon),
            Tier::Dotprod => Some(Feature::Dotprod),
            Tier::I8mm => Some(Feature::I8mm),
        }
    }

    /// Whether kernels of this tier may run on `cpu` (the SIMD tiers also need NEON).
    pub const fn is_available(self, cpu: &CpuFeatures) -> bool {
        match self.required_feature() {
            None => true,
            Some(Feature::Neon) => cpu.has(Feature::Neon),
            Some(f) => cpu.has(Feature::Neon) && cpu.has(f),
        }
    }

    /// Lower-case name (`"scalar"`, `"neon"`, `"dotprod"`, `"i8mm"`).
    pub const fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
            Tier::Neon => "neon",
            Tier::Dotprod => "dotprod",
            Tier::I8mm => "i8mm",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The fused output clamp: `dst = min(max(x, min), max)` (docs/formats.md, §Clamp).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Clamp {
    min: f32,
    max: f32,
}

impl Clamp {
    /// No clamp: `[-f32::MAX, f32::MAX]`; every finite result passes unchanged.
    pub const NONE: Clamp = Clamp { min: -f32::MAX, max: f32::MAX };

    /// A clamp to `[min, max]`. Rejects NaN bounds and `min > max`
    /// ([`Error::InvalidClamp`], carrying both bounds). Infinite bounds are allowed.
    pub fn new(min: f32, max: f32) -> Result<Clamp> {
        if min.is_nan() || max.is_nan() || min > max {
            return Err(Error::InvalidClamp { min, max });
        }
        Ok(Clamp { min, max })
    }

    /// Lower bound.
    pub const fn min(&self) -> f32 {
        self.min
    }

    /// Upper bound.
    pub const fn max(&self) -> f32 {
        self.max
    }
}

impl Default for Clamp {
    fn default() -> Self {
        Clamp::NONE
    }
}

/// What [`Kernel::run`] computes: the `m x n` output rectangle whose top-left element is
/// `(m_idx, n_idx)`, over depth `k`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct MatmulArgs {
    /// Rows of the rectangle.
    pub m: usize,
    /// Columns (output channels) of the rectangle.
    pub n: usize,
    /// Depth, as given to the packers.
    pub k: usize,
    /// Quantization block length of the per-block families (a multiple of 32 dividing `k`);
    /// 0 for the per-channel families.
    pub bl: usize,
    /// First row of the rectangle: a multiple of the kernel's `m_step`.
    pub m_idx: usize,
    /// First column of the rectangle: a multiple of the kernel's `n_step`.
    pub n_idx: usize,
    /// Distance between output rows, in f32 elements (`>= n`).
    pub dst_stride_row: usize,
    /// Output clamp.
    pub clamp: Clamp,
}

impl MatmulArgs {
    /// The whole `m x n` output, dense rows, no clamp, no block length.
    pub const fn new(m: usize, n: usize, k: usize) -> MatmulArgs {
        MatmulArgs { m, n, k, bl: 0, m_idx: 0, n_idx: 0, dst_stride_row: n, clamp: Clamp::NONE }
    }

    /// Sets the block length (per-block families).
    #[must_use]
    pub const fn with_block_len(mut self, bl: usize) -> MatmulArgs {
        self.bl = bl;
        self
    }

    /// Sets the rectangle: `m x n` elements starting at `(m_idx, n_idx)`.
    #[must_use]
    pub const fn with_rect(mut self, m_idx: usize, n_idx: usize, m: usize, n: usize) -> MatmulArgs {
        self.m_idx = m_idx;
        self.n_idx = n_idx;
        self.m = m;
        self.n = n;
        self
    }

    /// Sets the output row stride, in elements.
    #[must_use]
    pub const fn with_dst_stride(mut self, dst_stride_row: usize) -> MatmulArgs {
        self.dst_stride_row = dst_stride_row;
        self
    }

    /// Sets the clamp.
    #[must_use]
    pub const fn with_clamp(mut self, clamp: Clamp) -> MatmulArgs {
        self.clamp = clamp;
        self
    }
}

/// Raw arguments of a kernel's `unsafe` entry, with KleidiAI's `run_matmul` semantics
/// (docs/kernels.md).
#[derive(Debug, Clone, Copy)]
pub struct UncheckedArgs {
    /// Rows of the rectangle (`>= 1`).
    pub m: usize,
    /// Columns of the rectangle (`>= 1`).
    pub n: usize,
    /// Depth (`>= 1`).
    pub k: usize,
    /// Block length of the per-block families (0 otherwise).
    pub bl: usize,
    /// The packed LHS tile that holds the rectangle's first row.
    pub lhs_packed: *const u8,
    /// The packed RHS tile that holds the rectangle's first column.
    pub rhs_packed: *const u8,
    /// Output element `(m_idx, n_idx)`.
    pub dst: *mut f32,
    /// Output row stride in **bytes** (a multiple of 4, `>= 4 * n`).
    pub dst_stride_row: usize,
    /// Clamp lower bound.
    pub clamp_min: f32,
    /// Clamp upper bound.
    pub clamp_max: f32,
}

impl UncheckedArgs {
    /// The packed operands as slices: `ceil(m/mr)` LHS tiles of `lhs_tile` bytes and
    /// `ceil(n/nr)` RHS tiles of `rhs_tile` bytes (the portable kernels index them safely).
    ///
    /// # Safety
    ///
    /// The pointers are valid for those reads ([`Kernel::run_unchecked`]'s contract, with these
    /// tile strides) and the bytes are not written while the slices live.
    pub(crate) unsafe fn packed<'a>(&self, p: &Packing, lhs_tile: usize, rhs_tile: usize) -> (&'a [u8], &'a [u8]) {
        // SAFETY: guaranteed by the caller (see `# Safety`).
        unsafe {
            (
                core::slice::from_raw_parts(self.lhs_packed, self.m.div_ceil(p.mr) * lhs_tile),
                core::slice::from_raw_parts(self.rhs_packed, self.n.div_ceil(p.nr) * rhs_tile),
            )
        }
    }

    /// Stores output `(r, c)` of the rectangle.
    ///
    /// # Safety
    ///
    /// `r < m`, `c < n`, and `dst` is valid for writes of the rectangle
    /// ([`Kernel::run_unchecked`]'s contract).
    #[inline]
    pub(crate) unsafe fn store(&self, r: usize, c: usize, v: f32) {
        // SAFETY: inside the rectangle the caller made writable.
        unsafe { self.dst.byte_add(r * self.dst_stride_row).add(c).write_unaligned(v) }
    }
}

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

/// A tier's raw entry point: the raw arguments and the call's [`TileStrides`].
#[derive(Clone, Copy)]
pub(crate) enum RawKernel {
    /// Fixed packing (SIMD kernels, aarch64 only).
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    Fixed(unsafe fn(&UncheckedArgs, &TileStrides)),
    /// Any packing (the scalar reference).
    Generic(unsafe fn(&Packing, &UncheckedArgs, &TileStrides)),
}

mod sealed {
    pub trait Sealed {}
}

/// A pair of packed operand formats (a kernel family). Implemented by the marker types of the
/// family modules; not implementable outside the crate.
pub trait Family: sealed::Sealed + Sized + 'static {
    /// Family name, KleidiAI's spelling (`"qai8dxp_qsi4cxp"`).
    const NAME: &'static str;
    /// Whether `run` takes a block length (`bl`).
    const BLOCKED: bool;

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
    pub(crate) raw: RawKernel,
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
        raw: RawKernel,
    ) -> Kernel<F> {
        Kernel { name, tier, m_step, n_step, packing, raw, family: PhantomData }
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

    /// Whether the kernel may run on `cpu`.
    pub const fn is_available(&self, cpu: &CpuFeatures) -> bool {
        self.tier.is_available(cpu)
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
    pub fn lhs_packed_offset(&self, m_idx: usize, k: usize, bl: usize) -> Result<usize> {
        if !m_idx.is_multiple_of(self.packing.mr) {
            return Err(Error::MisalignedStart { dim: Dim::MIdx, value: m_idx, step: self.packing.mr });
        }
        let ts = F::lhs_tile_stride(k, bl, &self.packing)?;
        (m_idx / self.packing.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Byte offset, in the packed RHS, of the tile holding column `n_idx` (a multiple of `nr`).
    pub fn rhs_packed_offset(&self, n_idx: usize, k: usize, bl: usize) -> Result<usize> {
        self.packing.check_n_start(n_idx)?;
        let ts = F::rhs_tile_stride(k, bl, &self.packing)?;
        (n_idx / self.packing.nr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Bytes of the packed LHS for `m` rows.
    pub fn lhs_packed_size(&self, m: usize, k: usize, bl: usize) -> Result<usize> {
        let ts = F::lhs_tile_stride(k, bl, &self.packing)?;
        m.div_ceil(self.packing.mr).checked_mul(ts).ok_or(Error::SizeOverflow)
    }

    /// Bytes of the packed RHS for `n` columns.
    pub fn rhs_packed_size(&self, n: usize, k: usize, bl: usize) -> Result<usize> {
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

    fn check_depth(&self, k: usize, bl: usize) -> Result<()> {
        if k == 0 {
            return Err(Error::ZeroDim { dim: Dim::K });
        }
        if !F::BLOCKED {
            if bl != 0 {
                return Err(Error::Unsupported { param: Param::BlockLen, value: bl });
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

    /// Computes the rectangle `args` describes.
    ///
    /// * `lhs_packed`: the whole packed LHS (row 0 onward), packed with [`Kernel::packing`].
    /// * `rhs_packed`: the whole packed RHS (column 0 onward), packed with [`Kernel::packing`].
    /// * `dst`: starts at output element `(m_idx, n_idx)` (see [`Kernel::dst_offset`]) and holds
    ///   `(m - 1) * dst_stride_row + n` elements. Exactly the `m x n` rectangle is written.
    ///
    /// `m == 0` or `n == 0` is a no-op. Any grid of legal sub-rectangles gives the same bits
    /// as one call over the whole output.
    pub fn run(
        &self,
        cpu: &CpuFeatures,
        lhs_packed: &[u8],
        rhs_packed: &[u8],
        dst: &mut [f32],
        args: &MatmulArgs,
    ) -> Result<()> {
        if let Some(needs) = self.tier.required_feature()
            && !self.is_available(cpu)
        {
            let needs = if cpu.has(Feature::Neon) { needs } else { Feature::Neon };
            return Err(Error::UnsupportedCpu { needs });
        }
        self.check_depth(args.k, args.bl)?;
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
        let dst_stride_bytes = args.dst_stride_row.checked_mul(4).ok_or(Error::SizeOverflow)?;
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
        };
        // SAFETY: the tier's feature is present (checked above). The LHS slice from `lhs_start`
        // holds `ceil(m/mr)` whole tiles, the RHS slice from `rhs_start` `ceil(n/nr)` whole
        // tiles, and `dst` holds `(m-1)*stride + n` elements: exactly what `run_unchecked`
        // reads and writes, with the `strides` the checks used. `k`, `bl`, `m`, `n` were
        // validated and the clamp is a valid `Clamp`.
        unsafe { self.call(&raw, &strides) }
        Ok(())
    }

    /// Runs the kernel on raw pointers without any check (KleidiAI's `run_matmul`).
    ///
    /// # Safety
    ///
    /// * The CPU implements the kernel's tier ([`Kernel::is_available`]).
    /// * `m, n, k >= 1`; for per-block families `bl` is a multiple of 32 that divides `k`, for
    ///   the others `bl == 0`.
    /// * `lhs_packed` is valid for reads of `ceil(m / mr)` packed LHS tiles and `rhs_packed` of
    ///   `ceil(n / nr)` packed RHS tiles ([`Kernel::lhs_packed_size`],
    ///   [`Kernel::rhs_packed_size`]), both packed with [`Kernel::packing`] and this `k` (`bl`).
    /// * `dst` is valid for writes of `n` f32 at each of the `m` rows `dst + i * dst_stride_row`
    ///   bytes (`dst_stride_row` a multiple of 4 and `>= 4 * n`), and those elements do not
    ///   overlap the packed buffers.
    /// * `clamp_min <= clamp_max`, neither NaN.
    pub unsafe fn run_unchecked(&self, args: &UncheckedArgs) {
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
    unsafe fn call(&self, args: &UncheckedArgs, strides: &TileStrides) {
        match self.raw {
            // SAFETY: forwarded from the caller's contract.
            RawKernel::Fixed(f) => unsafe { f(args, strides) },
            // SAFETY: forwarded from the caller's contract; the packing is the kernel's own.
            RawKernel::Generic(f) => unsafe { f(&self.packing, args, strides) },
        }
    }
}

/// Longest quantization block the SIMD tiers of the per-block families take: the asm tiers sum
/// `16 * S` per block in int32, which cannot wrap for `bl <= 2^16` (`|S| <= bl * 128 * 8`);
/// longer blocks run the family's scalar kernel, which sums `S` itself.
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
pub(crate) const MAX_SIMD_BLOCK_LEN: usize = 1 << 16;

/// Capacity of the list [`available`] returns: the largest catalogue must fit (a unit test of
/// each family checks it).
pub const MAX_KERNELS: usize = 64;

/// The kernels of a family usable on `cpu`, in catalogue order (best first).
pub fn available<F: Family>(cpu: &CpuFeatures) -> heapless::Vec<&'static Kernel<F>, MAX_KERNELS> {
    let mut out = heapless::Vec::new();
    for k in F::kernels().iter().filter(|k| k.is_available(cpu)) {
        // Every catalogue holds at most MAX_KERNELS kernels, so this never fails.
        let _ = out.push(*k);
    }
    out
}

/// The best kernel of family `F` on `cpu` for `m` rows among those that consume RHS weights
/// packed with `rhs`'s `(nr, kr, sr)` (its `mr` is ignored).
///
/// For `m <= 1` a GEMV kernel (`mr = 1`) is preferred, otherwise a GEMM kernel (`mr > 1`); then
/// the highest available tier; then catalogue order.
pub fn select_for<F: Family>(cpu: &CpuFeatures, m: usize, rhs: &Packing) -> Option<&'static Kernel<F>> {
    let same_rhs = |p: &Packing| p.nr == rhs.nr && p.kr == rhs.kr && p.sr == rhs.sr;
    let fit = |p: &Packing| (m <= 1) == (p.mr == 1);
    let mut best: Option<&'static Kernel<F>> = None;
    for &k in F::kernels().iter().filter(|k| k.is_available(cpu) && same_rhs(&k.packing)) {
        let better = match best {
            None => true,
            Some(b) => (fit(&k.packing), k.tier) > (fit(&b.packing), b.tier),
        };
        if better {
            best = Some(k);
        }
    }
    best
}

/// Total length of a family's per-tier kernel lists (a const helper for the catalogues).
pub(crate) const fn total_len<F: Family>(parts: &[&[&'static Kernel<F>]]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < parts.len() {
        total += parts[i].len();
        i += 1;
    }
    total
}

/// Concatenates a family's per-tier kernel lists into one catalogue at compile time.
/// `N` must be [`total_len`] of `parts` (a mismatch fails const evaluation).
pub(crate) const fn concat_kernels<F: Family, const N: usize>(
    parts: &[&[&'static Kernel<F>]],
) -> [&'static Kernel<F>; N] {
    let first = parts[parts.len() - 1][0];
    let mut out = [first; N];
    let (mut i, mut at) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[at] = parts[i][j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(at == N, "catalogue length mismatch");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_catalogue<F: Family>() {
        let ks = F::kernels();
        assert!(ks.len() <= MAX_KERNELS, "{}: {} kernels", F::NAME, ks.len());
        for (i, a) in ks.iter().enumerate() {
            assert!(ks[i + 1..].iter().all(|b| b.name() != a.name()), "{} twice", a.name());
            assert_eq!(a.m_step() % a.packing().mr, 0, "{}", a.name());
            assert_eq!(a.n_step() % a.packing().nr, 0, "{}", a.name());
            assert!(a.name().contains(F::NAME.split('_').next().unwrap_or("")), "{}", a.name());
            // Every packing has a scalar kernel, so any packed buffer runs on any CPU.
            assert!(ks.iter().any(|s| s.tier() == Tier::Scalar && s.packing() == a.packing()), "{}", a.name());
        }
    }

    #[test]
    fn clamp_rejects_nan_and_inverted_bounds_with_the_bounds() {
        assert_eq!(Clamp::new(2.0, 1.0), Err(Error::InvalidClamp { min: 2.0, max: 1.0 }));
        let Err(Error::InvalidClamp { min, max }) = Clamp::new(f32::NAN, 1.0) else { panic!("NaN accepted") };
        assert!(min.is_nan() && max == 1.0);
        assert!(Clamp::new(f32::NEG_INFINITY, f32::INFINITY).is_ok());
    }

    #[test]
    fn catalogues_are_consistent() {
        check_catalogue::<qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>();
        check_catalogue::<qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>();
        check_catalogue::<qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>();
    }
}
