//! Operator layer: a linear layer (`y = x W^T + b`, clamped) over any family, quantized or
//! float, with the kernel choice, the activation packing and the buffer sizes done for you.
//! `no_std`, no allocation: the caller provides the packed-weight buffer and a scratch buffer.
//!
//! * [`Linear`] holds weights packed once, by default in the family's
//!   [`PREFERRED_RHS`](crate::Family::PREFERRED_RHS) packing, which both the decode (`m = 1`)
//!   and the prefill (`m > 1`) kernels of every tier read. The value remembers the family (its
//!   type), `n`, `k`, `bl`, the packing of its weights ([`Linear::packing`]) and the family's
//!   parameters, so packed weights only reach kernels that read their packing: a kernel or a
//!   CPU that cannot is refused with a typed error ([`Error::PackingMismatch`],
//!   [`Error::UnsupportedCpu`]).
//! * [`Linear::run`] packs `m` rows of activations into the scratch buffer
//!   ([`Linear::scratch_size`]; quantized per row or block, or converted to bf16; the families
//!   that read f32/f16 rows in place need none), picks the best kernel for `m` on the CPU (the
//!   one selection policy, [`select_from`](crate::matmul::select_from)) and computes the
//!   `m x n` output.
//! * For threads: [`Linear::prepare`] packs the activations once and returns a [`Prepared`]
//!   call; [`Prepared::parts`] cuts the output into at most `p` rectangles aligned to the
//!   kernel's steps with balanced work, each a [`Part`] that any thread can run (an RTOS
//!   caller runs them on its own threads); with the `std` feature [`Prepared::run_parallel`]
//!   runs them on `std::thread::scope` threads. Every output element is computed by the same
//!   kernel whatever the split, so the results are bit-identical for any split.
//! * Activation-aware scaling (AWQ): [`Linear::with_input_scale`] gives the layer one f32
//!   multiplier per input channel, applied to the activations on every call before they are
//!   packed; the weights are quantized from `W / scale` ([`quant::divide_depths`](crate::quant::divide_depths)),
//!   so the layer still computes `x W^T + b` with the heavily used channels' weights quantized
//!   more finely.
//! * From float weights in one call: each quantized family's `Linear::quantize_pack` (and
//!   [`QuantizePack`], for code generic over the families) quantizes by
//!   [`quant`](crate::quant) into a caller workspace and packs (module `quantize`'s table gives
//!   each family's format and method).
//!
//! A row's result does not depend on `m` (the batch it runs in) in any family but one: the
//! 2-bit family `qai8dxp_qsu2cxp`, whose GEMV kernels (chosen for `m = 1`) scale in
//! KleidiAI's GEMV order and whose GEMM kernels in its GEMM order, so one row's outputs differ
//! in the last bits between a call of 1 row and a call of several
//! ([`qai8dxp_qsu2cxp`](crate::qai8dxp_qsu2cxp)); name one packing's kernels with
//! [`Linear::run_with`] to fix the order.
//!
//! ```
//! use qgemm::op::Linear;
//! use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
//! use qgemm::rhs::{Int4Encoding, Int4Source};
//! use qgemm::CpuFeatures;
//!
//! let (n, k) = (8, 64);
//! let weights = [0x99u8; 8 * 32]; // n x k nibbles, zero point 8: every weight +1
//! let scales = [0.5f32; 8];
//! let mut packed = [0u8; 8 * (32 + 12)];
//! let size = Linear::<Qai8dxpQsi4cxp>::packed_size(n, k)?;
//! let src = Int4Source::nxk(&weights, k, Int4Encoding::ZeroPoint8);
//! let layer = Linear::<Qai8dxpQsi4cxp>::pack(n, k, &src, &scales, None, &mut packed[..size])?;
//!
//! let cpu = CpuFeatures::from_target();
//! let (m, x) = (2, [1.0f32; 2 * 64]);
//! let mut scratch = [0u8; 4 * 72];
//! assert!(layer.scratch_size(m)? <= scratch.len());
//! let mut y = [0f32; 2 * 8];
//! layer.run(&cpu, m, &x, &mut y, &mut scratch)?;
//! assert!(y.iter().all(|&v| (v - 32.0).abs() < 0.1)); // 64 depths x 1 x 0.5
//! # Ok::<(), qgemm::Error>(())
//! ```

use core::marker::PhantomData;

use half::{bf16, f16};

use crate::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
use crate::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp;
use crate::element::Element;
use crate::error::{Buffer, Dim, Error, Param, Result};
use crate::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
use crate::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
use crate::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p;
use crate::lhs::{qai8dxp, qsi8d32p, qsi8d32pscalef32};
use crate::matmul::{Clamp, Descriptor, Family, Kernel, Lut, Params, UncheckedArgs};
use crate::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use crate::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use crate::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use crate::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
use crate::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
use crate::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use crate::rhs::qsi4c32p::BlockScales;
use crate::rhs::qsi8cxp::Int8Source;
use crate::rhs::{Int4Source, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsi8cxp, qsu2cxp};
use crate::{CpuFeatures, Packing, RhsPacking};

mod float;
mod quantize;

pub use quantize::QuantizePack;

/// Most rectangles [`Prepared::parts`] cuts an output into.
pub const MAX_PARTS: usize = 64;

/// A family the operator layer runs: its activation type and how the activations reach the
/// kernels (packed by the family's LHS packer, or read in place). Implemented by every family
/// of the crate (and only by them).
pub trait Operator: Family {
    /// The activation element type: `f32`, or [`half::f16`] / [`half::bf16`] for the families
    /// named `f16_...` / `bf16_...` (whose outputs, [`Family::Dst`], are of the same type).
    type Src: Element;

    /// Packs `m` rows of `x` (`x_stride` elements apart) for packing `p`, the first as row
    /// `m_idx_start` (a multiple of `mr`; `out` starts at its tile): quantized (`qai8dxp`,
    /// `qsi8d32p*`) or converted to bf16 (`bf16p`). Never called for the families whose kernels
    /// read the rows in place ([`Operator::rows`]).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        bl: usize,
        m_idx_start: usize,
        x: &[Self::Src],
        x_stride: usize,
        out: &mut [u8],
    ) -> Result<()>;

    /// Whether the activation packer multiplies by an input scale in its own passes
    /// ([`Operator::pack_lhs_scaled`]); else [`Linear::with_input_scale`] stages the scaled
    /// rows in the scratch.
    #[doc(hidden)]
    const FUSED_INPUT_SCALE: bool = false;

    /// [`Operator::pack_lhs`] of `x[i][j] * scale[j]` (only called when
    /// [`Operator::FUSED_INPUT_SCALE`]).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn pack_lhs_scaled(
        p: &Packing,
        m: usize,
        k: usize,
        bl: usize,
        x: &[Self::Src],
        x_stride: usize,
        scale: &[f32],
        out: &mut [u8],
    ) -> Result<()> {
        let _ = (m, k, bl, x, x_stride, scale, out);
        Err(Error::Unsupported { param: Param::Mr, value: p.mr })
    }

    /// What the kernels read as LHS: the packed bytes `packed` (packed LHS), or the dense rows
    /// `rows` themselves (families that read them in place, whose [`Family::Lhs`] is
    /// [`Operator::Src`]).
    #[doc(hidden)]
    fn kernel_lhs<'a>(rows: &'a [Self::Src], packed: &'a [u8]) -> &'a [Self::Lhs];

    /// Whether the kernels read the activation rows in place (no packing, no scratch).
    #[doc(hidden)]
    const ROWS: bool = false;
}

