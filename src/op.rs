//! Operator layer: a linear layer (`y = x W^T + b`, clamped) over any family, with the
//! kernel choice, the activation quantization and the buffer sizes done for you. `no_std`, no
//! allocation: the caller provides the packed-weight buffer and a scratch buffer.
//!
//! * [`Linear`] holds weights packed once, in the family's preferred RHS packing, which both
//!   the decode (`m = 1`) and the prefill (`m > 1`) kernels of every tier consume. The value
//!   remembers the family (its type), `n`, `k` and `bl`, so packed weights can only reach
//!   kernels of their own packing.
//! * [`Linear::run`] quantizes and packs `m` rows of activations into the scratch buffer
//!   ([`Linear::scratch_size`]), picks the best kernel for `m` on the CPU and computes the
//!   `m x n` output.
//! * For threads: [`Linear::prepare`] does the quantization once and returns a [`Prepared`]
//!   call; [`Prepared::parts`] cuts the output into at most `p` rectangles aligned to the
//!   kernel's steps with balanced work, each a [`Part`] that any thread can run (an RTOS
//!   caller runs them on its own threads); with the `std` feature [`Prepared::run_parallel`]
//!   runs them on `std::thread::scope` threads. Every output element is computed by the same
//!   kernel whatever the split, so the results are bit-identical for any split.
//! * Activation-aware scaling (AWQ): [`Linear::with_input_scale`] gives the layer one f32
//!   multiplier per input channel, applied to the activations on every call before they are
//!   quantized; the weights are quantized from `W / scale` ([`quant::divide_depths`](crate::quant::divide_depths)),
//!   so the layer still computes `x W^T + b` with the heavily used channels' weights quantized
//!   more finely.
//!
//! * From float weights in one call: each family's `Linear::quantize_pack` (and
//!   [`QuantizePack`], for code generic over the families) quantizes by
//!   [`quant`](crate::quant) into a caller workspace and packs (module `quantize`'s table gives
//!   each family's format and method).
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
use crate::matmul::{Clamp, Family, Kernel, UncheckedArgs};
use crate::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use crate::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use crate::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use crate::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
use crate::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
use crate::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use crate::rhs::qsi4c32p::BlockScales;
use crate::rhs::qsi8cxp::Int8Source;
use crate::rhs::{Int4Source, qai4c32p, qsi4c32p, qsi4c32pscalef16, qsi4cxp, qsi8cxp, qsu2cxp};
use crate::{CpuFeatures, Packing};

mod float;
mod quantize;

pub use float::{FloatLinear, FloatOperator, FloatPart, FloatPrepared};
pub use quantize::QuantizePack;

/// Most rectangles [`Prepared::parts`] cuts an output into.
pub const MAX_PARTS: usize = 64;

/// A family the operator layer runs: its preferred weight packing and its activation packer.
/// Implemented by every family of the crate (and only by them).
pub trait Operator: Family {
    /// The RHS packing [`Linear`] packs weights with (the family's `PREFERRED_RHS_PACKING`),
    /// consumed by its GEMV and GEMM kernels.
    const RHS_PACKING: Packing;

    /// The activation element type: `f32`, or [`half::f16`] / [`half::bf16`] for the families
    /// named `f16_...` / `bf16_...` (whose outputs, [`Family::Dst`], are of the same type).
    type Src: Element;

    /// Quantizes and packs `m` rows of `x` (`x_stride` elements apart) for packing `p`, the
    /// first as row `m_idx_start` (a multiple of `mr`; `out` starts at its tile).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn quantize_pack(
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
    /// ([`Operator::quantize_pack_scaled`]); else [`Linear::with_input_scale`] stages the scaled
    /// rows in the scratch.
    #[doc(hidden)]
    const FUSED_INPUT_SCALE: bool = false;

    /// [`Operator::quantize_pack`] of `x[i][j] * scale[j]` (only called when
    /// [`Operator::FUSED_INPUT_SCALE`]).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn quantize_pack_scaled(
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
}

