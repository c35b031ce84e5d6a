//! What a call computes: the checked arguments ([`MatmulArgs`], [`Clamp`]), the per-family
//! parameters ([`Params`]: none, [`Lut`], [`LhsStride`]) and the raw arguments of the `unsafe`
//! entries ([`UncheckedArgs`]).

use core::fmt::Debug;

use crate::element::Element;
use crate::error::{Error, Result, Stride};
use crate::packing::Packing;
use crate::rhs::qsu2cxp::{DEFAULT_LUT, check_lut};

#[cfg(doc)]
use crate::matmul::Kernel;

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

/// The parameters a family's kernels take beyond the shared arguments: `()` for most, [`Lut`]
/// for the 2-bit weights, [`LhsStride`] for the float families that read the LHS rows in place.
/// Sealed: implemented by those types only.
pub trait Params: Copy + Debug + PartialEq + Send + Sync + 'static + sealed::Sealed {
    /// The parameters of a call that sets none.
    const DEFAULT: Self;

    /// Checks the parameters of a validated call of depth `k` and returns what the raw entry
    /// gets ([`UncheckedArgs::params`]).
    fn check(&self, k: usize) -> Result<Self>;

    /// The LHS row stride in elements, for the families that read the LHS rows in place.
    fn lhs_stride(&self) -> Option<usize> {
        None
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for () {}
    impl Sealed for super::Lut {}
    impl Sealed for super::LhsStride {}
}

impl Params for () {
    const DEFAULT: () = ();

    fn check(&self, _k: usize) -> Result<()> {
        Ok(())
    }
}

/// The 4-entry look-up table of the 2-bit weight family
/// ([`qai8dxp_qsu2cxp`](crate::qai8dxp_qsu2cxp)): weight code `u` stands for `lut[u]`. It must
/// be the table the weights were packed with ([`rhs::qsu2cxp::pack`](crate::rhs::qsu2cxp::pack)),
/// every entry in `[-64, 63]` ([`Kernel::run`] rejects others with [`Error::LutOutOfRange`]).
/// Default [`DEFAULT_LUT`] `{-2, -1, 0, 1}`.
///
/// The raw entries use each entry narrowed to int8 (`lut[u] as i8`), as KleidiAI's kernels do;
/// entries outside `[-64, 63]` are not a safety matter there but give results that match no
/// packed `rsum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Lut(pub [i32; 4]);

impl Default for Lut {
    fn default() -> Self {
        Lut(DEFAULT_LUT)
    }
}

impl Params for Lut {
    const DEFAULT: Lut = Lut(DEFAULT_LUT);

    fn check(&self, _k: usize) -> Result<Lut> {
        check_lut(&self.0)?;
        Ok(*self)
    }
}

/// The LHS row stride, in elements, of the float families whose kernels read the f32/f16 rows
/// in place ([`f32_f32_f32p`](crate::f32_f32_f32p), [`f16_f16_f16p`](crate::f16_f16_f16p)):
/// row `i` of the rectangle starts `i * stride` elements after row 0. `LhsStride(0)` (the
/// default) means dense rows (`k`); another value must be at least `k`
/// ([`Error::StrideTooSmall`]). In [`UncheckedArgs`] it is always the real stride (`>= k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LhsStride(pub usize);

impl Params for LhsStride {
    const DEFAULT: LhsStride = LhsStride(0);

    fn check(&self, k: usize) -> Result<LhsStride> {
        match self.0 {
            0 => Ok(LhsStride(k)),
            s if s < k => Err(Error::StrideTooSmall { stride: Stride::Lhs, given: s, needed: k }),
            s => Ok(LhsStride(s)),
        }
    }

    fn lhs_stride(&self) -> Option<usize> {
        Some(self.0)
    }
}

/// What [`Kernel::run`] computes: the `m x n` output rectangle whose top-left element is
/// `(m_idx, n_idx)`, over depth `k`, with the family's parameters `params` (`P`: the family's
/// [`Family::Params`](crate::Family::Params)).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct MatmulArgs<P = ()> {
    /// Rows of the rectangle.
    pub m: usize,
    /// Columns (output channels) of the rectangle.
    pub n: usize,
    /// Depth, as given to the packers.
    pub k: usize,
    /// Quantization block length of the per-block families (a multiple of 32 dividing `k`);
    /// 0 for the others.
    pub bl: usize,
    /// First row of the rectangle: a multiple of the kernel's `m_step`.
    pub m_idx: usize,
    /// First column of the rectangle: a multiple of the kernel's `n_step`.
    pub n_idx: usize,
    /// Distance between output rows, in output elements (`>= n`).
    pub dst_stride_row: usize,
    /// Output clamp.
    pub clamp: Clamp,
    /// The family's parameters ([`Params::DEFAULT`] unless set).
    pub params: P,
}