/// `Operator` for a family whose activations are `qai8dxp` (per-row int8, no blocks), of type
/// `$src` quantized by `qai8dxp::$packer`.
/// (`fused`: the f32 packer, which also multiplies by an input scale in its own passes.)
macro_rules! qai8dxp_operator {
    ($($family:ident: $src:ty => $packer:ident $(, $fused:ident)?);+ $(;)?) => {$(
        impl Operator for $family {
            type Src = $src;
            fn pack_lhs(
                p: &Packing, m: usize, k: usize, _bl: usize, at: usize, x: &[$src], s: usize, out: &mut [u8],
            ) -> Result<()> {
                qai8dxp::$packer(p, m, k, at, x, s, out)
            }
            fn kernel_lhs<'a>(_rows: &'a [$src], packed: &'a [u8]) -> &'a [u8] {
                packed
            }
            $(qai8dxp_operator!(@$fused);)?
        }
    )+};
    (@fused) => {
        const FUSED_INPUT_SCALE: bool = true;
        fn pack_lhs_scaled(
            p: &Packing, m: usize, k: usize, _bl: usize, x: &[f32], s: usize, scale: &[f32], out: &mut [u8],
        ) -> Result<()> {
            qai8dxp::quantize_pack_prescaled(p, m, k, 0, x, s, scale, out)
        }
    };
}

qai8dxp_operator!(
    Qai8dxpQsi4cxp: f32 => quantize_pack, fused;
    Qai8dxpQsi4c32p: f32 => quantize_pack, fused;
    Qai8dxpQsi8cxp: f32 => quantize_pack, fused;
    F16Qai8dxpQsi4cxp: f16 => quantize_pack_f16;
    F16Qai8dxpQsi8cxp: f16 => quantize_pack_f16;
    Bf16Qai8dxpQsi4cxp: bf16 => quantize_pack_bf16;
    Bf16Qai8dxpQsi4c32p: bf16 => quantize_pack_bf16;
    Qai8dxpQsu2cxp: f32 => quantize_pack, fused;
);

impl Operator for Qsi8d32pQsi4c32p {
    type Src = f32;
    #[allow(clippy::too_many_arguments)]
    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        bl: usize,
        at: usize,
        x: &[f32],
        s: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qsi8d32p::quantize_pack(p, m, k, bl, at, x, s, out)
    }
    fn kernel_lhs<'a>(_rows: &'a [f32], packed: &'a [u8]) -> &'a [u8] {
        packed
    }
}

/// `Operator` for the asymmetric int4 families (`qsi8d32pscalef32` activations of type `$src`
/// quantized by `qsi8d32pscalef32::$packer`).
macro_rules! qai4c32p_operator {
    ($($family:ident: $src:ty => $packer:ident),+ $(,)?) => {$(
        impl Operator for $family {
            type Src = $src;
            fn pack_lhs(
                p: &Packing, m: usize, k: usize, bl: usize, at: usize, x: &[$src], s: usize, out: &mut [u8],
            ) -> Result<()> {
                qsi8d32pscalef32::$packer(p, m, k, bl, at, x, s, out)
            }
            fn kernel_lhs<'a>(_rows: &'a [$src], packed: &'a [u8]) -> &'a [u8] {
                packed
            }
        }
    )+};
}

qai4c32p_operator!(
    Qsi8d32pQai4c32p: f32 => quantize_pack,
    F16Qsi8d32pQai4c32p: f16 => quantize_pack_f16,
);

/// A linear layer of family `F`: `n` output channels over depth `k` (`bl`: the block length of
/// the per-block families, 0 otherwise), with its weights packed in [`Linear::packing`] in a
/// buffer the caller owns, and the family's parameters ([`Linear::params`]: the 2-bit family's
/// look-up table; `()` for most).
pub struct Linear<'w, F: Operator> {
    weights: &'w [u8],
    n: usize,
    k: usize,
    bl: usize,
    packing: RhsPacking,
    params: F::Params,
    input_scale: Option<&'w [f32]>,
    family: PhantomData<fn() -> F>,
}

impl<F: Operator> Clone for Linear<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Operator> Copy for Linear<'_, F> {}

impl<F: Operator> core::fmt::Debug for Linear<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Linear")
            .field("family", &F::NAME)
            .field("n", &self.n)
            .field("k", &self.k)
            .field("bl", &self.bl)
            .field("packing", &self.packing)
            .field("params", &self.params)
            .field("input_scale", &self.input_scale.is_some())
            .finish()
    }
}

/// One output rectangle: `m x n` elements from row `m_idx`, column `n_idx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rect {
    /// First row.
    pub m_idx: usize,
    /// First column.
    pub n_idx: usize,
    /// Rows.
    pub m: usize,
    /// Columns.
    pub n: usize,
}

impl<'w, F: Operator> Linear<'w, F> {
    /// Bytes of packed weights for `n` channels of depth `k` (`bl` for the per-block families)
    /// in the family's preferred packing, after the checks every kernel makes of `k` and `bl`.
    fn size(n: usize, k: usize, bl: usize) -> Result<usize> {
        Self::size_in(&F::PREFERRED_RHS, n, k, bl)
    }

    /// [`Linear::size`] in packing `packing`.
    fn size_in(packing: &RhsPacking, n: usize, k: usize, bl: usize) -> Result<usize> {
        if n == 0 {
            return Err(Error::ZeroDim { dim: Dim::N });
        }
        // From the family and the packing, not from a kernel of the catalogue: a firmware that
        // runs named kernels ([`Linear::run_with`]) must not link the others through here.
        crate::matmul::check_depth::<F>(k, bl)?;
        packing.packed_size(n, k, bl)
    }