/// `Operator` for a family whose activations are `qai8dxp` (per-row int8, no blocks), of type
/// `$src` quantized by `qai8dxp::$packer`.
/// (`fused`: the f32 packer, which also multiplies by an input scale in its own passes.)
macro_rules! qai8dxp_operator {
    ($($family:ident in $module:ident: $src:ty => $packer:ident $(, $fused:ident)?);+ $(;)?) => {$(
        impl Operator for $family {
            const RHS_PACKING: Packing = crate::$module::PREFERRED_RHS_PACKING;
            type Src = $src;
            fn quantize_pack(
                p: &Packing, m: usize, k: usize, _bl: usize, at: usize, x: &[$src], s: usize, out: &mut [u8],
            ) -> Result<()> {
                qai8dxp::$packer(p, m, k, at, x, s, out)
            }
            $(qai8dxp_operator!(@$fused);)?
        }
    )+};
    (@fused) => {
        const FUSED_INPUT_SCALE: bool = true;
        fn quantize_pack_scaled(
            p: &Packing, m: usize, k: usize, _bl: usize, x: &[f32], s: usize, scale: &[f32], out: &mut [u8],
        ) -> Result<()> {
            qai8dxp::quantize_pack_prescaled(p, m, k, 0, x, s, scale, out)
        }
    };
}

qai8dxp_operator!(
    Qai8dxpQsi4cxp in qai8dxp_qsi4cxp: f32 => quantize_pack, fused;
    Qai8dxpQsi4c32p in qai8dxp_qsi4c32p: f32 => quantize_pack, fused;
    Qai8dxpQsi8cxp in qai8dxp_qsi8cxp: f32 => quantize_pack, fused;
    F16Qai8dxpQsi4cxp in f16_qai8dxp_qsi4cxp: f16 => quantize_pack_f16;
    F16Qai8dxpQsi8cxp in f16_qai8dxp_qsi8cxp: f16 => quantize_pack_f16;
    Bf16Qai8dxpQsi4cxp in bf16_qai8dxp_qsi4cxp: bf16 => quantize_pack_bf16;
    Bf16Qai8dxpQsi4c32p in bf16_qai8dxp_qsi4c32p: bf16 => quantize_pack_bf16;
    Qai8dxpQsu2cxp in qai8dxp_qsu2cxp: f32 => quantize_pack, fused;
);

impl Operator for Qsi8d32pQsi4c32p {
    const RHS_PACKING: Packing = crate::qsi8d32p_qsi4c32p::PREFERRED_RHS_PACKING;
    type Src = f32;
    #[allow(clippy::too_many_arguments)]
    fn quantize_pack(
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
}

/// `Operator` for the asymmetric int4 families (`qsi8d32pscalef32` activations of type `$src`
/// quantized by `qsi8d32pscalef32::$packer`).
macro_rules! qai4c32p_operator {
    ($($family:ident in $module:ident: $src:ty => $packer:ident),+ $(,)?) => {$(
        impl Operator for $family {
            const RHS_PACKING: Packing = crate::$module::PREFERRED_RHS_PACKING;
            type Src = $src;
            fn quantize_pack(
                p: &Packing, m: usize, k: usize, bl: usize, at: usize, x: &[$src], s: usize, out: &mut [u8],
            ) -> Result<()> {
                qsi8d32pscalef32::$packer(p, m, k, bl, at, x, s, out)
            }
        }
    )+};
}

qai4c32p_operator!(
    Qsi8d32pQai4c32p in qsi8d32p_qai4c32p: f32 => quantize_pack,
    F16Qsi8d32pQai4c32p in f16_qsi8d32p_qai4c32p: f16 => quantize_pack_f16,
);

/// A linear layer of family `F`: `n` output channels over depth `k` (`bl`: the block length of
/// the per-block families, 0 otherwise), with its weights packed in `F::RHS_PACKING` in a buffer
/// the caller owns. The 2-bit family's layer also carries its look-up table
/// ([`Linear::lut`]).
pub struct Linear<'w, F: Operator> {
    weights: &'w [u8],
    n: usize,
    k: usize,
    bl: usize,
    lut: [i32; 4],
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
            .field("lut", &self.lut)
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
    /// Bytes of packed weights for `n` channels of depth `k` (`bl` for the per-block families),
    /// after the checks every kernel of the packing makes of `k` and `bl`.
    fn size(n: usize, k: usize, bl: usize) -> Result<usize> {
        if n == 0 {
            return Err(Error::ZeroDim { dim: Dim::N });
        }
        // From the family and its packing, not from a kernel of the catalogue: a firmware that
        // runs named kernels ([`Linear::run_with`]) must not link the others through here.
        crate::matmul::check_depth::<F>(k, bl)?;
        // The activations' tiles of this depth have a size too.
        F::lhs_tile_stride(k, bl, &F::RHS_PACKING)?;
        let tile = F::rhs_tile_stride(k, bl, &F::RHS_PACKING)?;
        n.div_ceil(F::RHS_PACKING.nr).checked_mul(tile).ok_or(Error::SizeOverflow)
    }