impl<P: Params> MatmulArgs<P> {
    /// The whole `m x n` output, dense rows, no clamp, no block length, the family's default
    /// parameters.
    pub const fn new(m: usize, n: usize, k: usize) -> MatmulArgs<P> {
        MatmulArgs { m, n, k, bl: 0, m_idx: 0, n_idx: 0, dst_stride_row: n, clamp: Clamp::NONE, params: P::DEFAULT }
    }

    /// Sets the block length (per-block families).
    #[must_use]
    pub const fn with_block_len(mut self, bl: usize) -> MatmulArgs<P> {
        self.bl = bl;
        self
    }

    /// Sets the rectangle: `m x n` elements starting at `(m_idx, n_idx)`.
    #[must_use]
    pub const fn with_rect(mut self, m_idx: usize, n_idx: usize, m: usize, n: usize) -> MatmulArgs<P> {
        self.m_idx = m_idx;
        self.n_idx = n_idx;
        self.m = m;
        self.n = n;
        self
    }

    /// Sets the output row stride, in elements.
    #[must_use]
    pub const fn with_dst_stride(mut self, dst_stride_row: usize) -> MatmulArgs<P> {
        self.dst_stride_row = dst_stride_row;
        self
    }

    /// Sets the clamp.
    #[must_use]
    pub const fn with_clamp(mut self, clamp: Clamp) -> MatmulArgs<P> {
        self.clamp = clamp;
        self
    }

    /// Sets the family's parameters.
    #[must_use]
    pub const fn with_params(mut self, params: P) -> MatmulArgs<P> {
        self.params = params;
        self
    }
}

impl MatmulArgs<Lut> {
    /// Sets the look-up table of the 2-bit weights ([`Lut`]): the table given to the RHS packer.
    /// Checked by [`Kernel::run`], not here.
    #[must_use]
    pub const fn with_lut(mut self, lut: [i32; 4]) -> MatmulArgs<Lut> {
        self.params = Lut(lut);
        self
    }
}

impl MatmulArgs<LhsStride> {
    /// Sets the LHS row stride of the float families that read the LHS rows in place, in
    /// elements ([`LhsStride`]).
    #[must_use]
    pub const fn with_lhs_stride(mut self, lhs_stride_row: usize) -> MatmulArgs<LhsStride> {
        self.params = LhsStride(lhs_stride_row);
        self
    }
}

/// Raw arguments of a kernel's `unsafe` entry, with KleidiAI's `run_matmul` semantics
/// (docs/kernels.md); `O` is the family's output element type ([`Family::Dst`](crate::Family::Dst))
/// and `P` its parameters ([`Family::Params`](crate::Family::Params)).
#[derive(Debug)]
pub struct UncheckedArgs<O = f32, P = ()> {
    /// Rows of the rectangle (`>= 1`).
    pub m: usize,
    /// Columns of the rectangle (`>= 1`).
    pub n: usize,
    /// Depth (`>= 1`).
    pub k: usize,
    /// Block length of the per-block families (0 otherwise).
    pub bl: usize,
    /// A packed LHS: the tile that holds the rectangle's first row. Unpacked rows
    /// ([`LhsStride`]): the first row's first element (f32 or f16), rows
    /// `params.0` elements apart.
    pub lhs: *const u8,
    /// The packed RHS tile that holds the rectangle's first column.
    pub rhs_packed: *const u8,
    /// Output element `(m_idx, n_idx)`.
    pub dst: *mut O,
    /// Output row stride in **bytes** (a multiple of the element size, `>= n` elements).
    pub dst_stride_row: usize,
    /// Clamp lower bound.
    pub clamp_min: f32,
    /// Clamp upper bound.
    pub clamp_max: f32,
    /// The family's parameters, as [`Params::check`] returns them.
    pub params: P,
}

impl<O, P: Copy> Clone for UncheckedArgs<O, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O, P: Copy> Copy for UncheckedArgs<O, P> {}

impl<O: Element, P> UncheckedArgs<O, P> {
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
                core::slice::from_raw_parts(self.lhs, self.m.div_ceil(p.mr) * lhs_tile),
                core::slice::from_raw_parts(self.rhs_packed, self.n.div_ceil(p.nr) * rhs_tile),
            )
        }
    }

    /// Stores output `(r, c)` of the rectangle, converted to the output type (round to
    /// nearest even).
    ///
    /// # Safety
    ///
    /// `r < m`, `c < n`, and `dst` is valid for writes of the rectangle
    /// ([`Kernel::run_unchecked`]'s contract).
    #[inline]
    pub(crate) unsafe fn store(&self, r: usize, c: usize, v: f32) {
        // SAFETY: inside the rectangle the caller made writable.
        unsafe { self.dst.byte_add(r * self.dst_stride_row).add(c).write_unaligned(O::from_f32(v)) }
    }

    /// The output pointer as bytes (the asm tiers address it in bytes).
    #[inline]
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    pub(crate) fn dst_bytes(&self) -> *mut u8 {
        self.dst.cast()
    }
}