    /// Bytes of packed weights for `n` channels of depth `k` (`bl`: the block length of the
    /// per-block families, 0 for the others) in the family's preferred packing: each family's
    /// `packed_size`, for code generic over the families (the C layer).
    pub fn weights_size(n: usize, k: usize, bl: usize) -> Result<usize> {
        Self::size(n, k, bl)
    }

    /// Wraps weights packed earlier (by the `pack` function of this family's `Linear`, or by
    /// KleidiAI's packer with the same packing) in the family's preferred packing
    /// ([`Family::PREFERRED_RHS`]) for `n` channels of depth `k` (`bl` for the per-block
    /// families, else 0). Checks the shape and the length; the bytes are trusted to be such a
    /// packing (any bytes are memory-safe, wrong ones give wrong numbers). Non-finite values in
    /// them (which qgemm's packers reject, KleidiAI's accept) give IEEE results whose NaN bits
    /// are only "some NaN", which may differ between tiers (docs/formats.md, §Non-finite input
    /// and overflow).
    pub fn from_packed(n: usize, k: usize, bl: usize, weights: &'w [u8]) -> Result<Self> {
        Self::from_packed_in(F::PREFERRED_RHS, n, k, bl, weights)
    }

    /// [`Linear::from_packed`] for weights packed in `packing`, which must be one a kernel of
    /// the family reads (on some CPU; [`Error::PackingMismatch`] otherwise). The layer's kernels
    /// are then those of that packing.
    pub fn from_packed_in(packing: RhsPacking, n: usize, k: usize, bl: usize, weights: &'w [u8]) -> Result<Self> {
        if let Some(first) = F::kernels().first()
            && !F::kernels().iter().any(|d| d.shape().may_read(&packing))
        {
            let kernel = first.packing_on(&CpuFeatures::NONE).map_or(F::PREFERRED_RHS, |p| p.rhs(first.shape().rhs));
            return Err(Error::PackingMismatch { weights: packing, kernel });
        }
        let size = Self::size_in(&packing, n, k, bl)?;
        if weights.len() < size {
            return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: weights.len(), needed: size });
        }
        Ok(Linear {
            weights: &weights[..size],
            n,
            k,
            bl,
            packing,
            params: F::Params::DEFAULT,
            input_scale: None,
            family: PhantomData,
        })
    }

    /// The packing the weights are in: only kernels with this
    /// [`rhs_packing`](Kernel::rhs_packing) run the layer.
    pub const fn packing(&self) -> RhsPacking {
        self.packing
    }

    /// The family's parameters every call uses ([`Params::DEFAULT`] unless a family-specific
    /// constructor set them: the 2-bit family's look-up table).
    pub const fn params(&self) -> F::Params {
        self.params
    }

    /// The same layer with the family's parameters `params` (the 2-bit family's look-up table,
    /// as [`Linear::with_lut`](Linear::<crate::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>::with_lut)),
    /// checked as every call checks them ([`Params::check`]).
    pub fn with_params(mut self, params: F::Params) -> Result<Self> {
        self.params = params.check(self.k)?;
        Ok(self)
    }

    /// The same layer with per-input-channel activation multipliers (activation-aware
    /// scaling, AWQ): every call packs `x[i][j] * scale[j]` instead of `x[i][j]`, the product
    /// taken in f32 and rounded to the activation type ([`Operator::Src`]: exact for f32, to
    /// nearest even for f16 and bf16), so the layer computes `(x diag(scale)) W^T + b`. The
    /// weights must have been quantized from `W[c][j] / scale[j]` (for example by
    /// [`quant::divide_depths`](crate::quant::divide_depths)) to keep `x W^T + b`: a channel the
    /// activations use heavily then gets its weights enlarged and quantized more finely.
    ///
    /// `scale` holds `k` finite values ([`Error::BufferTooShort`] / [`Error::NonFinite`] on
    /// [`Buffer::InputScale`]). The f32 `qai8dxp` families (`qai8dxp_qsi4cxp`,
    /// `qai8dxp_qsi4c32p`, `qai8dxp_qsi8cxp`, `qai8dxp_qsu2cxp`) multiply in their activation
    /// packer's own passes ([`qai8dxp::quantize_pack_scaled`]: one `FMUL` per 4 values in the
    /// min/max pass and one in the quantizing pass, no extra memory); the other packed-LHS
    /// families multiply one tile of `mr` rows at a time into a staging area at the end of the
    /// scratch and pack that; the families that read the rows in place multiply all `m` rows
    /// into the scratch and read those ([`Linear::scratch_size`] counts either). A product that
    /// is not finite is reported as [`Error::NonFinite`] at its activation's index.
    pub fn with_input_scale(mut self, scale: &'w [f32]) -> Result<Self> {
        let k = self.k;
        if scale.len() < k {
            return Err(Error::BufferTooShort { buffer: Buffer::InputScale, given: scale.len(), needed: k });
        }
        if let Some(index) = scale[..k].iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { buffer: Buffer::InputScale, index });
        }
        self.input_scale = Some(&scale[..k]);
        Ok(self)
    }

    /// The activation multipliers given to [`Linear::with_input_scale`], if any.
    pub const fn input_scale(&self) -> Option<&'w [f32]> {
        self.input_scale
    }

    /// Output channels.
    pub const fn n(&self) -> usize {
        self.n
    }

    /// Depth.
    pub const fn k(&self) -> usize {
        self.k
    }

    /// Block length (0 for the per-channel families).
    pub const fn bl(&self) -> usize {
        self.bl
    }

    /// The packed weights.
    pub const fn weights(&self) -> &'w [u8] {
        self.weights
    }

    /// The kernel [`Linear::run`] uses for `m` rows on `cpu`: the best one of the family that
    /// reads the layer's packing ([`select_from`](crate::matmul::select_from): a GEMV kernel for
    /// `m = 1`, a GEMM kernel otherwise, of the highest tier `cpu` has).
    pub fn kernel(&self, cpu: &CpuFeatures, m: usize) -> Result<Kernel<F>> {
        self.kernel_from(F::kernels(), cpu, m)
    }

    /// [`Linear::kernel`] among `kernels` only: the best of them for `m` rows on `cpu` that
    /// reads these weights. [`Error::UnsupportedCpu`] (or [`Error::VectorLengthUnknown`]) when
    /// `cpu` runs none of those that read them, [`Error::PackingMismatch`] when none reads the
    /// layer's packing ([`Error::Unsupported`] for an empty list, and, `Mr`, for kernels that
    /// read the weights but another activation packing than the layer's: the bf16 families'
    /// BFDOT kernels).
    pub fn kernel_from(&self, kernels: &[&'static Descriptor<F>], cpu: &CpuFeatures, m: usize) -> Result<Kernel<F>> {
        if let Some(kernel) =
            crate::matmul::select_from(kernels, cpu, m, Some(&self.packing), F::PREFERRED_LHS.as_ref())
        {
            return Ok(kernel);
        }
        match kernels.iter().find(|d| d.shape().may_read(&self.packing)) {
            Some(d) => Err(match d.resolve(cpu) {
                // It reads the weights but another LHS packing than the one the layer packs
                // activations in (the bf16 families' BFDOT kernels): the LHS's `mr`.
                Ok(k) if F::PREFERRED_LHS.is_some_and(|l| l != k.lhs_packing()) => {
                    Error::Unsupported { param: Param::Mr, value: k.packing().mr }
                }
                // It resolves, so another packing than the layer's at this vector length.
                Ok(k) => Error::PackingMismatch { weights: self.packing, kernel: k.rhs_packing() },
                Err(e) => e,
            }),
            None => match kernels.first().and_then(|d| d.packing_on(cpu).map(|p| p.rhs(d.shape().rhs))) {
                Some(kernel) => Err(Error::PackingMismatch { weights: self.packing, kernel }),
                // No kernel at all.
                None => Err(Error::Unsupported { param: Param::Nr, value: self.packing.nr }),
            },
        }
    }

    /// Bytes of scratch [`Linear::run`] and [`Linear::prepare`] need for `m` rows, on any CPU
    /// (the largest packed-activation size among the kernels these weights serve; 0 for the
    /// families that read the rows in place, unless an input scale is set).
    pub fn scratch_size(&self, m: usize) -> Result<usize> {
        self.scratch_size_with(F::kernels(), m)
    }

    /// [`Linear::scratch_size`] for the kernels of `kernels` that read these weights.
    pub fn scratch_size_with(&self, kernels: &[&'static Descriptor<F>], m: usize) -> Result<usize> {
        let mut size = 0;
        // Kernels of several tiers share an LHS layout: each layout's size once (the first
        // `seen.len()` layouts; any further one is sized again, which is only slower).
        let mut seen = [None::<crate::LhsPacking>; 8];
        for d in kernels.iter().filter(|d| d.shape().may_read(&self.packing)) {
            let s = d.shape();
            let p = Packing { mr: s.mr.max(), nr: self.packing.nr, kr: s.kr, sr: s.sr };
            let lhs = p.lhs(s.lhs);
            if F::PREFERRED_LHS.is_some_and(|l| l.format == lhs.format && l.mr != lhs.mr) {
                continue;
            }
            match seen.iter_mut().find(|x| x.is_none_or(|x| x == lhs)) {
                Some(Some(_)) => continue,
                Some(slot) => *slot = Some(lhs),
                None => {}
            }
            crate::matmul::check_depth::<F>(self.k, self.bl)?;
            let packed = if m == 0 { 0 } else { lhs.packed_size(m, self.k, self.bl)? };
            size = size.max(packed.checked_add(self.stage_size(&p, m)?).ok_or(Error::SizeOverflow)?);
        }
        Ok(size)
    }

    /// Bytes of the staging area of a call of `m` rows with packing `p`: none without an input
    /// scale; else one tile of `min(m, mr)` scaled rows (packed LHS) or all `m` rows (rows read
    /// in place), and the slack to align it.
    fn stage_size(&self, p: &Packing, m: usize) -> Result<usize> {
        if self.input_scale.is_none() || m == 0 || F::FUSED_INPUT_SCALE {
            return Ok(0);
        }
        let rows = if F::ROWS { m } else { p.mr.min(m) };
        let values = rows.checked_mul(self.k).ok_or(Error::SizeOverflow)?;
        let bytes = values.checked_mul(F::Src::SIZE).and_then(|b| b.checked_add(F::Src::SIZE - 1));
        bytes.ok_or(Error::SizeOverflow)
    }

    /// Packs the `m x k` activations `x` (dense rows) into `scratch` for the kernel chosen for
    /// `m` on `cpu` (the families that read the rows in place use `x` itself, or its scaled
    /// copy in `scratch`), ready to run on any split of the output. `m == 0` is an empty call
    /// (its runs write nothing), as in the kernels. Every activation must be finite, and with
    /// an input scale every scaled one: else [`Error::NonFinite`] on [`Buffer::Lhs`] at its
    /// index in `x` (the packers check a packed LHS, the family's row check the rows read in
    /// place).
    pub fn prepare<'s>(
        &self,
        cpu: &CpuFeatures,
        m: usize,
        x: &'s [F::Src],
        scratch: &'s mut [u8],
    ) -> Result<Prepared<'w, 's, F>> {
        self.prepare_on(self.kernel(cpu, m)?, m, x, scratch)
    }

    /// [`Linear::prepare`] with the kernel chosen among `kernels` ([`Linear::kernel_from`]).
    pub fn prepare_with<'s>(
        &self,
        kernels: &[&'static Descriptor<F>],
        cpu: &CpuFeatures,
        m: usize,
        x: &'s [F::Src],
        scratch: &'s mut [u8],
    ) -> Result<Prepared<'w, 's, F>> {
        self.prepare_on(self.kernel_from(kernels, cpu, m)?, m, x, scratch)
    }

    /// [`Linear::run`] with the kernel chosen among `kernels` ([`Linear::kernel_from`]), e.g. one
    /// tier's list (`qai8dxp_qsi4cxp::dotprod::KERNELS`) or a GEMV and a GEMM kernel named one
    /// by one (`&[&dotprod::DOTPROD_1X8, &dotprod::DOTPROD_16X8]`). The results are the bits
    /// [`Linear::run`] gives with the same kernel. A firmware that knows its core calls this
    /// (with [`Linear::scratch_size_with`]) instead of `run`, `prepare` and `scratch_size`, which
    /// search the family's whole catalogue: then the linker keeps only the named kernels
    /// (docs/porting.md, "Firmware size").
    pub fn run_with(
        &self,
        kernels: &[&'static Descriptor<F>],
        cpu: &CpuFeatures,
        m: usize,
        x: &[F::Src],
        out: &mut [F::Dst],
        scratch: &mut [u8],
    ) -> Result<()> {
        self.prepare_with(kernels, cpu, m, x, scratch)?.run(out)
    }

    /// `prepare` with `kernel`, which reads these weights.
    fn prepare_on<'s>(
        &self,
        kernel: Kernel<F>,
        m: usize,
        x: &'s [F::Src],
        scratch: &'s mut [u8],
    ) -> Result<Prepared<'w, 's, F>> {
        if kernel.rhs_packing() != self.packing {
            return Err(Error::PackingMismatch { weights: self.packing, kernel: kernel.rhs_packing() });
        }
        let p = kernel.packing();
        let needed = m.checked_mul(self.k).ok_or(Error::SizeOverflow)?;
        if x.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: x.len(), needed });
        }
        let x = &x[..needed];
        let size = kernel.lhs_packed_size(m, self.k, self.bl)?;
        let total = size.checked_add(self.stage_size(&p, m)?).ok_or(Error::SizeOverflow)?;
        if scratch.len() < total {
            return Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: scratch.len(), needed: total });
        }
        let (lhs, stage) = scratch[..total].split_at_mut(size);
        let lhs: &'s [F::Lhs] = if m == 0 {
            F::kernel_lhs(&[], &[])
        } else if F::ROWS {
            // The kernels (also the parts, which do not check) read these rows as they are.
            F::check_lhs_rows(F::kernel_lhs(x, &[]), m, self.k, self.k)?;
            match self.input_scale {
                None => F::kernel_lhs(x, &[]),
                Some(scale) => {
                    let rows = Self::stage(stage, m * self.k)?;
                    for (dst, src) in rows.chunks_exact_mut(self.k).zip(x.chunks_exact(self.k)) {
                        scale_row(src, scale, dst);
                    }
                    // A product that overflows is its activation's error.
                    F::check_lhs_rows(F::kernel_lhs(rows, &[]), m, self.k, self.k)?;
                    F::kernel_lhs(rows, &[])
                }
            }
        } else {
            match self.input_scale {
                None => F::pack_lhs(&p, m, self.k, self.bl, 0, x, self.k, lhs)?,
                Some(scale) if F::FUSED_INPUT_SCALE => {
                    F::pack_lhs_scaled(&p, m, self.k, self.bl, x, self.k, scale, lhs)?
                }
                Some(scale) => self.pack_scaled(&kernel, m, x, scale, lhs, stage)?,
            }
            F::kernel_lhs(&[], lhs)
        };
        Ok(Prepared { layer: *self, kernel, m, lhs, clamp: Clamp::NONE })
    }

    /// The first `len` activation values of the aligned middle of `stage`.
    fn stage(stage: &mut [u8], len: usize) -> Result<&mut [F::Src]> {
        // SAFETY: `F::Src` is f32, `half::f16` or `half::bf16` (`Element` is sealed): plain
        // values of 4 or 2 bytes for which every bit pattern is valid and that need no drop,
        // so viewing the aligned middle of the byte buffer as them is sound.
        let (_, stage, _) = unsafe { stage.align_to_mut::<F::Src>() };
        let given = stage.len();
        stage.get_mut(..len).ok_or(Error::BufferTooShort { buffer: Buffer::LhsPacked, given, needed: len })
    }

    /// Packs the `m` dense rows `x` multiplied by `scale` (one per depth) for `kernel`, one tile
    /// of `mr` rows at a time through `stage` (at least [`Linear::stage_size`] bytes): each
    /// tile's products go to `stage`, then the family's packer packs them as rows `t..` of the
    /// call (the same bytes as one call over all the scaled rows).
    fn pack_scaled(
        &self,
        kernel: &Kernel<F>,
        m: usize,
        x: &[F::Src],
        scale: &[f32],
        lhs: &mut [u8],
        stage: &mut [u8],
    ) -> Result<()> {
        let (p, k) = (kernel.packing(), self.k);
        let stage = Self::stage(stage, p.mr.min(m) * k)?;
        for t in (0..m).step_by(p.mr) {
            let r = p.mr.min(m - t);
            for (dst, src) in stage.chunks_exact_mut(k).zip(x[t * k..(t + r) * k].chunks_exact(k)) {
                scale_row(src, scale, dst);
            }
            let at = kernel.lhs_packed_offset(t, k, self.bl)?;
            F::pack_lhs(&p, r, k, self.bl, t, &stage[..r * k], k, &mut lhs[at..]).map_err(|e| match e {
                // The index into the activations, not into the staging rows.
                Error::NonFinite { buffer: Buffer::Lhs, index } => {
                    Error::NonFinite { buffer: Buffer::Lhs, index: index + t * k }
                }
                e => e,
            })?;
        }
        Ok(())
    }

    /// `out = x W^T + b` for `m` rows: packs `x` (`m x k`, dense rows) into `scratch`
    /// ([`Linear::scratch_size`] bytes) and writes the `m x n` output `out` (dense rows). A NaN
    /// or infinite activation is [`Error::NonFinite`] at its index in `x`, nothing written
    /// ([`Linear::prepare`]).
    pub fn run(&self, cpu: &CpuFeatures, m: usize, x: &[F::Src], out: &mut [F::Dst], scratch: &mut [u8]) -> Result<()> {
        self.prepare(cpu, m, x, scratch)?.run(out)
    }
}