    /// Bytes of packed weights for `n` channels of depth `k` (`bl`: the block length of the
    /// per-block families, 0 for the others): each family's `packed_size`, for code generic
    /// over the families (the C layer).
    pub fn weights_size(n: usize, k: usize, bl: usize) -> Result<usize> {
        Self::size(n, k, bl)
    }

    /// Wraps weights packed earlier (by the `pack` function of this family's `Linear`, or by
    /// KleidiAI's packer with the same packing) for `n` channels of depth `k` (`bl` for the
    /// per-block families, else 0). Checks the shape and the length; the bytes are trusted to
    /// be such a packing (any bytes are memory-safe, wrong ones give wrong numbers).
    pub fn from_packed(n: usize, k: usize, bl: usize, weights: &'w [u8]) -> Result<Self> {
        let size = Self::size(n, k, bl)?;
        if weights.len() < size {
            return Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: weights.len(), needed: size });
        }
        Ok(Linear {
            weights: &weights[..size],
            n,
            k,
            bl,
            lut: qsu2cxp::DEFAULT_LUT,
            input_scale: None,
            family: PhantomData,
        })
    }

    /// The look-up table the kernels apply to the weight codes: the one given to
    /// `Linear::<Qai8dxpQsu2cxp>::pack` or [`with_lut`](Linear::with_lut), else (and for every
    /// other family, which ignores it) [`qsu2cxp::DEFAULT_LUT`].
    pub const fn lut(&self) -> [i32; 4] {
        self.lut
    }

    /// The same layer with per-input-channel activation multipliers (activation-aware
    /// scaling, AWQ): every call quantizes `x[i][j] * scale[j]` instead of `x[i][j]`, the product
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
    /// min/max pass and one in the quantizing pass, no extra memory); the other families
    /// multiply one tile of `mr` rows at a time into a staging area at the end of the scratch
    /// ([`Linear::scratch_size`] counts it) and pack that. A product that is not finite is
    /// reported as [`Error::NonFinite`] at its activation's index.
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

    /// The error for a family without kernels of its own `RHS_PACKING`: never returned (every
    /// family's scalar tier serves its preferred packing on every target).
    const NO_KERNEL: Error = Error::Unsupported { param: Param::Nr, value: F::RHS_PACKING.nr };

    /// The kernel [`Linear::run`] uses for `m` rows on `cpu`: a GEMV kernel for `m = 1`, a
    /// GEMM kernel otherwise, of the highest tier `cpu` has.
    pub fn kernel(&self, cpu: &CpuFeatures, m: usize) -> Result<&'static Kernel<F>> {
        crate::matmul::select_for::<F>(cpu, m, &F::RHS_PACKING).ok_or(Self::NO_KERNEL)
    }

    /// Bytes of scratch [`Linear::run`] and [`Linear::prepare`] need for `m` rows, on any CPU
    /// (the largest packed-activation size among the kernels these weights serve).
    pub fn scratch_size(&self, m: usize) -> Result<usize> {
        self.scratch_size_with(F::kernels(), m)
    }

    /// Quantizes and packs the `m x k` activations `x` (dense rows) into `scratch` for the
    /// kernel chosen for `m` on `cpu`, ready to run on any split of the output. `m == 0` is an
    /// empty call (its runs write nothing), as in the kernels.
    pub fn prepare<'s>(
        &self,
        cpu: &CpuFeatures,
        m: usize,
        x: &[F::Src],
        scratch: &'s mut [u8],
    ) -> Result<Prepared<'w, 's, F>> {
        self.prepare_on(self.kernel(cpu, m)?, cpu, m, x, scratch)
    }

    /// [`Linear::kernel`] among `kernels` only: the best of them for `m` rows on `cpu` that
    /// consumes these weights. [`Error::UnsupportedCpu`] when `cpu` runs none of those (with the
    /// feature the first of them needs), [`Error::Unsupported`] (`Nr`) when none consumes this
    /// packing.
    pub fn kernel_from(
        &self,
        kernels: &[&'static Kernel<F>],
        cpu: &CpuFeatures,
        m: usize,
    ) -> Result<&'static Kernel<F>> {
        if let Some(kernel) = crate::matmul::select_from(kernels, cpu, m, &F::RHS_PACKING) {
            return Ok(kernel);
        }
        let serving = kernels.iter().find(|k| k.packing().same_rhs(&F::RHS_PACKING)).ok_or(Self::NO_KERNEL)?;
        Err(serving.missing_feature(cpu).map_or(Self::NO_KERNEL, |needs| Error::UnsupportedCpu { needs }))
    }

    /// [`Linear::scratch_size`] for the kernels of `kernels` that consume these weights.
    pub fn scratch_size_with(&self, kernels: &[&'static Kernel<F>], m: usize) -> Result<usize> {
        let mut size = 0;
        for k in kernels.iter().filter(|k| k.packing().same_rhs(&F::RHS_PACKING)) {
            let packed = k.lhs_packed_size(m, self.k, self.bl)?;
            size = size.max(packed.checked_add(self.stage_size(&k.packing(), m)?).ok_or(Error::SizeOverflow)?);
        }
        Ok(size)
    }

    /// Bytes of the staging area of a call of `m` rows with packing `p`: none without an input
    /// scale, else one tile of `min(m, mr)` scaled rows (and the slack to align it).
    fn stage_size(&self, p: &Packing, m: usize) -> Result<usize> {
        if self.input_scale.is_none() || m == 0 || F::FUSED_INPUT_SCALE {
            return Ok(0);
        }
        let values = p.mr.min(m).checked_mul(self.k).ok_or(Error::SizeOverflow)?;
        let bytes = values.checked_mul(F::Src::SIZE).and_then(|b| b.checked_add(F::Src::SIZE - 1));
        bytes.ok_or(Error::SizeOverflow)
    }

    /// [`Linear::prepare`] with the kernel chosen among `kernels` ([`Linear::kernel_from`]).
    pub fn prepare_with<'s>(
        &self,
        kernels: &[&'static Kernel<F>],
        cpu: &CpuFeatures,
        m: usize,
        x: &[F::Src],
        scratch: &'s mut [u8],
    ) -> Result<Prepared<'w, 's, F>> {
        self.prepare_on(self.kernel_from(kernels, cpu, m)?, cpu, m, x, scratch)
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
        kernels: &[&'static Kernel<F>],
        cpu: &CpuFeatures,
        m: usize,
        x: &[F::Src],
        out: &mut [F::Dst],
        scratch: &mut [u8],
    ) -> Result<()> {
        self.prepare_with(kernels, cpu, m, x, scratch)?.run(out)
    }

    /// `prepare` with `kernel`, which consumes these weights (`same_rhs`).
    fn prepare_on<'s>(
        &self,
        kernel: &'static Kernel<F>,
        cpu: &CpuFeatures,
        m: usize,
        x: &[F::Src],
        scratch: &'s mut [u8],
    ) -> Result<Prepared<'w, 's, F>> {
        let p = kernel.packing();
        let needed = m.checked_mul(self.k).ok_or(Error::SizeOverflow)?;
        if x.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: x.len(), needed });
        }
        let size = kernel.lhs_packed_size(m, self.k, self.bl)?;
        let total = size.checked_add(self.stage_size(&p, m)?).ok_or(Error::SizeOverflow)?;
        if scratch.len() < total {
            return Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: scratch.len(), needed: total });
        }
        let (lhs, stage) = scratch[..total].split_at_mut(size);
        match self.input_scale {
            None => F::quantize_pack(&p, m, self.k, self.bl, 0, &x[..needed], self.k, lhs)?,
            Some(scale) if F::FUSED_INPUT_SCALE => {
                F::quantize_pack_scaled(&p, m, self.k, self.bl, &x[..needed], self.k, scale, lhs)?
            }
            Some(scale) => self.pack_scaled(kernel, m, &x[..needed], scale, lhs, stage)?,
        }
        Ok(Prepared { layer: *self, kernel, cpu: *cpu, m, lhs, clamp: Clamp::NONE })
    }

    /// Packs the `m` dense rows `x` multiplied by `scale` (one per depth) for `kernel`, one tile
    /// of `mr` rows at a time through `stage` (at least [`Linear::stage_size`] bytes): each
    /// tile's products go to `stage`, then the family's packer packs them as rows `t..` of the
    /// call (the same bytes as one call over all the scaled rows).
    fn pack_scaled(
        &self,
        kernel: &'static Kernel<F>,
        m: usize,
        x: &[F::Src],
        scale: &[f32],
        lhs: &mut [u8],
        stage: &mut [u8],
    ) -> Result<()> {
        let (p, k) = (kernel.packing(), self.k);
        let rows = p.mr.min(m);
        // SAFETY: `F::Src` is f32, `half::f16` or `half::bf16` (`Element` is sealed): plain
        // values of 4 or 2 bytes for which every bit pattern is valid and that need no drop,
        // so viewing the aligned middle of the byte buffer as them is sound.
        let (_, stage, _) = unsafe { stage.align_to_mut::<F::Src>() };
        let given = stage.len();
        let stage = stage.get_mut(..rows * k).ok_or(Error::BufferTooShort {
            buffer: Buffer::LhsPacked,
            given,
            needed: rows * k,
        })?;
        for t in (0..m).step_by(p.mr) {
            let r = p.mr.min(m - t);
            for (dst, src) in stage.chunks_exact_mut(k).zip(x[t * k..(t + r) * k].chunks_exact(k)) {
                scale_row(src, scale, dst);
            }
            let at = kernel.lhs_packed_offset(t, k, self.bl)?;
            F::quantize_pack(&p, r, k, self.bl, t, &stage[..r * k], k, &mut lhs[at..]).map_err(|e| match e {
                // The index into the activations, not into the staging rows.
                Error::NonFinite { buffer: Buffer::Lhs, index } => {
                    Error::NonFinite { buffer: Buffer::Lhs, index: index + t * k }
                }
                e => e,
            })?;
        }
        Ok(())
    }

    /// `out = x W^T + b` for `m` rows: quantizes `x` (`m x k`, dense rows) into `scratch`
    /// ([`Linear::scratch_size`] bytes) and writes the `m x n` output `out` (dense rows).
    pub fn run(&self, cpu: &CpuFeatures, m: usize, x: &[F::Src], out: &mut [F::Dst], scratch: &mut [u8]) -> Result<()> {
        self.prepare(cpu, m, x, scratch)?.run(out)
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
        qsu2cxp::check_lut(&lut)?;
        self.lut = lut;
        Ok(self)
    }
}