/// A prepared call of a [`Linear`] layer: the activations are packed (in the caller's scratch)
/// or read in place, the kernel is chosen; run it whole ([`Prepared::run`]) or in parts.
#[derive(Debug)]
pub struct Prepared<'w, 's, F: Operator> {
    layer: Linear<'w, F>,
    kernel: Kernel<F>,
    m: usize,
    lhs: &'s [F::Lhs],
    clamp: Clamp,
}

impl<'w, 's, F: Operator> Prepared<'w, 's, F> {
    /// The same call with an output clamp (default: none).
    #[must_use]
    pub fn with_clamp(mut self, clamp: Clamp) -> Self {
        self.clamp = clamp;
        self
    }

    /// The kernel this call runs.
    pub fn kernel(&self) -> Kernel<F> {
        self.kernel
    }

    /// Rows of the call.
    pub fn m(&self) -> usize {
        self.m
    }

    /// The activations as the kernel reads them: the packed LHS in the scratch, or the rows
    /// read in place (`x` itself, or its scaled copy in the scratch), dense rows of `k`.
    pub fn lhs(&self) -> &'s [F::Lhs] {
        self.lhs
    }

    /// Writes the whole `m x n` output (dense rows) into `out`.
    pub fn run(&self, out: &mut [F::Dst]) -> Result<()> {
        let (m, n) = (self.m, self.layer.n);
        let args = crate::MatmulArgs::new(m, n, self.layer.k)
            .with_block_len(self.layer.bl)
            .with_clamp(self.clamp)
            .with_params(self.layer.params);
        self.kernel.run(self.lhs, self.layer.weights, out, &args)
    }

    /// Cuts the `m x n` output into at most `parts` (`1..=MAX_PARTS`) rectangles with starts on
    /// the kernel's `m_step` and `n_step` and about equal numbers of steps: a grid of `pr` row
    /// bands by `pc` column bands (`pr * pc <= parts`) chosen to make the largest rectangle as
    /// small as possible, then the fewest rectangles. Every output element is in exactly one.
    /// [`Error::SizeOverflow`] as [`split`].
    pub fn split(&self, parts: usize) -> Result<heapless::Vec<Rect, MAX_PARTS>> {
        split(self.m, self.layer.n, self.kernel.m_step(), self.kernel.n_step(), parts)
    }

    /// The rectangles of [`Prepared::split`] as [`Part`]s writing into `out` (the whole
    /// `m x n` output, dense rows). Each part is `Send` and runs once; the parts write disjoint
    /// elements, so they may run concurrently on any threads, in any order.
    pub fn parts<'o>(&'o self, out: &'o mut [F::Dst], parts: usize) -> Result<heapless::Vec<Part<'o, F>, MAX_PARTS>> {
        let (m, n, k, bl) = (self.m, self.layer.n, self.layer.k, self.layer.bl);
        let needed = m.checked_mul(n).ok_or(Error::SizeOverflow)?;
        if out.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Dst, given: out.len(), needed });
        }
        let params = self.layer.params.check(k)?;
        let p = self.kernel.packing();
        // Elements of `lhs` from one LHS tile (packed) or row (read in place) to the next.
        let lhs_step = match params.lhs_stride() {
            None => self.kernel.lhs_packing().tile_stride(k, bl)?,
            Some(stride) => stride,
        };
        let rhs_tile = self.kernel.rhs_packing().tile_stride(k, bl)?;
        let dst = out.as_mut_ptr();
        let mut v = heapless::Vec::new();
        for r in self.split(parts)? {
            // In bounds: `r` lies inside `m x n` and starts on tile boundaries (`m_step` is a
            // multiple of `mr`, `n_step` of `nr`), so these offsets are inside the LHS tiles
            // (or rows) `prepare` packed (or was given), the weights and `out`.
            let args = UncheckedArgs {
                m: r.m,
                n: r.n,
                k,
                bl,
                lhs: self.lhs[r.m_idx / p.mr * lhs_step..].as_ptr().cast(),
                rhs_packed: self.layer.weights[r.n_idx / p.nr * rhs_tile..].as_ptr(),
                dst: dst.wrapping_add(r.m_idx * n + r.n_idx),
                dst_stride_row: F::Dst::SIZE * n,
                clamp_min: self.clamp.min(),
                clamp_max: self.clamp.max(),
                params,
            };
            // `split` returns at most MAX_PARTS rectangles.
            let _ = v.push(Part { kernel: self.kernel, rect: r, args, output: PhantomData });
        }
        Ok(v)
    }

    /// Runs the call on up to `threads` `std::thread::scope` threads, one [`Part`] each (the
    /// calling thread runs one of them), into `out` (the whole `m x n` output).
    #[cfg(feature = "std")]
    pub fn run_parallel(&self, out: &mut [F::Dst], threads: usize) -> Result<()> {
        run_scoped(self.parts(out, threads)?, Part::run);
        Ok(())
    }
}

/// Runs `parts` on `std::thread::scope` threads, one each, the last on the calling thread.
#[cfg(feature = "std")]
fn run_scoped<P: Send>(mut parts: heapless::Vec<P, MAX_PARTS>, run: fn(P)) {
    let first = parts.pop();
    std::thread::scope(|s| {
        for part in parts {
            s.spawn(move || run(part));
        }
        if let Some(part) = first {
            run(part);
        }
    });
}

/// One rectangle of a [`Prepared`] call, ready to run on any thread ([`Prepared::parts`]).
pub struct Part<'o, F: Operator> {
    kernel: Kernel<F>,
    rect: Rect,
    args: UncheckedArgs<F::Dst, F::Params>,
    output: PhantomData<&'o mut [F::Dst]>,
}

// SAFETY: a `Part` is the only handle to its rectangle of the output (the parts of one call
// are disjoint and `Prepared::parts` borrows the output mutably for their lifetime) and reads
// only the activations and the packed weights, which nothing writes while the parts live
// (shared borrows). Moving it to another thread therefore shares nothing mutable.
unsafe impl<F: Operator> Send for Part<'_, F> {}

impl<F: Operator> Part<'_, F> {
    /// The output rectangle this part writes.
    pub fn rect(&self) -> Rect {
        self.rect
    }

    /// Computes the rectangle.
    pub fn run(self) {
        // SAFETY: the kernel was resolved for the call's `CpuFeatures`, which can only hold
        // features the CPU has; `m, n, k >= 1` (`split` makes no empty rectangle) and `bl`
        // passed the family's checks; the parameters passed `Params::check`; the pointers were
        // derived in `Prepared::parts` from the activations (packed tiles or rows of `k`
        // elements `stride` apart), the packed weights and the output, at the rectangle's
        // tiles, which hold `ceil(m/mr)` / `ceil(n/nr)` whole tiles (or the `m` rows) from
        // there; the output rectangle (rows `n` elements, `F::Dst::SIZE * n` bytes, apart) lies
        // inside `out`, is written by this part only, and does not overlap the inputs (separate
        // borrows); the clamp is valid.
        unsafe { self.kernel.run_unchecked(&self.args) }
    }
}