impl<F: Operator> Linear<'_, F> {
    /// The RHS packing (the LHS side, `mr`, does not matter to an RHS packer).
    const RHS: Packing = F::RHS_PACKING;
}

/// A prepared call of a [`Linear`] layer: the activations are quantized and packed (in the
/// caller's scratch), the kernel is chosen; run it whole ([`Prepared::run`]) or in parts.
#[derive(Debug)]
pub struct Prepared<'w, 's, F: Operator> {
    layer: Linear<'w, F>,
    kernel: &'static Kernel<F>,
    cpu: CpuFeatures,
    m: usize,
    lhs: &'s [u8],
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
    pub fn kernel(&self) -> &'static Kernel<F> {
        self.kernel
    }

    /// Rows of the call.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Writes the whole `m x n` output (dense rows) into `out`.
    pub fn run(&self, out: &mut [F::Dst]) -> Result<()> {
        let (m, n) = (self.m, self.layer.n);
        let args = crate::MatmulArgs::new(m, n, self.layer.k)
            .with_block_len(self.layer.bl)
            .with_clamp(self.clamp)
            .with_lut(self.layer.lut);
        self.kernel.run(&self.cpu, self.lhs, self.layer.weights, out, &args)
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
        let (m, n) = (self.m, self.layer.n);
        let needed = m.checked_mul(n).ok_or(Error::SizeOverflow)?;
        if out.len() < needed {
            return Err(Error::BufferTooShort { buffer: Buffer::Dst, given: out.len(), needed });
        }
        let p = self.kernel.packing();
        let lhs_tile = F::lhs_tile_stride(self.layer.k, self.layer.bl, &p)?;
        let rhs_tile = F::rhs_tile_stride(self.layer.k, self.layer.bl, &p)?;
        let dst = out.as_mut_ptr();
        let mut v = heapless::Vec::new();
        for r in self.split(parts)? {
            // In bounds: `r` lies inside `m x n` and starts on tile boundaries (`m_step` is a
            // multiple of `mr`, `n_step` of `nr`), so these offsets are inside the LHS tiles
            // `prepare` packed, the weights and `out`.
            let args = UncheckedArgs {
                m: r.m,
                n: r.n,
                k: self.layer.k,
                bl: self.layer.bl,
                lhs_packed: self.lhs[r.m_idx / p.mr * lhs_tile..].as_ptr(),
                rhs_packed: self.layer.weights[r.n_idx / p.nr * rhs_tile..].as_ptr(),
                dst: dst.wrapping_add(r.m_idx * n + r.n_idx),
                dst_stride_row: F::Dst::SIZE * n,
                clamp_min: self.clamp.min(),
                clamp_max: self.clamp.max(),
                lut: self.layer.lut,
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
pub(crate) fn run_scoped<P: Send>(mut parts: heapless::Vec<P, MAX_PARTS>, run: fn(P)) {
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
    kernel: &'static Kernel<F>,
    rect: Rect,
    args: UncheckedArgs<F::Dst>,
    output: PhantomData<&'o mut [F::Dst]>,
}

// SAFETY: a `Part` is the only handle to its rectangle of the output (the parts of one call
// are disjoint and `Prepared::parts` borrows the output mutably for their lifetime) and reads
// only the packed buffers, which nothing writes while the parts live (shared borrows). Moving
// it to another thread therefore shares nothing mutable.
unsafe impl<F: Operator> Send for Part<'_, F> {}

impl<F: Operator> Part<'_, F> {
    /// The output rectangle this part writes.
    pub fn rect(&self) -> Rect {
        self.rect
    }

    /// Computes the rectangle.
    pub fn run(self) {
        // SAFETY: the kernel was selected for the call's `CpuFeatures`, which can only hold
        // features the CPU has; `m, n, k >= 1` (`split` makes no empty rectangle) and `bl`
        // passed the family's checks; the pointers were derived in `Prepared::parts` from
        // the packed activations, the packed weights and the output, at the rectangle's
        // tiles, which hold `ceil(m/mr)` / `ceil(n/nr)` whole tiles from there; the output
        // rectangle (rows `4n` bytes apart) lies inside `out`, is written by this part only,
        // and does not overlap the packed buffers (separate borrows); the clamp is valid.
        unsafe { self.kernel.run_unchecked(&self.args) }
    }
}

impl<F: Operator> core::fmt::Debug for Part<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Part").field("kernel", &self.kernel.name()).field("rect", &self.rect).finish()
    }
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