impl<F: Operator> core::fmt::Debug for Part<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Part").field("kernel", &self.kernel.name()).field("rect", &self.rect).finish()
    }
}

/// `out[j] = x[j] * scale[j]` in f32, rounded to the element type (all three slices of one
/// length).
#[inline]
fn scale_row<S: Element>(x: &[S], scale: &[f32], out: &mut [S]) {
    for ((o, &v), &s) in out.iter_mut().zip(x).zip(scale) {
        *o = S::from_f32(v.to_f32() * s);
    }
}

/// `Linear::pack` for the families with per-channel weights of the RHS format `$format`
/// (`qsi4cxp`: int4, `qsi8cxp`: int8; one f32 scale per channel), read from `$source`.
macro_rules! linear_pack_per_channel {
    ($format:ident, $source:ident, $what:literal: $($family:ident),+) => {$(
        impl<'w> Linear<'w, $family> {
            /// Bytes of packed weights for `n` channels of depth `k`.
            pub fn packed_size(n: usize, k: usize) -> Result<usize> {
                Self::size(n, k, 0)
            }

            #[doc = concat!("Packs ", $what, " weights with per-channel scales and an optional bias ([`rhs::",
                stringify!($format), "::pack`](crate::rhs::", stringify!($format), "::pack)) into `buf` (at least ",
                "[`Linear::packed_size`] bytes).")]
            pub fn pack(
                n: usize,
                k: usize,
                w: &$source<'_>,
                scale: &[f32],
                bias: Option<&[f32]>,
                buf: &'w mut [u8],
            ) -> Result<Self> {
                let size = Self::packed_size(n, k)?;
                $format::pack(&Self::RHS, n, k, w, scale, bias, buf)?;
                Self::from_packed(n, k, 0, &buf[..size])
            }
        }
    )+};
}

linear_pack_per_channel!(qsi4cxp, Int4Source, "int4": Qai8dxpQsi4cxp, F16Qai8dxpQsi4cxp, Bf16Qai8dxpQsi4cxp);

/// `Linear::pack` for the families with `qsi4c32p` weights (int4, one bf16 scale per block).
macro_rules! linear_pack_qsi4c32p {
    ($($family:ident),+) => {$(
        impl<'w> Linear<'w, $family> {
            /// Bytes of packed weights for `n` channels of depth `k`, blocks of `bl`.
            pub fn packed_size(n: usize, k: usize, bl: usize) -> Result<usize> {
                Self::size(n, k, bl)
            }

            /// Packs int4 weights with bf16 block scales and an optional bias
            /// ([`rhs::qsi4c32p::pack`](crate::rhs::qsi4c32p::pack)) into `buf`.
            pub fn pack(
                n: usize,
                k: usize,
                bl: usize,
                w: &Int4Source<'_>,
                scale: &BlockScales<'_, bf16>,
                bias: Option<&[f32]>,
                buf: &'w mut [u8],
            ) -> Result<Self> {
                let size = Self::packed_size(n, k, bl)?;
                qsi4c32p::pack(&Self::RHS, n, k, bl, w, scale, bias, buf)?;
                Self::from_packed(n, k, bl, &buf[..size])
            }
        }
    )+};
}

linear_pack_qsi4c32p!(Qai8dxpQsi4c32p, Bf16Qai8dxpQsi4c32p);

impl<'w> Linear<'w, Qsi8d32pQsi4c32p> {
    /// Bytes of packed weights for `n` channels of depth `k`, blocks of `bl`.
    pub fn packed_size(n: usize, k: usize, bl: usize) -> Result<usize> {
        Self::size(n, k, bl)
    }

    /// Packs GGML `Q4_0`-style blocks (`n` rows of `w_stride` bytes;
    /// [`rhs::qsi4c32pscalef16::pack`](crate::rhs::qsi4c32pscalef16::pack)) into `buf`.
    pub fn pack(n: usize, k: usize, bl: usize, w: &[u8], w_stride: usize, buf: &'w mut [u8]) -> Result<Self> {
        let size = Self::packed_size(n, k, bl)?;
        qsi4c32pscalef16::pack(&Self::RHS, n, k, bl, w, w_stride, buf)?;
        Self::from_packed(n, k, bl, &buf[..size])
    }
}

linear_pack_per_channel!(qsi8cxp, Int8Source, "int8": Qai8dxpQsi8cxp, F16Qai8dxpQsi8cxp);

/// `Linear::pack` for the asymmetric int4 families (`qai4c32p` weights).
macro_rules! linear_pack_qai4c32p {
    ($($family:ident),+) => {$(
        impl<'w> Linear<'w, $family> {
            /// Bytes of packed weights for `n` channels of depth `k`, blocks of `bl`.
            pub fn packed_size(n: usize, k: usize, bl: usize) -> Result<usize> {
                Self::size(n, k, bl)
            }

            /// Packs asymmetric int4 blocks ([`rhs::qai4c32p::pack`](crate::rhs::qai4c32p::pack):
            /// `n` rows of `w_stride` bytes of s0s1 codes, `n * k/bl` f32 offsets and scales, an
            /// optional bias) into `buf`.
            #[allow(clippy::too_many_arguments)]
            pub fn pack(
                n: usize,
                k: usize,
                bl: usize,
                w: &[u8],
                w_stride: usize,
                zero: &[f32],
                scale: &[f32],
                bias: Option<&[f32]>,
                buf: &'w mut [u8],
            ) -> Result<Self> {
                let size = Self::packed_size(n, k, bl)?;
                qai4c32p::pack(&Self::RHS, n, k, bl, w, w_stride, zero, scale, bias, buf)?;
                Self::from_packed(n, k, bl, &buf[..size])
            }
        }
    )+};
}

linear_pack_qai4c32p!(Qsi8d32pQai4c32p, F16Qsi8d32pQai4c32p);

/// The 2-bit family's layer. Its bits depend on `m`: a call of one row runs a GEMV kernel,
/// which scales in KleidiAI's GEMV order, a call of several rows a GEMM kernel, in KleidiAI's
/// GEMM order ([`qai8dxp_qsu2cxp`](crate::qai8dxp_qsu2cxp)); one row's outputs then differ in
/// the last bits (up to about 1,000 ulp where the bias cancels) between the two. For results
/// independent of `m`, run the kernels of one packing ([`Linear::run_with`] with
/// `qai8dxp_qsu2cxp::dotprod::KERNELS` filtered to the GEMM ones, or a GEMM kernel named).
impl<'w> Linear<'w, Qai8dxpQsu2cxp> {
    /// Bytes of packed weights for `n` channels of depth `k` (a multiple of 32).
    pub fn packed_size(n: usize, k: usize) -> Result<usize> {
        Self::size(n, k, 0)
    }

    /// Packs 2-bit codes ([`rhs::qsu2cxp::pack`](crate::rhs::qsu2cxp::pack): `n` rows of
    /// `w_stride` bytes, four codes per byte, `n` f32 scales, an optional bias, the table or
    /// `None` for the default `{-2, -1, 0, 1}`) into `buf`; the layer keeps the table.
    #[allow(clippy::too_many_arguments)]
    pub fn pack(
        n: usize,
        k: usize,
        w: &[u8],
        w_stride: usize,
        scale: &[f32],
        bias: Option<&[f32]>,
        lut: Option<&[i32; 4]>,
        buf: &'w mut [u8],
    ) -> Result<Self> {
        let size = Self::packed_size(n, k)?;
        qsu2cxp::pack(&Self::RHS, n, k, w, w_stride, scale, bias, lut, buf)?;
        Self::from_packed(n, k, 0, &buf[..size])?.with_lut(*lut.unwrap_or(&qsu2cxp::DEFAULT_LUT))
    }

    /// The same layer with look-up table `lut` (for weights packed elsewhere, e.g. by
    /// KleidiAI's packer, with a table other than the default); every entry must lie in
    /// `[-64, 63]` ([`Error::LutOutOfRange`]).
    pub fn with_lut(mut self, lut: [i32; 4]) -> Result<Self> {
        self.params = Lut(lut).check(self.k)?;
        Ok(self)
    }

    /// The look-up table the kernels apply to the weight codes: the one given to
    /// [`pack`](Self::pack) or [`with_lut`](Self::with_lut), else [`qsu2cxp::DEFAULT_LUT`].
    pub const fn lut(&self) -> [i32; 4] {
        self.params.0
    }
}

impl<F: Operator> Linear<'_, F> {
    /// The preferred RHS packing's parameters (for the packers, which ignore `mr`).
    const RHS: Packing = F::PREFERRED_RHS.packing();
}

/// `len` steps in `bands` near-equal contiguous ranges: range `i` as `(first step, steps)`.
fn band(len: usize, bands: usize, i: usize) -> (usize, usize) {
    let (q, r) = (len / bands, len % bands);
    (i * q + i.min(r), q + usize::from(i < r))
}

/// See [`Prepared::split`]: `m x n` in steps of `ms x ns`, at most `parts` rectangles (none
/// when `m`, `n`, `ms` or `ns` is 0).
///
/// [`Error::SizeOverflow`] when `m * n`, or `m` or `n` rounded up to a whole number of steps,
/// does not fit in `usize` (no output of that size can exist).
pub fn split(m: usize, n: usize, ms: usize, ns: usize, parts: usize) -> Result<heapless::Vec<Rect, MAX_PARTS>> {
    let mut out = heapless::Vec::new();
    if m == 0 || n == 0 || ms == 0 || ns == 0 {
        return Ok(out);
    }
    let (mt, nt) = (m.div_ceil(ms), n.div_ceil(ns));
    // Every product below is at most one of these three (steps x step sizes, steps x steps).
    m.checked_mul(n).and(mt.checked_mul(ms)).and(nt.checked_mul(ns)).ok_or(Error::SizeOverflow)?;
    let mul = |a: usize, b: usize| a.checked_mul(b).ok_or(Error::SizeOverflow);
    let parts = parts.clamp(1, MAX_PARTS);
    // The grid whose largest rectangle (in steps) is smallest; then the fewest rectangles.
    let mut best = (usize::MAX, usize::MAX, 1, 1);
    for pr in 1..=parts.min(mt) {
        let pc = (parts / pr).min(nt);
        let largest = mul(mt.div_ceil(pr), nt.div_ceil(pc))?;
        let key = (largest, mul(pr, pc)?, pr, pc);
        if key < best {
            best = key;
        }
    }
    let (_, _, pr, pc) = best;
    for i in 0..pr {
        let (r0, rs) = band(mt, pr, i);
        for j in 0..pc {
            let (c0, cs) = band(nt, pc, j);
            let (m_idx, n_idx) = (mul(r0, ms)?, mul(c0, ns)?);
            let rect = Rect { m_idx, n_idx, m: mul(rs, ms)?.min(m - m_idx), n: mul(cs, ns)?.min(n - n_idx) };
            // At most `pr * pc <= MAX_PARTS` rectangles.
            let _ = out.push(rect);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_every_element_once_on_step_boundaries() {
        for (m, n, ms, ns) in [(1, 4096, 1, 16), (16, 384, 16, 4), (40, 1536, 24, 4), (7, 13, 4, 8), (1, 3, 1, 4)] {
            for parts in 1..=70 {
                let rects = split(m, n, ms, ns, parts).unwrap();
                assert!(!rects.is_empty() && rects.len() <= parts.clamp(1, MAX_PARTS));
                let mut seen = [[0u8; 4096]; 40];
                for r in &rects {
                    assert!(r.m > 0 && r.n > 0 && r.m_idx % ms == 0 && r.n_idx % ns == 0, "{r:?}");
                    for row in &mut seen[r.m_idx..r.m_idx + r.m] {
                        row[r.n_idx..r.n_idx + r.n].iter_mut().for_each(|s| *s += 1);
                    }
                }
                assert!(seen[..m].iter().all(|row| row[..n].iter().all(|&s| s == 1)), "{m} {n} {parts}");
            }
        }
    }

    #[test]
    fn split_balances_work() {
        // 4096 columns in steps of 16 over 8 parts: 8 column bands of 32 steps each.
        let rects = split(1, 4096, 1, 16, 8).unwrap();
        assert_eq!(rects.len(), 8);
        assert!(rects.iter().all(|r| r.n == 512));
        // 64 rows x 384 columns, steps 16 x 4, 4 parts: the largest part holds a quarter.
        let rects = split(64, 384, 16, 4, 4).unwrap();
        assert!(rects.iter().all(|r| r.m * r.n == 64 * 384 / 4), "{rects:?}");
    }

    #[test]
    fn split_near_usize_max_is_exact_or_size_overflow() {
        // Products of the grid that overflow: an error, never a panic or an empty rectangle
        // (this panicked in debug builds and gave rectangles with m = 0 in release).
        for (m, n, ms, ns) in [
            (usize::MAX, 1, 16, 4),    // m rounded up to whole 16-row steps
            (1, usize::MAX - 2, 1, 4), // n rounded up to whole 4-column steps
            (usize::MAX, usize::MAX, 1, 1),
            (1 << 40, 1 << 30, 16, 4), // m * n
        ] {
            for parts in [1, 3, 8, MAX_PARTS] {
                assert_eq!(split(m, n, ms, ns, parts), Err(Error::SizeOverflow), "{m} {n} {ms} {ns} {parts}");
            }
        }
        // Just inside: the rectangles tile the whole output exactly, on step boundaries.
        for (m, n, ms, ns) in [(usize::MAX - 15, 1, 16, 4), (1, usize::MAX - 3, 1, 4), (usize::MAX, 1, 1, 4)] {
            for parts in [1, 3, 8, MAX_PARTS] {
                let rects = split(m, n, ms, ns, parts).unwrap();
                let rows: u128 = rects.iter().filter(|r| r.n_idx == 0).map(|r| r.m as u128).sum();
                let cols: u128 = rects.iter().filter(|r| r.m_idx == 0).map(|r| r.n as u128).sum();
                assert_eq!((rows, cols), (m as u128, n as u128), "{m} {n} {parts}: {rects:?}");
                for r in &rects {
                    assert!(r.m > 0 && r.n > 0 && r.m_idx % ms == 0 && r.n_idx % ns == 0, "{r:?}");
                    assert!(r.m_idx.checked_add(r.m).is_some_and(|e| e <= m), "{r:?}");
                    assert!(r.n_idx.checked_add(r.n).is_some_and(|e| e <= n), "{r:?}");
                }
            }
        }
    }
}
